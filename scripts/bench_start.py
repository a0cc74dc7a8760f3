"""The start-up benchmark: how long a fresh lspmux process takes before it is of use.

Measured in alternating rounds, each a fresh process, next to `python -c pass` in the same run:

- `lspmux proxy`, exec → its answer to a first message (a request sent before `initialize`,
  which the proxy refuses at once: what it costs to read a message at all);
- `lspmux proxy`, exec → `initialize` answered, in an empty folder (no server needed);
- `lspmux status` against a warm daemon (started here), exec → exit;
- agent verbs (`lspmux hover`, `lspmux definition`) against the same warm daemon, exec → exit,
  on a copy of tests/data/workspace (basedpyright answers; its first answer is in the untimed
  round), the daemon found as a user's verb finds it (its default socket, no --connect), run
  as a user runs them: the `lspmux` console script, as pip writes it.

Children run on a Python like a regular install's (`regular_python`): a development checkout's
`.venv/bin/python` loads the editable install's import hook at every start (~18 ms, even for
`python -c pass`), which an installed lspmux does not have.

`--before REV` also runs the lspmux of a git revision (exported to a temporary folder) in the
same rounds, for a before/after table. Children run with bytecode caching on (as an installed
lspmux does) and without user configuration (XDG_CONFIG_HOME points at an empty folder); a
first untimed round writes the bytecode. The table goes into docs/benchmarks.md between
`<!-- bench:start -->` and `<!-- /bench:start -->` with `--write`.

Usage: .venv/bin/python scripts/bench_start.py [--rounds N] [--before REV] [--write]
           [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:start -->", "<!-- /bench:start -->"
TIMEOUT = 30


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--before", metavar="REV", help="also run the lspmux of this git revision")
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
            cases: dict[str, Callable[[Tree], float]] = {
                "`lspmux proxy`: exec → first message answered": lambda t: t.proxy(False),
                "`lspmux proxy`: exec → `initialize` answered (no server)": lambda t: t.proxy(True),
                "`lspmux status`, warm daemon: exec → exit": lambda t: t.run(
                    "status", "--connect", address
                ),
                **verb_cases(work),
            }
            times: dict[tuple[str, str], list[float]] = {}
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
            values = times[(case, tree.name)]
            row.append(f"{statistics.median(values):.0f} ms ({min(values):.0f})")
        lines.append("| " + " | ".join(row) + " |")
    table = "\n".join(lines)
    print(table)
    if args.write:
        text = args.output.read_text()
        if BEGIN not in text or END not in text:
            raise SystemExit(f"{args.output}: no {BEGIN} … {END} section to write the table into")
        head, _, rest = text.partition(BEGIN)
        args.output.write_text(f"{head}{BEGIN}\n{table}\n{END}{rest.partition(END)[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
