"""What a fresh `lspmux <verb>` process imports on its way to a warm daemon's answer: the shim,
the option readers and the verb's formatter; never argparse, typing, asyncio, the session or
the agent's LSP client (docs/benchmarks.md "Start-up" measures the time it takes)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import sysconfig
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
    "lspmux.remote",  # `--remote …` is read by argparse, and relayed only then
)


def verb_env(runtime: Path, cwd: Path, **environ: str) -> dict[str, str]:
    """A verb's environment: a user's with the daemon's runtime folder `runtime`, at home in
    `cwd`."""
    # the installed packages on the path (orjson, uvloop: `lspmux diagnostics` runs an event
    # loop), but not as a site directory: its .pth files (the editable install's hook) stay unrun
    packages = sysconfig.get_paths()["purelib"]
    return {
        "PYTHONPATH": os.pathsep.join((str(ROOT), packages)),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(cwd / "config"),
        **environ,
    }


async def run_verb(
    entry: str, words: list[str], runtime: Path, cwd: Path, **environ: str
) -> tuple[int, str, str]:
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
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-S", "-c", probe, cwd=cwd, env=verb_env(runtime, cwd, **environ),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    modules = listing.read_text() if listing.exists() else ""
    return proc.returncode, out.decode() + err.decode(), modules


#: What the daemon's one-request commands do not load either: what the other commands share
#: (logging options, the event loop).
ONE_REQUEST_SKIPS = ("lspmux.cli_common",)

#: What `lspmux diagnostics` may load besides (it waits on several events with timeouts: the
#: event loop, and what asyncio itself imports; the report's paths): never argparse, the
#: configuration, the session, a backend, lsprotocol — nor a second process (`lspmux client`).
DIAGNOSTICS_NEEDS = ("asyncio", "typing", "logging", "subprocess", "pathlib")


@pytest.mark.parametrize("entry", ["-m lspmux", "lspmux.cli:main"])
@pytest.mark.parametrize(
    ("words", "answered", "exit_code"),
    [
        (["status"], "lspmux daemon", 0),
        (["status", "--json"], '"pid"', 0),
        # a file no server takes: the daemon's hosted tools answer at once, with an error
        (["hover", "notes.txt:1:1"], "no language server is configured", 1),
        (["definition", "notes.txt:1:1", "--json"], "no language server is configured", 1),
        (
            ["references", "notes.txt:1:1", "--no-include-declaration", "--limit", "3"],
            "no language server is configured",
            1,
        ),
        # the daemon's own Locate answers a find in the text (no server needed)
        (["locate", "notes.txt@hel<|>lo"], "notes.txt:2:4", 0),
        (["locate", "notes.txt@hel<|>lo", "--range", "--json"], '"range"', 0),
        (["locate", "notes.txt@nowhere"], "nowhere", 1),
        (["reload", "--all"], "no instance to reload", 0),
        (["reload", "--restart", "."], "no instance", 1),
        (["diagnostics", "notes.txt", "--json", "--timeout", "5"], '"files": 1', 2),
    ],
)
async def test_a_verb_reaches_the_daemon_importing_nothing_heavy(
    hosting: Daemon, tmp_path: Path, entry: str, words: list[str], answered: str, exit_code: int
) -> None:
    """The daemon is found as a user's verb finds it: on the default socket of
    $XDG_RUNTIME_DIR (no --connect, no LSPMUX_ADDRESS; the user file's `connect` is looked
    for)."""
    (tmp_path / "notes.txt").write_text("# notes\nhello\n")
    runtime = Path(hosting.address.path).parent.parent
    code, output, modules = await run_verb(entry, words, runtime, tmp_path)
    assert answered in output, output  # the daemon answered: the path measured is the fast one
    assert code == exit_code, output
    loaded = modules.split()
    assert "lspmux.daemon.address" in loaded, output
    banned = [h for h in HEAVY if words[0] != "diagnostics" or h not in DIAGNOSTICS_NEEDS]
    banned += ONE_REQUEST_SKIPS if words[0] in ("status", "reload", "locate") else ()
    prefixes = tuple(h + "." for h in banned)
    heavy = sorted(m for m in loaded if m in banned or m.startswith(prefixes))
    assert not heavy, f"`lspmux {' '.join(words)}` ({entry}) imported {heavy}"


@pytest.mark.parametrize(
    "words",
    [
        ["locate", "notes.txt@hello", "--config", "more.toml"],
        ["diagnostics", "notes.txt", "--no-daemon"],
        ["hover", "notes.txt:1:1", "--private"],
    ],
)
async def test_a_run_on_an_event_loop_takes_the_one_chosen(
    tmp_path: Path, words: list[str]
) -> None:
    """Where a verb runs an event loop (a private proxy), it is the one $LSPMUX_EVENT_LOOP
    names (`cli_common.run_loop`): a name lspmux does not know is said, and nothing runs."""
    (tmp_path / "notes.txt").write_text("hello\n")
    environ = {"LSPMUX_EVENT_LOOP": "tokio"}
    code, output, _ = await run_verb(
        "lspmux.cli:main", words, tmp_path / "run", tmp_path, **environ
    )
    assert code == 2, output
    assert "LSPMUX_EVENT_LOOP='tokio' is not an event loop lspmux knows" in output, output


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_diagnostics_through_the_daemon_run_on_the_loop_chosen(
    hosting: Daemon, tmp_path: Path, loop: str
) -> None:
    """`lspmux diagnostics` waits on the daemon's messages in its own event loop: the one
    $LSPMUX_EVENT_LOOP names (uvloop is loaded for it, and only then)."""
    (tmp_path / "notes.txt").write_text("hello\n")
    runtime = Path(hosting.address.path).parent.parent
    words = ["diagnostics", "notes.txt", "--timeout", "5"]
    environ = {"LSPMUX_EVENT_LOOP": loop}
    code, output, modules = await run_verb("lspmux.cli:main", words, runtime, tmp_path, **environ)
    assert "NOT CHECKED: 1 of 1 file" in output, output
    assert code == 2, output  # no source for a .txt file: not checked
    assert ("uvloop" in modules.split()) == (loop == "uvloop"), output


#: Run as the first thing of a probe: says on stderr when the interpreter's teardown begins
#: (the audit events CPython raises as it finalizes), which a verb that ends with `os._exit` skips.
TEARDOWN_PROBE = (
    "import os, sys\n"
    "def hook(event, _args, write=os.write):\n"
    "    if event in ('cpython.PyInterpreterState_Clear', 'cpython._PySys_ClearAuditHooks'):\n"
    "        write(2, b'TEARDOWN\\n')\n"
    "sys.addaudithook(hook)\n"
)


@pytest.mark.parametrize(
    ("words", "answered", "exit_code"),
    [
        (["status", "--json"], '"pid"', 0),
        (["reload", "--restart", "."], "no instance", 1),
        (["locate", "notes.txt@hel<|>lo"], "notes.txt:2:4", 0),
    ],
)
async def test_a_verb_ends_without_the_interpreters_teardown(
    hosting: Daemon, tmp_path: Path, words: list[str], answered: str, exit_code: int
) -> None:
    """With nothing to run at exit, a verb's process ends with `os._exit` once its output is
    flushed (the teardown costs 3-6 ms of ~40): its whole output and exit status arrive."""
    (tmp_path / "notes.txt").write_text("# notes\nhello\n")
    runtime = Path(hosting.address.path).parent.parent
    env = verb_env(runtime, tmp_path)
    probe = f"{TEARDOWN_PROBE}sys.argv = ['lspmux', *{words!r}]\nfrom lspmux.cli import main\n"
    for run, teardown in ((probe + "sys.exit(main())\n", False), (probe + "main([])\n", True)):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-S", "-c", run, cwd=tmp_path, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        if teardown:  # a caller's own argv (tests, scripts): the interpreter ends as usual
            assert b"TEARDOWN" in err, err
            continue
        assert answered in (out + err).decode(), (out, err)
        assert proc.returncode == exit_code, (out, err)
        assert b"TEARDOWN" not in err, err
        if words[-1] == "--json":
            assert json.loads(out)["pid"] == os.getpid()  # all of it, flushed
