"""docs/architecture.md walks one hover request and one didChange through the files: every file
it names exists and holds the function named for it, and no file comes twice in a leg: each leg
starts where a connection reads a frame and ends where the other connection writes one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "architecture.md"
SECTION = "## One request, one didChange"
#: A step: "N. `path` — `Name.function` …" (the file, then the function it runs).
STEP = re.compile(r"^\d+\. `([\w/]+\.py)` — `([\w.]+)`")
READ_END = "wire/connection.py"  # Connection._dispatch_body
WRITE_END = "wire/writes.py"  # the Writes half of the same Connection class


def legs() -> list[list[tuple[str, str]]]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    out: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    for line in text[start:end].splitlines():
        m = STEP.match(line)
        if m is None:
            continue
        if line.startswith("1. ") and current:
            out.append(current)
            current = []
        current.append((m.group(1), m.group(2)))
    out.append(current)
    return out


def test_the_walkthrough_has_three_legs() -> None:
    assert [len(leg) for leg in legs()] == [5, 4, 5]


def test_every_step_names_an_existing_file_and_its_function() -> None:
    for leg in legs():
        for path, name in leg:
            source = ROOT / "lspmux" / path
            assert source.is_file(), path
            function = name.rsplit(".", 1)[-1]
            code = source.read_text(encoding="utf-8")
            assert re.search(rf"^\s*(def|class) {re.escape(function)}\b", code, re.M), (path, name)


def test_each_file_once_per_leg() -> None:
    for leg in legs():
        files = [path for path, _ in leg]
        assert (files[0], files[-1]) == (READ_END, WRITE_END)
        assert len(files) == len(set(files)), files
