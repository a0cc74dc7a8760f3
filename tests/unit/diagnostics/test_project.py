"""The whole-workspace pieces that need no tool: which patterns mean the workspace, which
files a walk finds, and the text formats of `tsc` and `go vet` (neither is installed on the
test machine: the lines below are in the form their manuals give; basedpyright's, ruff's and
cargo's JSON are parsed from the real tools in tests/e2e/test_checked.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lspmux.diagnostics import project


@pytest.mark.parametrize(
    ("pattern", "whole"),
    [("*", True), ("**", True), ("./*", True), ("**/*", True), ("*.py", False), ("src/*", False)],
)
def test_workspace_patterns(pattern: str, whole: bool) -> None:
    assert project.is_workspace_pattern(pattern) is whole


def test_walk_skips_hidden_and_vendored_folders(tmp_path: Path) -> None:
    for name in ("a.py", "sub/b.py", ".venv/c.py", "node_modules/d.js", "sub/e.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    found = project.workspace_files(tmp_path, lambda p: p.suffix in (".py", ".js"))
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a.py", "sub/b.py"]


def test_tsc_lines(tmp_path: Path) -> None:
    out = (
        "src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"
        "Found 1 error in src/app.ts:3\n"
    )
    found = project.parse("tsc", out, "", tmp_path, "typescript-language-server")
    assert found is not None
    (d,) = found[tmp_path / "src/app.ts"]
    assert d["range"]["start"] == {"line": 2, "character": 6}
    assert (d["severity"], d["code"]) == (1, "TS2322")
    assert d["message"].startswith("Type 'string'")


def test_go_vet_lines(tmp_path: Path) -> None:
    err = "# example.com/m\n./main.go:9:2: fmt.Printf format %d has arg s of wrong type string\n"
    found = project.parse("gnu", "", err, tmp_path, "gopls")
    assert found is not None
    (d,) = found[tmp_path / "main.go"]
    assert d["range"]["start"] == {"line": 8, "character": 1}
    assert "wrong type" in d["message"] and d["source"] == "gopls"


def test_unparseable_json_is_no_result(tmp_path: Path) -> None:
    assert project.parse("pyright", "", "error: no config", tmp_path, "basedpyright") is None
    assert project.parse("cargo", '{"reason":"compiler-artifact"}\n', "", tmp_path, "ra") is None
