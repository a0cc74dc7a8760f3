"""`lspmux completion`: the bash script, run by a real bash, completes commands, options and
words; zsh and fish get the same table (no zsh or fish on the test machines to run them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tools import require_tool

ROOT = Path(__file__).resolve().parents[2]


def _script(shell: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "lspmux", "completion", shell],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return proc.stdout


def _complete(script: str, *words: str) -> list[str]:
    """What bash offers for the command line `lspmux WORDS…` (the last word being typed)."""
    bash = require_tool("bash")
    line = ["lspmux", *words]
    program = (
        script
        + f"COMP_WORDS=({' '.join(repr(w) for w in line)}); COMP_CWORD={len(line) - 1}\n"
        + '_lspmux; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    out = subprocess.run([bash, "--norc", "-c", program], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_bash_completes_commands_options_and_words() -> None:
    script = _script("bash")
    assert _complete(script, "inst") == ["install"]
    commands = _complete(script, "")
    assert "call-hierarchy" in commands and "call_hierarchy" not in commands  # kebab-case
    assert {"doctor", "setup", "completion", "proxy"} <= set(commands)
    assert _complete(script, "setup", "") == ["emacs", "helix", "nvim", "vscode", "zed"]
    assert _complete(script, "install", "--mi") == ["--missing"]
    assert "ruff" in _complete(script, "install", "r")
    assert _complete(script, "doctor", "--d") == ["--dir"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_get_the_same_commands(shell: str) -> None:
    script = _script(shell)
    for needle in ("call-hierarchy", "install", "missing", "nvim"):
        assert needle in script, needle
    assert "call_hierarchy" not in script
