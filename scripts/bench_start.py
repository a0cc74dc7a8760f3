"""The start-up benchmark: how long a fresh lspmux process takes before it is of use.

Measured in alternating rounds, each a fresh process, next to `python -c pass` in the same run:

- `lspmux proxy`, exec → its debug log saying it read the client's first message (`initialize`,
  in an empty folder): what comes before the proxy can act on anything;
- `lspmux proxy`, exec → its answer to a first message (a request sent before `initialize`,
  which the proxy refuses at once: what it costs to read a message at all);
- `lspmux proxy`, exec → `initialize` answered, in an empty folder (no server needed);
- `lspmux status` against a warm daemon (started here), exec → exit;
- agent verbs (`lspmux hover`, `lspmux definition`) against the same warm daemon, exec → exit,
  on a copy of tests/data/workspace (basedpyright answers; its first answer is in the untimed
  round), the daemon found as a user's verb finds it (its default socket, no --connect), run
  as a user runs them: the `lspmux` console script, as pip writes it.
- with `--real-rounds N`, against real servers on a copy of the sample workspace's Python files:
  basedpyright directly, and `lspmux proxy` (basedpyright + ruff) with its capability cache
  warm and empty, each exec → `initialize` answered and exec → the first non-empty hover on
  app.py (`RealServer`), in a table of its own (`<!-- bench:start-real -->`).

Children run on a Python like a regular install's (`regular_python`): a development checkout's
`.venv/bin/python` loads the editable install's import hook at every start (~18 ms, even for
`python -c pass`), which an installed lspmux does not have.

`--before REV` also runs the lspmux of a git revision (exported to a temporary folder) in the
same rounds, for a before/after table. Children run with bytecode caching on (as an installed
lspmux does) and without user configuration (XDG_CONFIG_HOME points at an empty folder); a
first untimed round writes the bytecode. The table goes into docs/benchmarks.md between
`<!-- bench:start -->` and `<!-- /bench:start -->` with `--write`.

Usage: .venv/bin/python scripts/bench_start.py [--rounds N] [--real-rounds N] [--before REV]
           [--write] [--output FILE]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:start -->", "<!-- /bench:start -->"
REAL_BEGIN, REAL_END = "<!-- bench:start-real -->", "<!-- /bench:start-real -->"
TIMEOUT = 30
#: What `lspmux proxy --log-level debug` logs once it has read the client's first message.
FIRST_READ = b"first message read"


def _frame(msg: dict[str, object]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(proc: subprocess.Popen[bytes]) -> bytes:
    assert proc.stdout is not None
    length = None
    while line := proc.stdout.readline().strip():
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if length is None:
        raise RuntimeError(f"the proxy closed its output (exit {proc.wait(TIMEOUT)})")
    return proc.stdout.read(length)


def regular_python(work: Path) -> str:
    """A Python that starts as a regular (non-editable) install of lspmux does: a venv whose
    site-packages reach this one's packages through a path in a .pth file (so their own .pth
    files, the editable install's import hook among them, are not run); lspmux itself comes
    from PYTHONPATH."""
    import sysconfig

    venv = work / "regular-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "lspmux-bench-deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    script = venv / "bin" / "lspmux"
    script.write_text(CONSOLE_SCRIPT.format(python=python))
    script.chmod(0o755)
    return str(python)


#: The console script pip writes for `lspmux = "lspmux.cli:main"` (distlib's template).
CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from lspmux.cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""
#: The Python the children run on: `regular_python`'s, set by main().
PYTHON = sys.executable


class Tree:
    """One lspmux source tree, run with the regular-install Python (PYTHON)."""

    def __init__(self, name: str, root: Path, work: Path) -> None:
        self.name, self.root, self.work = name, root, work
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env.update(PYTHONPATH=str(root), XDG_CONFIG_HOME=str(work / "config"))
        self.env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{self.env.get('PATH', '')}"
        self.folder = work / "empty"
        self.folder.mkdir(parents=True, exist_ok=True)

    def lspmux(self, *args: str) -> list[str]:
        return [PYTHON, "-m", "lspmux", *args]

    def script(self, *args: str) -> list[str]:
        """The `lspmux` console script beside PYTHON (this tree's lspmux, by PYTHONPATH)."""
        return [str(Path(PYTHON).parent / "lspmux"), *args]

    def proxy(self, initialize: bool) -> float:
        """exec → the answer to the first message (or to `initialize`), in ms."""
        start = time.perf_counter()
        proc = subprocess.Popen(
            self.lspmux("proxy"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=self.env, cwd=self.folder,
        )  # fmt: skip
        assert proc.stdin is not None
        try:
            if initialize:
                params = {"processId": None, "rootUri": self.folder.as_uri(), "capabilities": {}}
                msg = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
            else:
                msg = {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {}}
            proc.stdin.write(_frame(msg))
            proc.stdin.flush()
            answer = json.loads(_read(proc))
            elapsed = (time.perf_counter() - start) * 1000
            if initialize and "capabilities" not in answer.get("result", {}):
                raise RuntimeError(f"{self.name}: initialize answered {answer}")
            if not initialize and answer.get("error", {}).get("code") != -32002:
                raise RuntimeError(f"{self.name}: a request before initialize got {answer}")
            return elapsed
        finally:
            proc.stdin.close()
            proc.wait(TIMEOUT)

    def first_read(self) -> float | None:
        """exec → the proxy's debug log saying it read the first message, in ms (None: this
        lspmux does not say it)."""
        if FIRST_READ not in (self.root / "lspmux" / "proxy.py").read_bytes():
            return None
        start = time.perf_counter()
        proc = subprocess.Popen(
            self.lspmux("proxy", "--log-level", "debug"), stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env, cwd=self.folder,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stderr is not None
        try:
            params: dict[str, object] = {"processId": None, "rootUri": self.folder.as_uri()}
            params["capabilities"] = {}
            msg = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
            proc.stdin.write(_frame(msg))
            proc.stdin.flush()
            for line in proc.stderr:
                if FIRST_READ in line:
                    return (time.perf_counter() - start) * 1000
            raise RuntimeError(f"{self.name}: the proxy ended without saying it read a message")
        finally:
            proc.kill()
            proc.wait(TIMEOUT)
            proc.stdin.close()
            proc.stderr.close()

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        expect: str = "",
        script: bool = False,
        code: int = 0,
    ) -> float:
        """exec → exit of `python -m lspmux ARGS` (`script`: of the console script), exit status
        `code` and `expect` in its output (stdout and stderr), in ms."""
        start = time.perf_counter()
        done = subprocess.run(
            self.script(*args) if script else self.lspmux(*args),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=self.env, cwd=cwd or self.folder, timeout=TIMEOUT,
        )  # fmt: skip
        elapsed = (time.perf_counter() - start) * 1000
        if done.returncode != code or expect.encode() not in done.stdout:
            raise RuntimeError(
                f"{self.name}: `lspmux {' '.join(args)}` exited {done.returncode} (not {code}), "
                f"printing {done.stdout!r}"
            )
        return elapsed


def _pass() -> float:
    start = time.perf_counter()
    subprocess.run([PYTHON, "-c", "pass"], check=True, timeout=TIMEOUT)
    return (time.perf_counter() - start) * 1000


def verb_cases(work: Path) -> dict[str, Callable[[Tree], float]]:
    """Rows for the verbs against the warm daemon (issue 21, item 2: p50 ≤ 40 ms): a hover, a
    definition and a Locate in a copy of the sample workspace, answered by basedpyright; a
    reload of a folder with no instance (the daemon says so: exit 1, nothing restarted); the
    diagnostics of app.py (basedpyright and ruff; the wait rule's 1.5 s of quiet included)."""
    import shutil

    workspace = work / "workspace"
    shutil.copytree(ROOT / "tests" / "data" / "workspace", workspace)
    return {
        "`lspmux hover app.py:16:15`, warm daemon: exec → exit": lambda t: t.run(
            "hover", "app.py:16:15", cwd=workspace, expect="class Greeter", script=True
        ),
        "`lspmux definition app.py:17:19`, warm daemon: exec → exit": lambda t: t.run(
            "definition", "app.py:17:19", cwd=workspace, expect="app.py:10:9", script=True
        ),
        "`lspmux locate app.py:Greeter.greet@return <\\|>message`, warm daemon: exec → exit": (
            lambda t: t.run(
                "locate",
                "app.py:Greeter.greet@return <|>message",
                cwd=workspace,
                expect="app.py:12:16",
                script=True,
            )
        ),
        "`lspmux reload` (no instance there), warm daemon: exec → exit": lambda t: t.run(
            "reload", cwd=t.folder, expect="no instance", script=True, code=1
        ),
        "`lspmux diagnostics app.py`, warm daemon: exec → exit (1.5 s quiet included)": (
            lambda t: t.run(
                "diagnostics", "app.py", cwd=workspace, expect="undefined_name", script=True, code=1
            )
        ),
    }


def _export(rev: str, into: Path) -> Path:
    into.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "lspmux", "config"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _wait_for_daemon(tree: Tree, address: str, daemon: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            raise RuntimeError(f"the daemon exited ({daemon.returncode}) before it listened")
        status = subprocess.run(
            tree.lspmux("status", "--connect", address), capture_output=True, env=tree.env
        )
        if status.returncode == 0:
            return
        time.sleep(0.05)  # polling a socket that does not exist yet: nothing to wait on
    raise RuntimeError(f"no daemon answered at {address} within {TIMEOUT} s")


# -- against a real server: basedpyright + ruff on a copy of the sample workspace ------------------

#: The Python part of tests/data/workspace (its C and JavaScript files would bring clangd and
#: Biome into the first start).
WORKSPACE_FILES = ("app.py", "pyproject.toml")
#: Where the first hover asks: `Greeter` in `greeter = Greeter("world")` (0-based line, column).
HOVER_AT = {"line": 15, "character": 14}


class LspClient:
    """A minimal blocking LSP client of one fresh process: what an editor does at start,
    answering the server's requests (configuration, registrations, progress) with nothing."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, cwd=cwd,
        )  # fmt: skip
        self.ids = 0
        # a server that hangs must not hang the benchmark
        self.watchdog = threading.Timer(TIMEOUT * 2, self.proc.kill)
        self.watchdog.start()

    def since(self) -> float:
        return (time.perf_counter() - self.start) * 1000

    def send(self, msg: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_frame({"jsonrpc": "2.0", **msg}))
        self.proc.stdin.flush()

    def request(self, method: str, params: object) -> object:
        """The result of `method`; the server's own requests meanwhile answered with null
        (a list of nulls for workspace/configuration)."""
        self.ids += 1
        self.send({"id": self.ids, "method": method, "params": params})
        while True:
            msg = json.loads(_read(self.proc))
            if "method" in msg and "id" in msg:  # the server asks
                items = (msg.get("params") or {}).get("items") or []
                result = [None] * len(items) if msg["method"] == "workspace/configuration" else None
                self.send({"id": msg["id"], "result": result})
            elif msg.get("id") == self.ids and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed: {msg['error']}")
                return msg.get("result")

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.send({"method": "exit"})
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(TIMEOUT)
        except (OSError, RuntimeError, subprocess.TimeoutExpired, ValueError):
            self.proc.kill()
            self.proc.wait(TIMEOUT)
        finally:
            self.watchdog.cancel()


def first_hover(argv: list[str], env: dict[str, str], workspace: Path) -> tuple[float, float]:
    """exec → `initialize` answered, and exec → the first non-empty hover on app.py (asked
    again at each empty answer, as an editor's user would), in ms."""
    client = LspClient(argv, env, workspace)
    try:
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": workspace.as_uri(),
                "capabilities": {
                    "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}}
                },
            },
        )
        initialized = client.since()
        client.send({"method": "initialized", "params": {}})
        uri = (workspace / "app.py").as_uri()
        text = (workspace / "app.py").read_text()
        doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        client.send({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
        params = {"textDocument": {"uri": uri}, "position": HOVER_AT}
        deadline = time.monotonic() + TIMEOUT
        while not client.request("textDocument/hover", params):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{argv[0]}: no hover within {TIMEOUT} s")
        return initialized, client.since()
    finally:
        client.close()


class RealServer:
    """The real-server rows: basedpyright directly, and `lspmux proxy` (basedpyright + ruff)
    with its capability cache warm and empty, on one copy of the Python sample workspace."""

    def __init__(self, work: Path) -> None:
        self.workspace = work / "workspace"
        self.workspace.mkdir(parents=True)
        for name in WORKSPACE_FILES:
            shutil.copy(ROOT / "tests" / "data" / "workspace" / name, self.workspace)
        tools = [ROOT / ".venv" / "bin", ROOT / ".tools" / "node_modules" / ".bin"]
        self.path = os.pathsep.join([*map(str, tools), os.environ.get("PATH", "")])
        self.warm_cache = work / "cache-warm"
        self.empty_caches = work / "caches-empty"
        self.empty_caches.mkdir()
        self.fresh = 0
        exe = shutil.which("basedpyright-langserver", path=self.path)
        if exe is None:
            raise SystemExit("basedpyright-langserver is not installed: run scripts/setup-tests")
        self.direct_argv = [exe, "--stdio"]

    def direct(self) -> tuple[float, float]:
        env = {**os.environ, "PATH": self.path}
        return first_hover(self.direct_argv, env, self.workspace)

    def proxy(self, tree: Tree, *, warm: bool) -> tuple[float, float]:
        if warm:
            cache = self.warm_cache / tree.name
        else:  # a folder nothing was cached in
            self.fresh += 1
            cache = self.empty_caches / str(self.fresh)
        env = {**tree.env, "PATH": self.path, "XDG_CACHE_HOME": str(cache)}
        return first_hover(tree.lspmux("proxy"), env, self.workspace)

    def cases(self, trees: list[Tree]) -> dict[tuple[str, str], Callable[[], tuple[float, float]]]:
        """(row, column) → a measure of (initialize, first hover); the direct row has one
        column, "direct"."""
        cases: dict[tuple[str, str], Callable[[], tuple[float, float]]] = {
            ("basedpyright directly", "direct"): self.direct
        }
        for tree in trees:
            cases[("`lspmux proxy`, capability cache warm", tree.name)] = functools.partial(
                self.proxy, tree, warm=True
            )
            cases[("`lspmux proxy`, first start (empty cache)", tree.name)] = functools.partial(
                self.proxy, tree, warm=False
            )
        return cases


def real_table(
    rounds: int, times: dict[tuple[str, str], list[tuple[float, float]]], load: str
) -> str:
    """The real-server table: per row, initialize and first hover (p50, min, and p50 above
    basedpyright's own)."""
    direct = times[("basedpyright directly", "direct")]
    base = [statistics.median(v[i] for v in direct) for i in (0, 1)]
    lines = [
        "<!-- Generated by scripts/bench_start.py (make bench); edits between the markers are "
        "lost. -->",
        "",
        f"{rounds} alternating rounds, fresh processes, on a copy of tests/data/workspace's "
        f"Python files ({', '.join(WORKSPACE_FILES)}: basedpyright + ruff); load average {load} "
        f"(1/5/15 min) on {os.cpu_count()} cores. exec → `initialize` answered, and exec → the "
        "first non-empty hover on app.py (asked again at each empty answer).",
        "",
        "| | initialize answered, p50 (min) | first hover, p50 (min) |",
        "|---|---|---|",
    ]
    for (row, column), values in times.items():
        label = row if column == "direct" else f"{row} — {column}"
        cells = [label]
        for i in (0, 1):
            p50 = statistics.median(v[i] for v in values)
            low = min(v[i] for v in values)
            added = "" if column == "direct" else f", {p50 - base[i]:+.0f}"
            cells.append(f"{p50:.0f} ms ({low:.0f}{added})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _write_between(path: Path, begin: str, end: str, table: str) -> None:
    text = path.read_text()
    if begin not in text or end not in text:
        raise SystemExit(f"{path}: no {begin} … {end} section to write the table into")
    head, _, rest = text.partition(begin)
    path.write_text(f"{head}{begin}\n{table}\n{end}{rest.partition(end)[2]}")


def run_real(rounds: int, trees: list[Tree], work: Path) -> str:
    """The real-server rounds (a first untimed one warms the cache and writes the bytecode),
    and their table."""
    real = RealServer(work / "real")
    cases = real.cases(trees)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_ in range(rounds + 1):
        for key, measure in cases.items():
            result = measure()
            if round_:
                times.setdefault(key, []).append(result)
    load = " / ".join(Path("/proc/loadavg").read_text().split()[:3])
    return real_table(rounds, times, load)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--before", metavar="REV", help="also run the lspmux of this git revision")
    ap.add_argument(
        "--real-rounds", type=int, default=0, metavar="N",
        help="rounds against a real server (basedpyright + ruff; `make bench`: 8); 0: none",
    )  # fmt: skip
    ap.add_argument("--write", action="store_true", help="write the table into --output")
    ap.add_argument("--output", type=Path, default=DOC, help=f"the page (default: {DOC})")
    args = ap.parse_args(argv)

    global PYTHON
    with tempfile.TemporaryDirectory(prefix="lspmux-bench-start-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o700)  # the daemon's socket lives here
        PYTHON = regular_python(work)
        trees = [Tree("now", ROOT, work / "now")]
        if args.before:
            trees.insert(0, Tree(f"before ({args.before})", _export(args.before, work / "b"), work))
        for tree in trees:  # the daemon's default socket: the verbs find it as a user's do
            tree.env["XDG_RUNTIME_DIR"] = str(work)
        address = f"unix:{work / 'lspmux' / 'lspmux.sock'}"
        daemon = subprocess.Popen(
            trees[-1].lspmux("server", "--listen", address), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=trees[-1].env,
        )  # fmt: skip
        try:
            _wait_for_daemon(trees[-1], address, daemon)
            cases: dict[str, Callable[[Tree], float | None]] = {
                "`lspmux proxy`: exec → first message read": lambda t: t.first_read(),
                "`lspmux proxy`: exec → first message answered": lambda t: t.proxy(False),
                "`lspmux proxy`: exec → `initialize` answered (no server)": lambda t: t.proxy(True),
                "`lspmux status`, warm daemon: exec → exit": lambda t: t.run(
                    "status", "--connect", address
                ),
                **verb_cases(work),
            }
            times: dict[tuple[str, str], list[float | None]] = {}
            passes: list[float] = []
            for round_ in range(args.rounds + 1):  # round 0 writes the bytecode, untimed
                passes.append(_pass())
                for case, measure in cases.items():
                    for tree in trees:
                        elapsed = measure(tree)
                        if round_:
                            times.setdefault((case, tree.name), []).append(elapsed)
        finally:
            daemon.terminate()
            daemon.wait(TIMEOUT)
        real_table_ = run_real(args.real_rounds, trees, work) if args.real_rounds else None

    load = " / ".join(Path("/proc/loadavg").read_text().split()[:3])
    lines = [
        "<!-- Generated by scripts/bench_start.py (make bench); edits between the markers are "
        "lost. -->",
        "",
        f"{args.rounds} alternating rounds, fresh processes, Python {sys.version.split()[0]}, "
        f"load average {load} (1/5/15 min) on {os.cpu_count()} cores; "
        f"`python -c pass`: {statistics.median(passes[1:]):.0f} ms p50; a regular install's "
        "Python (no editable-install hook).",
        "",
        "| | " + " | ".join(f"{t.name}, p50 (min)" for t in trees) + " |",
        "|---|" + "---|" * len(trees),
    ]
    for case in cases:
        row = [case]
        for tree in trees:
            values = [v for v in times[(case, tree.name)] if v is not None]
            row.append(f"{statistics.median(values):.0f} ms ({min(values):.0f})" if values else "—")
        lines.append("| " + " | ".join(row) + " |")
    table = "\n".join(lines)
    print(table)
    if real_table_:
        print(f"\n{real_table_}")
    if args.write:
        _write_between(args.output, BEGIN, END, table)
        if real_table_:
            _write_between(args.output, REAL_BEGIN, REAL_END, real_table_)
    return 0


if __name__ == "__main__":
    sys.exit(main())
