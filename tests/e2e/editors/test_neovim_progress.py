"""Neovim 0.11 with docs/editors.md's snippet and lspmux as a user runs it (no `--log-file`, no
`LSPMUX_LOG`: the default levels), on the sample workspace with basedpyright and ruff (issue 22,
"Seeing what happens"):

- the progress Neovim receives names the server (`basedpyright`, not an empty title), and so does
  `vim.lsp.status()`, what a statusline shows;
- nothing lspmux logs at INFO or DEBUG reaches its stderr, which Neovim writes to lsp.log as
  `[ERROR]`; what the user should read arrives as `window/logMessage` instead, at its own level
  (a server ready: `[INFO]`).
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.editors import test_neovim
from tests.e2e.editors.harness import EditorHarness, shorten
from tests.e2e.editors.test_neovim import SKIP

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(bool(SKIP), reason=SKIP)]

#: The servers of the sample workspace, as lspmux names them.
SERVERS = ("basedpyright", "ruff")

#: One of lspmux's log lines (`2026-11-27 20:41:09,608 INFO lspmux.session: …`), as Neovim
#: logs a piece of lspmux's stderr: the level and the logger.
LSPMUX_LINE = re.compile(r"\d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) (lspmux\S*):")


def test_progress_names_the_server_and_stderr_holds_no_info(harness: EditorHarness) -> None:
    # lspmux as the user's PATH has it: no log file, no level set
    shim = harness.tmp / "bin" / "lspmux"
    shim.write_text(shim.read_text().split(" --log-file ")[0] + "\n")
    harness.env.pop("LSPMUX_LOG", None)
    harness.env.pop("RUST_LOG", None)
    # TestNeovim's own start (the snippet as init.lua, the driver), taken from its module: the
    # class imported here would run its tests a second time
    run = test_neovim.TestNeovim().run(harness, "progress", lsp_log_level="info")
    assert not run.data["timeouts"], run.explain()

    begins = [p["value"] for p in run.data["progress"] if p["value"].get("kind") == "begin"]
    assert begins, f"Neovim received no progress begin\n{run.explain()}"
    unnamed = [b for b in begins if not str(b.get("title", "")).startswith(SERVERS)]
    assert not unnamed, f"progress titled without its server: {unnamed}\n{run.explain()}"
    assert any(b["title"].startswith("basedpyright") for b in begins), run.explain()
    statuses = [p["status"] for p in run.data["progress"] if p["status"]]
    assert any("basedpyright" in s for s in statuses), (
        f"vim.lsp.status() never named basedpyright: {statuses}\n{run.explain()}"
    )

    log = run.log("neovim lsp.log")
    stderr = [line for line in log.splitlines() if '"lspmux"\t"stderr"' in line]
    quiet = [m.group(0) for line in stderr for m in LSPMUX_LINE.finditer(line)]
    quiet = [line for line in quiet if " INFO " in line or " DEBUG " in line]
    assert not quiet, (
        f"lspmux's INFO/DEBUG lines reached its stderr (Neovim's lsp.log shows them as "
        f"[ERROR]): {quiet}\n{shorten(chr(10).join(stderr))}"
    )
    ready = [
        line
        for line in log.splitlines()
        if "lspmux: basedpyright" in line and " ready for " in line
    ]
    assert len(ready) == 1 and ready[0].startswith("[INFO]"), (
        f"basedpyright's start not said once at info in lsp.log: {ready}\n{run.explain()}"
    )
