"""What the agent tools write on disk, with a real server's WorkspaceEdit: basedpyright renames
through a module that is a symbolic link, and the link's target is edited, the link kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.agent_harness import run_verb
from tests.e2e.conftest import proxy_env
from tests.tools import require_tool

pytestmark = pytest.mark.e2e


def test_a_rename_through_a_linked_module_edits_its_target_and_keeps_the_link(
    tmp_path: Path,
) -> None:
    require_tool("basedpyright-langserver")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    real = root / "realmod.py"
    real.write_text('def greet() -> str:\n    return "hi"\n')
    link = root / "linkmod.py"
    link.symlink_to("realmod.py")
    main = root / "main.py"
    main.write_text("from linkmod import greet\n\nprint(greet())\n")

    out = run_verb(root, proxy_env(tmp_path), "rename", "main.py:3", "--symbol", "greet",
                   "welcome", "--apply", "--private")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "linkmod.py" in out.stdout  # basedpyright's edit names the link, not its target
    assert link.is_symlink() and link.resolve() == real
    assert real.read_text() == 'def welcome() -> str:\n    return "hi"\n'
    assert main.read_text() == "from linkmod import welcome\n\nprint(welcome())\n"
