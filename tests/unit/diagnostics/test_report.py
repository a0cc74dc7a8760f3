"""`lspmux diagnostics` output: rows sorted by severity then position, 1-based, filtered."""

from __future__ import annotations

from pathlib import Path

import pytest

from lspmux.diagnostics import report


def _d(line: int, col: int, severity: int, source: str, code: str | None, msg: str) -> dict:
    pos = {"line": line, "character": col}
    return {
        "range": {"start": pos, "end": pos},
        "severity": severity,
        "source": source,
        "code": code,
        "message": msg,
    }


def test_rows_are_sorted_one_based_and_filtered(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    results = {
        a: [
            _d(4, 0, 2, "ruff", "F401", "unused"),
            _d(9, 2, 1, "basedpyright", "reportX", "bad\nthing"),
            _d(0, 7, 2, "ruff", "E1", "first"),
            _d(1, 0, 4, "basedpyright", None, "hint"),
        ]
    }
    table = report.rows(results, cwd=tmp_path)
    assert [(r["line"], r["column"], r["severity"]) for r in table] == [
        (10, 3, "error"),
        (1, 8, "warning"),
        (5, 1, "warning"),
        (2, 1, "hint"),
    ]
    text = report.format_text(table, 1)
    lines = text.splitlines()
    assert lines[0] == "a.py:10:3 error basedpyright reportX bad thing"
    assert lines[3] == "a.py:2:1 hint basedpyright - hint"
    assert lines[-1] == "1 error, 2 warnings, 1 hint in 1 file"
    only = report.rows(results, min_severity=2, cwd=tmp_path)
    assert {r["severity"] for r in only} == {"error", "warning"}


def test_no_problems_summary() -> None:
    assert report.format_text([], 3) == "no problems in 3 files"


def test_expand_globs_and_reports_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert [p.name for p in report.expand(["*.py", "a.py"])] == ["a.py", "b.py"]
    with pytest.raises(report.ReportError, match="no such file"):
        report.expand(["c.py"])
    with pytest.raises(report.ReportError, match="matches no file"):
        report.expand(["*.rs"])
