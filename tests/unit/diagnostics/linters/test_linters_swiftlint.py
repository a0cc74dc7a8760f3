"""SwiftLint adapter, through recorded output only.

SwiftLint cannot be installed on this machine (it needs a Swift toolchain; there is no Debian,
PyPI or npm package), so these tests read the unmodified JSON that SwiftLint 0.57.0 printed
for tests/data/fixtures/swiftlint/{Small,Test}.swift (see tests/data/fixtures/README.md).
The exit-code test replays that recording from a real process exiting with 2, as SwiftLint
does when it finds an error-severity violation.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lspmux.config.model import LinterConfig
from lspmux.diagnostics.linters import LinterOutputError, Positions
from lspmux.diagnostics.linters.runner import run_linter
from lspmux.diagnostics.linters.swiftlint import parse

FIXTURES = Path(__file__).resolve().parents[3] / "data" / "fixtures" / "swiftlint"
CONFIG = LinterConfig(
    name="swiftlint",
    command=["swiftlint", "lint", "--quiet", "--reporter", "json", "${file}"],
    format="swiftlint",
    ok_exit_codes=(0, 2),
)


def summary(diags: list[dict[str, Any]], text: str) -> list[tuple[Any, ...]]:
    pos = Positions(text)
    out = []
    for d in diags:
        r = d["range"]
        a = pos.offset(r["start"]["line"], r["start"]["character"], "utf-16")
        b = pos.offset(r["end"]["line"], r["end"]["character"], "utf-16")
        rng = (r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])
        out.append((d["code"], rng, d["severity"], text[a:b]))
    return out


def test_small() -> None:
    text = (FIXTURES / "Small.swift").read_text()
    output = (FIXTURES / "small.json").read_text()
    diags = parse(output, path="/home/dev/project/Small.swift", text=text, config=CONFIG)
    assert summary(diags, text) == [
        ("force_cast", (1, 19, 1, 21), 1, "as"),
        ("trailing_semicolon", (1, 26, 1, 27), 2, ";"),
    ]
    assert diags[0]["message"] == "Force casts should be avoided"
    assert diags[0]["source"] == "swiftlint"
    assert diags[0]["codeDescription"] == {
        "href": "https://realm.github.io/SwiftLint/force_cast.html"
    }


def test_test_swift() -> None:
    text = (FIXTURES / "Test.swift").read_text()
    output = (FIXTURES / "test.json").read_text()
    diags = parse(output, path="/home/dev/project/Test.swift", text=text, config=CONFIG)
    assert summary(diags, text) == [
        ("colon", (3, 9, 3, 10), 2, " "),
        ("force_cast", (5, 18, 5, 20), 1, "as"),
        ("identifier_name", (3, 8, 3, 9), 1, "x"),
        ("identifier_name", (5, 12, 5, 13), 1, "y"),
        ("trailing_semicolon", (6, 16, 6, 17), 2, ";"),
        ("type_name", (2, 6, 2, 9), 1, "foo"),
    ]


def test_null_character_is_the_whole_line_and_columns_are_utf16() -> None:
    text = "let a = 1\n    let 😀x = y as! Int   \n"
    report = [
        {"file": "/p/A.swift", "line": 2, "character": None, "severity": "Warning",
         "rule_id": "line_length", "reason": "Line too long"},
        # SwiftLint counts UTF-16 units (NSString): "y" is at unit 14, 1-based 15.
        {"file": "/p/A.swift", "line": 2, "character": 15, "severity": "Error",
         "rule_id": "r", "reason": "m"},
        {"file": "/p/B.swift", "line": 1, "character": 1, "severity": "Error",
         "rule_id": "other_file", "reason": "not this file"},
    ]  # fmt: skip
    diags = parse(json.dumps(report), path="/p/A.swift", text=text, config=CONFIG)
    assert summary(diags, text) == [
        ("line_length", (1, 4, 1, 26), 2, "let 😀x = y as! Int   "),
        ("r", (1, 14, 1, 15), 1, "y"),
    ]


@pytest.mark.parametrize(
    "output", ["", "not json", '{"a": 1}', "[1]", '[{"file": 3}]', '[{"line": "two"}]']
)
def test_unreadable_output_raises(output: str) -> None:
    with pytest.raises(LinterOutputError, match=r"^swiftlint: "):
        parse(output, path="/p/A.swift", text="", config=CONFIG)


async def test_exit_code_2_with_output_is_a_normal_run(tmp_path: Path) -> None:
    """A real process replays the recording and exits 2, like SwiftLint on an error."""
    source = tmp_path / "Small.swift"
    source.write_text((FIXTURES / "Small.swift").read_text())
    recorded = (FIXTURES / "small.json").read_text().replace("/home/dev/project/Small.swift", "")
    script = (
        "import json, sys; rows = json.loads(sys.argv[1]); "
        "[r.update(file=sys.argv[2]) for r in rows]; print(json.dumps(rows)); sys.exit(2)"
    )
    for ok_codes in ((0, 2), (0, 1)):  # accepted whether or not 2 is listed as OK
        config = LinterConfig(
            name="swiftlint",
            command=[sys.executable, "-c", script, recorded, "${file}"],
            format="swiftlint",
            ok_exit_codes=ok_codes,
        )
        diags = await run_linter(config, path=str(source), text=source.read_text(), root=tmp_path)
        assert [d["code"] for d in diags] == ["force_cast", "trailing_semicolon"]
