"""What a fresh `lspmux <verb>` process imports on its way to a warm daemon's answer: the shim,
the option readers and the verb's formatter; never argparse, typing, asyncio, the session or
the agent's LSP client (docs/benchmarks.md "Start-up" measures the time it takes)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from lspmux.daemon.server import Daemon

ROOT = Path(__file__).resolve().parents[3]

#: Modules (and packages) a verb's start path must not load.
HEAVY = (
    "argparse",
    "typing",
    "asyncio",
    "platformdirs",
    "pathlib",
    "lsprotocol",
    "attrs",
    "logging",
    "subprocess",
    "lspmux.session",
    "lspmux.config",
    "lspmux.agent.lsp",
    "lspmux.agent.tools",
    "lspmux.backends",
    "lspmux.proxy",
)


async def run_verb(entry: str, words: list[str], runtime: Path, cwd: Path) -> tuple[int, str, str]:
    """Run `words` through an entry point in a fresh interpreter; (exit code, its output, the
    modules it loaded) — the list goes to a file, stdout is the verb's."""
    listing = cwd / "modules.txt"
    run = (
        "runpy.run_module('lspmux', run_name='__main__')"
        if entry == "-m lspmux"
        else "from lspmux.cli import main; sys.exit(main())"  # the console script's
    )
    # -S: no site, so no editable install's import hook (which loads pathlib …): the path must
    # need nothing beyond the standard library, and what it loads is lspmux's doing
    probe = (
        "import atexit, sys, runpy\n"
        "before = set(sys.modules)\n"
        f"atexit.register(lambda: open({str(listing)!r}, 'w').write("
        "' '.join(set(sys.modules) - before)))\n"
        f"sys.argv = ['lspmux', *{words!r}]\n"
        f"{run}\n"
    )
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(cwd / "config"),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-S", "-c", probe, cwd=cwd, env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    modules = listing.read_text() if listing.exists() else ""
    return proc.returncode, out.decode() + err.decode(), modules


@pytest.mark.parametrize("entry", ["-m lspmux", "lspmux.cli:main"])
@pytest.mark.parametrize(
    ("words", "answered"),
    [
        (["status"], "lspmux daemon"),
        (["status", "--json"], '"pid"'),
        # a file no server takes: the daemon's hosted tools answer at once, with an error
        (["hover", "notes.txt:1:1"], "no language server is configured"),
        (["definition", "notes.txt:1:1", "--json"], "no language server is configured"),
        (
            ["references", "notes.txt:1:1", "--no-include-declaration", "--limit", "3"],
            "no language server is configured",
        ),
    ],
)
async def test_a_verb_reaches_the_daemon_importing_nothing_heavy(
    hosting: Daemon, tmp_path: Path, entry: str, words: list[str], answered: str
) -> None:
    """The daemon is found as a user's verb finds it: on the default socket of
    $XDG_RUNTIME_DIR (no --connect, no LSPMUX_ADDRESS; the user file's `connect` is looked
    for)."""
    (tmp_path / "notes.txt").write_text("hello\n")
    runtime = Path(hosting.address.path).parent.parent
    code, output, modules = await run_verb(entry, words, runtime, tmp_path)
    assert answered in output, output  # the daemon answered: the path measured is the fast one
    assert code == (0 if words[0] == "status" else 1), output
    loaded = modules.split()
    assert "lspmux.daemon.dial" in loaded, output
    heavy = sorted(m for m in loaded if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY)))
    assert not heavy, f"`lspmux {' '.join(words)}` ({entry}) imported {heavy}"
