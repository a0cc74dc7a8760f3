"""Neovim 0.11 with docs/editors.md's snippet, in a Python project whose servers are all
missing: the user sees one message (vim.notify, Neovim's window/showMessage handler) naming
them and the command that installs them, not a silent client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.editors.harness import NEOVIM_HEADING, doc_snippet
from tests.e2e.editors.test_neovim import SKIP

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(bool(SKIP), reason=SKIP)]

DRIVER = """
local shown = {}
vim.notify = function(msg, level) table.insert(shown, { message = msg, level = level }) end
vim.cmd.edit(vim.env.LSPMUX_TEST_FILE)
vim.wait(20000, function() return #shown > 0 end, 20)
-- a second copy of the message would come right after the first: give it time to show
vim.wait(2000, function() return #shown > 1 end, 20)
vim.fn.writefile({ vim.json.encode({ shown = shown, filetype = vim.bo.filetype }) },
  vim.env.LSPMUX_TEST_OUT)
vim.cmd('qall!')
"""


def test_a_missing_server_gives_one_visible_message(tmp_path: Path) -> None:
    from tests.e2e.editors.test_neovim import NVIM

    assert NVIM is not None
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("import os\n")
    (project / ".git").mkdir()
    bin_dir = tmp_path / "bin"  # lspmux, and no language server
    bin_dir.mkdir()
    script = bin_dir / "lspmux"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m lspmux "$@"\n')
    script.chmod(0o755)
    init = tmp_path / "init.lua"
    init.write_text(doc_snippet(NEOVIM_HEADING, "lua"))
    driver = tmp_path / "driver.lua"
    driver.write_text(DRIVER)
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "PYTHONPATH": str(ROOT),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "LSPMUX_TEST_FILE": str(project / "app.py"),
        "LSPMUX_TEST_OUT": str(out),
    }
    subprocess.run(
        [NVIM, "--headless", "--clean", "-u", str(init), "-c", f"luafile {driver}"],
        env=env,
        cwd=project,
        timeout=60,
        capture_output=True,
    )
    data = json.loads(out.read_text())
    assert data["filetype"] == "python"
    about = [s for s in data["shown"] if "lspmux install basedpyright" in s["message"]]
    assert len(about) == 1, data["shown"]
    assert "basedpyright, for app.py: `basedpyright-langserver` not found" in about[0]["message"]
    assert about[0]["level"] == 4  # vim.log.levels.ERROR: shown, not only logged
