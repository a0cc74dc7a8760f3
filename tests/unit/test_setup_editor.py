"""`lspmux setup EDITOR` prints the snippet docs/editors.md has (the one the editor tests run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.editors.harness import DOC, EGLOT_HEADING, NEOVIM_HEADING, fenced_block

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("editor", "heading", "lang", "where"),
    [
        ("nvim", NEOVIM_HEADING, "lua", "init.lua"),
        ("emacs", EGLOT_HEADING, "elisp", "init.el"),
        ("helix", "Helix", "toml", "languages.toml"),
        ("vscode", "VS Code", "json", "settings.json"),
        ("zed", "Zed", "json", "settings.json"),
    ],
)
def test_setup_prints_the_documented_snippet(
    editor: str, heading: str, lang: str, where: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lspmux", "setup", editor],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == fenced_block(DOC.read_text(), heading, lang)
    assert where in proc.stderr  # where it goes: on stderr, so stdout can be appended to it


def test_help_names_the_docs_and_the_first_steps() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lspmux", "--help"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert f"docs: {ROOT / 'docs'} (editors.md" in proc.stdout
    for step in ("lspmux doctor", "lspmux install --missing", "lspmux setup nvim"):
        assert step in proc.stdout
