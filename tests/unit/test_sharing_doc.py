"""docs/sharing.md's table against the Rust lspmux names real tests: every row that says
"same" names at least one, and every test named exists in the file its prefix stands for."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "sharing.md"

#: The prefixes the table uses for test files.
FILES = {
    "rust_cli": "tests/e2e/daemon/test_rust_cli.py",
    "rust_keys": "tests/unit/config/test_rust_keys.py",
    "rust_compat": "tests/e2e/test_rust_compat.py",
    "sharing": "tests/e2e/test_sharing.py",
}


def _rows() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("### Drop-in for the Rust `lspmux`")
    section = text[start : text.index("\n## ", start)]
    rows = []
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith(("| Rust lspmux |", "| key |")):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
            rows.append(cells)
    return rows


def test_every_same_row_names_a_test_that_exists() -> None:
    rows = _rows()
    assert len(rows) >= 20, "the drop-in table went missing"
    for row in rows:
        what, tests = row[1], row[-1]
        named = re.findall(r"`(\w+)::(test_\w+)`|`(tests/[\w/]+\.py)::(test_\w+)`", tests)
        if what.startswith("same"):
            assert named, f"a 'same' row names no test: {row[0]}"
        for alias, name, path, path_name in named:
            file = ROOT / (FILES[alias] if alias else path)
            test = name or path_name
            assert re.search(rf"^(async )?def {test}\(", file.read_text(), re.M), (
                f"{row[0]}: {file.relative_to(ROOT)} has no {test}"
            )
