"""Biome adapter: both JSON schemas through recorded output, then the real Biome 2.6.8.

The recordings (tests/data/fixtures/biome/, see its README) are the unmodified stdout of
`biome lint|check --reporter=json test.js` with Biome 2.6.8 (new schema: 1-based line/column)
and 2.3.11 (old schema: UTF-8 byte spans). The last tests run the real `biome` from
.tools/node_modules/.bin (installed by scripts/setup-tests) through `run_linter`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lspmux.config.model import LinterConfig
from lspmux.diagnostics.linters import LinterFailure, LinterOutputError, Positions
from lspmux.diagnostics.linters.biome import parse, rule_url
from lspmux.diagnostics.linters.runner import run_linter

FIXTURES = Path(__file__).resolve().parents[3] / "data" / "fixtures" / "biome"
TEST_JS = (FIXTURES / "test.js").read_text()
PATH = "/home/dev/project/test.js"
#: The command of the built-in biome definition.
COMMAND = ["biome", "lint", "--reporter=json", "${file}"]
CONFIG = LinterConfig(name="biome", command=COMMAND, format="biome")

needs_biome = pytest.mark.skipif(
    shutil.which("biome") is None,
    reason="biome is not installed (scripts/setup-tests installs it into .tools/)",
)

# (code, range as (line, char, end line, end char), severity, the text the range covers)
LINT = [
    ("lint/style/useConst", (4, 0, 4, 3), 2, "let"),
    ("lint/correctness/noUnusedVariables", (4, 4, 4, 10), 2, "unused"),
    ("lint/suspicious/noDoubleEquals", (1, 6, 1, 8), 1, "=="),
    ("lint/suspicious/noDebugger", (2, 2, 2, 11), 1, "debugger;"),
]
FORMAT = ("format", (0, 0, 0, 10), 3, "var x = 1;")


def summary(diags: list[dict[str, Any]], text: str = TEST_JS) -> list[tuple[Any, ...]]:
    pos = Positions(text)
    out = []
    for d in diags:
        r = d["range"]
        a = pos.offset(r["start"]["line"], r["start"]["character"], "utf-16")
        b = pos.offset(r["end"]["line"], r["end"]["character"], "utf-16")
        rng = (r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])
        out.append((d["code"], rng, d["severity"], text[a:b]))
    return out


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("lint-2.6.8.json", LINT),
        ("check-2.6.8.json", [*LINT, FORMAT]),
        ("lint-2.3.11.json", LINT),  # byte spans, e.g. [39, 42] → "let" on line 5
        ("check-2.3.11.json", [*LINT, FORMAT]),
    ],
)
def test_both_schemas_give_the_same_exact_ranges(fixture: str, expected: list[Any]) -> None:
    diags = parse((FIXTURES / fixture).read_text(), path=PATH, text=TEST_JS, config=CONFIG)
    assert summary(diags) == expected
    assert all(d["source"] == "biome" for d in diags)
    by_code = {d["code"]: d for d in diags}
    assert by_code["lint/suspicious/noDoubleEquals"]["codeDescription"] == {
        "href": "https://biomejs.dev/linter/rules/no-double-equals"
    }
    assert "codeDescription" not in by_code.get("format", {})
    assert by_code["lint/style/useConst"]["message"].startswith(
        "This let declares a variable that is only assigned once."
    )
    # Advice is kept: appended to the message after a newline.
    assert by_code["lint/style/useConst"]["message"].endswith("\nSafe fix: Use const instead.")
    if "format" in by_code:
        assert by_code["format"]["message"] == "File is not formatted (biome format)"


def test_format_diagnostic_can_be_turned_off() -> None:
    config = LinterConfig(
        name="biome", command=COMMAND, format="biome", options={"format_diagnostic": False}
    )
    for fixture in ("check-2.6.8.json", "check-2.3.11.json"):
        diags = parse((FIXTURES / fixture).read_text(), path=PATH, text=TEST_JS, config=config)
        assert [d["code"] for d in diags if d["code"] == "format"] == []
        assert len(diags) == 4


def test_byte_spans_are_converted_on_non_ascii_text() -> None:
    text = 'const s = "é😀"; debugger;\n'
    start = len('const s = "é😀"; '.encode())
    report = {
        "diagnostics": [
            {
                "category": "lint/suspicious/noDebugger",
                "severity": "error",
                "description": "debugger",
                "message": [{"elements": [], "content": "This is "}, {"content": "debugger"}],
                "location": {"path": {"file": "a.js"}, "span": [start, start + 9]},
            }
        ]
    }
    [d] = parse(json.dumps(report), path="/x/a.js", text=text, config=CONFIG)
    # "é😀" is 6 UTF-8 bytes but 3 UTF-16 units: debugger starts at byte 20, character 17.
    assert start == 20
    assert d["range"] == {
        "start": {"line": 0, "character": 17},
        "end": {"line": 0, "character": 26},
    }
    assert d["message"] == "This is debugger"


def test_only_the_linted_file_counts() -> None:
    report = json.loads((FIXTURES / "lint-2.6.8.json").read_text())
    report["diagnostics"][0]["location"]["path"] = "other/test.js"
    report["diagnostics"][1]["location"]["path"] = "src/lspmux-1a2b3c4d-test.js"
    report["diagnostics"][2]["location"]["path"] = "/elsewhere/test.js"
    diags = parse(
        json.dumps(report), path="/w/src/lspmux-1a2b3c4d-test.js", text=TEST_JS, config=CONFIG
    )
    assert [d["code"] for d in diags] == ["lint/correctness/noUnusedVariables"]


@pytest.mark.parametrize(
    "output",
    ["", "Segmentation fault", '{"summary": {}}', "[1, 2]", '{"diagnostics": [3]}'],
)
def test_unreadable_output_raises(output: str) -> None:
    with pytest.raises(LinterOutputError, match=r"^biome: "):
        parse(output, path=PATH, text=TEST_JS, config=CONFIG)


def test_tool_errors_are_failures_not_diagnostics() -> None:
    report = {
        "diagnostics": [
            {
                "severity": "error",
                "message": "Cannot read file.",
                "category": "fs/cantRead",
                "location": {"path": "test.js", "start": {"line": 0, "column": 0}},
            }
        ]
    }
    with pytest.raises(LinterOutputError, match="fs/cantRead: Cannot read file"):
        parse(json.dumps(report), path=PATH, text=TEST_JS, config=CONFIG)


def test_rule_url() -> None:
    assert rule_url("lint/style/useConst") == "https://biomejs.dev/linter/rules/use-const"
    assert rule_url("lint/a11y/useAltText") == "https://biomejs.dev/linter/rules/use-alt-text"
    assert rule_url("parse") is None


# -- the real Biome ---------------------------------------------------------------------------

UNSAVED = 'const ok = 1;\nif (ok === 1) {\n  console.log("é");\n}\n/*😀*/ debugger;\n'


@needs_biome
async def test_real_biome_lints_the_buffer_not_the_disk(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    on_disk = src / "test.js"
    shutil.copy(FIXTURES / "test.js", on_disk)  # on disk: ==, debugger, let (the fixture)
    before = sorted(p.name for p in src.iterdir())
    diags = await run_linter(CONFIG, path=str(on_disk), text=UNSAVED, root=tmp_path)
    # Only what the unsaved text has: one debugger statement after an emoji (Biome says column
    # 7, counting code points; that is UTF-16 character 7 because the emoji takes 2 units).
    assert summary(diags, UNSAVED) == [
        ("lint/suspicious/noDebugger", (4, 7, 4, 16), 1, "debugger;"),
    ]
    assert sorted(p.name for p in src.iterdir()) == before  # the temporary copy is gone
    assert on_disk.read_text() == TEST_JS


@needs_biome
async def test_real_biome_check_reports_formatting(tmp_path: Path) -> None:
    target = tmp_path / "test.js"
    shutil.copy(FIXTURES / "test.js", target)
    config = LinterConfig(
        name="biome", command=["biome", "check", "--reporter=json", "${file}"], format="biome"
    )
    diags = await run_linter(config, path=str(target), text=TEST_JS, root=tmp_path)
    assert summary(diags) == [*LINT, FORMAT]


@needs_biome
async def test_real_biome_with_a_config_that_skips_dotfiles(tmp_path: Path) -> None:
    """The temporary copy is not a dotfile: a project ignoring hidden files still gets linted
    (with a `.lspmux-…` name Biome would print no diagnostics and exit 1)."""
    (tmp_path / "biome.json").write_text('{"files": {"includes": ["**", "!**/.*"]}}')
    target = tmp_path / "test.js"
    target.write_text("")
    diags = await run_linter(CONFIG, path=str(target), text=TEST_JS, root=tmp_path)
    assert [d["code"] for d in diags] == [c for c, *_ in LINT]


@needs_biome
async def test_real_biome_with_a_broken_config_fails_loudly(tmp_path: Path) -> None:
    (tmp_path / "biome.json").write_text('{"linter": ')
    target = tmp_path / "test.js"
    with pytest.raises(LinterFailure, match=r"biome exited with code 1 .*printed nothing"):
        await run_linter(CONFIG, path=str(target), text=TEST_JS, root=tmp_path)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("lspmux-")] == []
