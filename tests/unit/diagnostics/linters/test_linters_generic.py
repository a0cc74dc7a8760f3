"""Generic json/regex mappings: the real shellcheck (json1 on stdin, gcc through a regex), and
table tests of the mappings' rules (0-based positions, dotted fields, missing columns/ends)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lspmux.config.model import LinterConfig
from lspmux.diagnostics.linters import LinterOutputError, Positions
from lspmux.diagnostics.linters.generic import parse_output
from lspmux.diagnostics.linters.runner import run_linter

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "linters" / "findings.sh"

needs_shellcheck = pytest.mark.skipif(
    shutil.which("shellcheck") is None,
    reason="shellcheck is not installed (scripts/setup-tests installs it with apt-get)",
)

#: shellcheck's json1 format through the generic JSON mapping (docs/linters.md shows the TOML).
SHELLCHECK_JSON = LinterConfig(
    name="shellcheck",
    command=["shellcheck", "--format=json1", "-"],
    input="stdin",
    format="json",
    json={
        "items": "comments",
        "line": "line",
        "column": "column",
        "end_line": "endLine",
        "end_column": "endColumn",
        "severity": "level",
        "message": "message",
        "code": "code",
        "severity_map": {
            "error": "error",
            "warning": "warning",
            "info": "information",
            "style": "hint",
        },
    },
    options={"code_prefix": "SC", "code_url": "https://www.shellcheck.net/wiki/{code}"},
)
#: shellcheck's gcc format through a regex, with the file group.
GCC_REGEX = (
    r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): (?P<severity>\w+): "
    r"(?P<message>.*) \[(?P<code>SC\d+)\]$"
)
SHELLCHECK_GCC = LinterConfig(
    name="shellcheck-gcc",
    command=["shellcheck", "--format=gcc", "${file}"],
    input="file",
    format="regex",
    regex=GCC_REGEX,
    source="shellcheck",
)


def summary(diags: list[dict[str, Any]], text: str) -> list[tuple[Any, ...]]:
    pos = Positions(text)
    out = []
    for d in diags:
        r = d["range"]
        a = pos.offset(r["start"]["line"], r["start"]["character"], "utf-16")
        b = pos.offset(r["end"]["line"], r["end"]["character"], "utf-16")
        rng = (r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])
        out.append((d.get("code"), rng, d["severity"], text[a:b]))
    return out


@needs_shellcheck
async def test_real_shellcheck_json1_on_stdin(tmp_path: Path) -> None:
    # The buffer has one more line than the file on disk: only stdin can explain line 6.
    text = SAMPLE.read_text() + "echo $name\n"
    diags = await run_linter(SHELLCHECK_JSON, path=str(SAMPLE), text=text, root=tmp_path)
    assert summary(diags, text) == [
        # After "😀" (1 code point for shellcheck, 2 UTF-16 units for LSP).
        ("SC2086", (3, 10, 3, 15), 3, "$name"),
        ("SC2046", (4, 3, 4, 9), 2, "$(pwd)"),
        ("SC2086", (5, 5, 5, 10), 3, "$name"),
    ]
    assert diags[0]["message"] == "Double quote to prevent globbing and word splitting."
    assert diags[0]["source"] == "shellcheck"
    assert diags[0]["codeDescription"] == {"href": "https://www.shellcheck.net/wiki/SC2086"}


@needs_shellcheck
async def test_real_shellcheck_gcc_through_a_regex_on_a_file_named_dash_rf(
    tmp_path: Path,
) -> None:
    """A file named `-rf.sh` reaches the tool as a path, never as options; the tool prints the
    temporary copy's path, which the regex's file group still recognises."""
    target = tmp_path / "-rf.sh"
    target.write_text("#!/bin/sh\n")  # on disk: nothing to report
    text = SAMPLE.read_text()
    diags = await run_linter(SHELLCHECK_GCC, path=str(target), text=text, root=tmp_path)
    assert summary(diags, text) == [
        ("SC2086", (3, 10, 3, 11), 3, "$"),  # no end column: one character
        ("SC2046", (4, 3, 4, 4), 2, "$"),
    ]
    assert {d["source"] for d in diags} == {"shellcheck"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["-rf.sh"]


REGEX_CONFIG = LinterConfig(
    name="mylint",
    command=["mylint"],
    format="regex",
    regex=(
        r"^(?P<file>[^:\n]+):(?P<line>\d+)(?::(?P<column>\d+))?(?:-(?P<end_column>\d+))?: "
        r"(?P<severity>[A-Z])(?P<code>\d+) (?P<message>.+)$"
    ),
    json={"severity_map": {"E": "error", "W": "warning", "C": "hint"}},
)
REGEX_TEXT = "first line\n  value = compute(x)\nlast\n"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("src/a.py:2:3-8: E100 bad name", [("100", (1, 2, 1, 7), 1, "value")]),
        ("src/a.py:2:3: W200 no end", [("200", (1, 2, 1, 7), 2, "value")]),  # word at start
        ("src/a.py:2:8: W200 no end", [("200", (1, 7, 1, 8), 2, " ")]),  # not a word: 1 char
        ("src/a.py:2: C300 no column", [("300", (1, 2, 1, 20), 4, "value = compute(x)")]),
        ("other.py:2:3: E100 elsewhere", []),
        ("noise\nsrc/a.py:1:1: E1 a\nmore noise\nsrc/a.py:3:1: W2 b\n", [
            ("1", (0, 0, 0, 5), 1, "first"),
            ("2", (2, 0, 2, 4), 2, "last"),
        ]),
    ],
)  # fmt: skip
def test_regex_mapping(output: str, expected: list[Any]) -> None:
    diags = parse_output(REGEX_CONFIG, output, path="/w/src/a.py", text=REGEX_TEXT)
    assert summary(diags, REGEX_TEXT) == expected
    assert all(d["source"] == "mylint" for d in diags)


def test_regex_errors() -> None:
    bad = LinterConfig(name="t", command=["t"], format="regex", regex="(unclosed")
    with pytest.raises(LinterOutputError, match="invalid regex"):
        parse_output(bad, "x", path="/a", text="")
    no_line = LinterConfig(name="t", command=["t"], format="regex", regex="(?P<message>.*)")
    with pytest.raises(LinterOutputError, match="no named group `line`"):
        parse_output(no_line, "x", path="/a", text="")


JSON_TEXT = "import os\nx = 1  # é😀 y\n"
ZERO_BASED = LinterConfig(
    name="zl",
    command=["zl"],
    format="json",
    one_based=False,
    json={
        "items": "result.problems",
        "line": "pos.l",
        "column": "pos.c",
        "end_line": "end.l",
        "end_column": "end.c",
        "severity": "sev",
        "message": "msg",
        "code": "rule",
        "severity_map": {"E": "error", "W": "warning"},
    },
)


def test_json_mapping_with_zero_based_positions() -> None:
    output = {
        "result": {
            "problems": [
                {"pos": {"l": 0, "c": 7}, "end": {"l": 0, "c": 9}, "sev": "W", "msg": "unused",
                 "rule": "F401"},
                {"pos": {"l": 1, "c": 12}, "sev": "E", "msg": "after emoji", "rule": 7},
                {"pos": {"l": 1}, "sev": "X", "msg": "whole line"},
                {"msg": "file level"},
            ]
        }
    }  # fmt: skip
    diags = parse_output(ZERO_BASED, json.dumps(output), path="/a.py", text=JSON_TEXT)
    # Columns count code points: column 12 of line 1 is "y", UTF-16 character 13.
    assert summary(diags, JSON_TEXT) == [
        ("F401", (0, 7, 0, 9), 2, "os"),
        ("7", (1, 13, 1, 14), 1, "y"),
        (None, (1, 0, 1, 14), 2, "x = 1  # é😀 y"),
        (None, (0, 0, 0, 9), 2, "import os"),
    ]


def test_json_defaults_top_level_list_and_json_lines() -> None:
    items = [
        {"line": 1, "column": 8, "endLine": 1, "endColumn": 10, "severity": "warning",
         "message": "m1", "code": "A"},
        {"line": 2, "column": 1, "severity": "style", "message": "m2", "code": "B"},
    ]  # fmt: skip
    config = LinterConfig(name="t", command=["t"], format="json")
    expected = [("A", (0, 7, 0, 9), 2, "os"), ("B", (1, 0, 1, 1), 4, "x")]
    as_list = parse_output(config, json.dumps(items), path="/a.py", text=JSON_TEXT)
    assert summary(as_list, JSON_TEXT) == expected
    as_lines = "\n".join(json.dumps(i) for i in items) + "\n"
    assert (
        summary(parse_output(config, as_lines, path="/a.py", text=JSON_TEXT), JSON_TEXT) == expected
    )


def test_json_column_unit_bytes_and_file_field() -> None:
    config = LinterConfig(
        name="t",
        command=["t"],
        format="json",
        options={"column_unit": "utf-8", "file": "path"},
    )
    # "y" is at UTF-8 byte 16 of line 2 (1-based 17): é is 2 bytes, 😀 is 4.
    items = [
        {"path": "a.py", "line": 2, "column": 17, "message": "y", "code": "C"},
        {"path": "b.py", "line": 1, "column": 1, "message": "other file", "code": "C"},
    ]
    diags = parse_output(config, json.dumps(items), path="/w/a.py", text=JSON_TEXT)
    assert summary(diags, JSON_TEXT) == [("C", (1, 13, 1, 14), 2, "y")]


@pytest.mark.parametrize(
    ("config", "output", "match"),
    [
        (SHELLCHECK_JSON, "", "no JSON on stdout"),
        (SHELLCHECK_JSON, "garbage {", "stdout is not JSON"),
        (SHELLCHECK_JSON, '{"comment": []}', "no list of findings at 'comments'"),
        (SHELLCHECK_JSON, '{"comments": [1]}', "not a JSON object"),
        (SHELLCHECK_JSON, '{"comments": [{"line": "x"}]}', "line 'x' is not a number"),
        (LinterConfig(name="t", command=["t"], format="xml"), "<a/>", "unknown format 'xml'"),
        (
            LinterConfig(name="t", command=["t"], options={"code_url": "https://x/{rule}"}),
            "[]",
            "may only use the placeholder {code}",
        ),
        (
            LinterConfig(name="t", command=["t"], options={"column_unit": "lines"}),
            "[]",
            "`column_unit` 'lines' is not one of",
        ),
    ],
)
def test_unreadable_output_raises(config: LinterConfig, output: str, match: str) -> None:
    with pytest.raises(LinterOutputError, match=match):
        parse_output(config, output, path="/a.sh", text="echo\n")
