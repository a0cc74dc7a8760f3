"""When a file counts as checked (DESIGN 9), and the exit status that says it."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.diagnostics import coverage


def _s(name: str, state: str, role: str = "server", **extra: Any) -> dict[str, Any]:
    return {"name": name, "role": role, "state": state, **extra}


@pytest.mark.parametrize(
    ("sources", "checked", "unchecked", "notes"),
    [
        # every source reported: clean
        ([_s("basedpyright", "reported"), _s("ruff", "reported", "linter")], True, [], []),
        # an alternative server not installed beside one that reported: a note only
        ([_s("basedpyright", "reported"), _s("pyright", "missing")], True, [], ["pyright"]),
        # no server installed: the linter alone does not check a file that has servers
        (
            [_s("basedpyright", "missing"), _s("ruff", "reported", "linter")],
            False,
            ["basedpyright"],
            [],
        ),
        # a crash and a source still working keep the file from being clean
        ([_s("basedpyright", "reported"), _s("ruff", "failed", "linter")], False, ["ruff"], []),
        ([_s("basedpyright", "pending"), _s("ruff", "reported", "linter")], False, ["basedpyright"], []),
        # a file no server applies to: its linters decide
        ([_s("shellcheck", "reported", "linter"), _s("ghost", "missing", "linter")], True, [], ["ghost"]),
        ([_s("ghost", "missing", "linter")], False, ["ghost"], []),
        # a file nothing applies to, and an lspmux that did not say
        ([], False, ["-"], []),
        (None, False, ["lspmux"], []),
    ],
)  # fmt: skip
def test_verdict(
    sources: list[dict[str, Any]] | None, checked: bool, unchecked: list[str], notes: list[str]
) -> None:
    v = coverage.verdict(sources, timeout=60)
    assert v.checked is checked
    assert [r["source"] for r in v.unchecked] == unchecked
    assert [r["source"] for r in v.notes] == notes


def test_reasons_say_what_to_do() -> None:
    rows = coverage.verdict(
        [
            _s("basedpyright", "missing", install="pip install basedpyright"),
            _s("clangd", "failed", detail="exited with code 3", stderr=["a", "boom"]),
            _s("ruff", "pending", "linter"),
        ],
        timeout=7.5,
    ).unchecked
    reasons = {r["source"]: r["reason"] for r in rows}
    assert reasons["basedpyright"] == "not installed; install: pip install basedpyright"
    assert reasons["clangd"] == "crashed (exited with code 3)"
    assert reasons["ruff"] == "still analysing: no diagnostics for this text within 7.5s"
    lines = coverage.grouped_lines([{"path": "a.c", **r} for r in rows], note=False)
    assert lines[1:5] == [
        "a.c: not checked by clangd: crashed (exited with code 3)",
        "    its stderr ended with:",
        "    | a",
        "    | boom",
    ]


def test_one_line_per_source_and_reason_names_the_files() -> None:
    rows = [{"path": f"f{i}.md", "source": "marksman", "reason": "not installed"} for i in range(5)]
    assert coverage.grouped_lines(rows, note=False) == [
        "f0.md, f1.md, f2.md and 2 more: not checked by marksman: not installed"
    ]


@pytest.mark.parametrize(
    ("errors", "checked", "status"),
    [(False, True, 0), (True, True, 1), (True, False, 1), (False, False, 2)],
)
def test_exit_status(errors: bool, checked: bool, status: int) -> None:
    assert coverage.exit_status(errors, checked) == status
