#!/usr/bin/env python3
"""What the remote path adds over a local daemon, on loopback SSH, as a Markdown table.

A real sshd on 127.0.0.1 (tests/sshd.py: generated keys, everything in a temp dir) and two
copies of the sample workspace at different paths. The same questions are asked twice: through
`lspmux client` to a local daemon, and through `lspmux client --remote ssh://127.0.0.1:PORT/…`
(relay, path mapping, ssh, the far `lspmux client`, the far daemon).

- hover: p50 and p90 of N sequential `textDocument/hover` on basedpyright;
- a 2.5 MB answer: ruff's `textDocument/formatting` of a 2.5 MB file that every line of which
  changes (one TextEdit holding the whole new text), the median of a few;
- bytes per keystroke: K one-character incremental `didChange`s; the LSP frame that carries one,
  and the bytes the ssh client really sent on its TCP socket per keystroke (`ss -ti`,
  bytes_acked: SSH framing, MAC and padding included).

    .venv/bin/python scripts/bench_remote.py [--requests 200] [--keystrokes 200] [--write]

With --write the table goes into docs/benchmarks.md between `<!-- bench:remote -->` and
`<!-- /bench:remote -->` (other sections are kept).

Both daemons run in private runtime folders and are stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lspmux.wire.framing import encode  # noqa: E402
from scripts.bench import write_section  # noqa: E402
from tests.e2e.rawlsp import RawClient  # noqa: E402
from tests.sshd import remote_lspmux, running_sshd  # noqa: E402

WORKSPACE = ROOT / "tests" / "data" / "workspace"
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- bench:remote -->"
END = "<!-- /bench:remote -->"


def private_env(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    for key in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        env[key] = str(base / key.lower())
    env["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="lspmux-brt-")
    env.pop("LSPMUX_ADDRESS", None)
    return env


def big_source(size: int) -> str:
    lines, total, i = [], 0, 0
    while total < size:
        line = f"value_{i}=[{i},{i + 1},{i + 2}]\n"  # ruff rewrites each: `value_0 = [0, 1, 2]`
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)


async def session(argv: list[str], env: dict[str, str], root: Path) -> RawClient:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        client = RawClient()
        await client.start(*argv, cwd=str(root))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    uri = root.as_uri()
    await client.request(
        "initialize",
        {"processId": None, "rootUri": uri, "workspaceFolders": [{"uri": uri, "name": "w"}],
         "capabilities": {"general": {"positionEncodings": ["utf-16"]}}},
        timeout=120,
    )  # fmt: skip
    client.notify("initialized", {})
    return client


def open_doc(client: RawClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )
    return uri


def sent_bytes(port: int) -> int:
    """bytes_acked of the ssh client's socket to the loopback sshd."""
    out = subprocess.run(
        ["ss", "-tinH", "dst", f"127.0.0.1:{port}"], capture_output=True, text=True, check=True
    ).stdout
    found = re.findall(r"bytes_acked:(\d+)", out)
    return sum(int(n) for n in found)


async def measure(client: RawClient, root: Path, args: argparse.Namespace, port: int | None
                  ) -> dict[str, Any]:  # fmt: skip
    app = root / "app.py"
    uri = open_doc(client, app, app.read_text())
    hover = {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 7}}
    deadline = time.monotonic() + 120
    while not await client.request("textDocument/hover", hover):  # warm
        if time.monotonic() > deadline:
            raise SystemExit("basedpyright gave no hover within 120 s")
        await asyncio.sleep(0.2)
    times = []
    for _ in range(args.requests):
        t0 = time.perf_counter()
        await client.request("textDocument/hover", hover)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    result: dict[str, Any] = {
        "hover_p50": statistics.median(times),
        "hover_p90": times[int(len(times) * 0.9)],
    }

    before = sent_bytes(port) if port else 0
    frame = 0
    for i in range(args.keystrokes):
        change = {
            "textDocument": {"uri": uri, "version": 2 + i},
            "contentChanges": [{"range": {"start": {"line": 18, "character": 0},
                                          "end": {"line": 18, "character": 0}}, "text": "x"}],
        }  # fmt: skip
        client.notify("textDocument/didChange", change)
        frame = len(
            encode({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": change})
        )
        await asyncio.sleep(0.005)  # typing: one message per keystroke, not one coalesced write
    await client.request("textDocument/hover", hover)  # everything sent was read
    await asyncio.sleep(0.5)  # the last ACKs
    result["frame"] = frame
    if port:
        result["wire"] = (sent_bytes(port) - before) / args.keystrokes
    big = root / "big.py"
    big_uri = open_doc(client, big, big.read_text())
    fmt = {"textDocument": {"uri": big_uri}, "options": {"tabSize": 4, "insertSpaces": True}}
    spans, size = [], 0
    for _ in range(5):
        t0 = time.perf_counter()
        edits = await client.request("textDocument/formatting", fmt, timeout=120)
        spans.append((time.perf_counter() - t0) * 1000)
        size = len(encode({"jsonrpc": "2.0", "id": 1, "result": edits}))
    result["big_ms"], result["big_bytes"] = statistics.median(spans), size
    client.notify("textDocument/didClose", {"textDocument": {"uri": big_uri}})

    return result


def stop_daemons(*runtimes: str) -> None:
    import psutil

    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "server" in cmd and any(r in w for r in runtimes for w in cmd):
            proc.terminate()


async def main(args: argparse.Namespace) -> None:
    base = Path(tempfile.mkdtemp(prefix="lspmux-bench-remote-"))
    local, remote = base / "laptop" / "proj", base / "box" / "srv" / "proj"
    text = big_source(2_500_000)
    for root in (local, remote):
        shutil.copytree(WORKSPACE, root)
        (root / "big.py").write_text(text)
    local_env, remote_env = private_env(base / "l"), private_env(base / "r")
    try:
        with running_sshd(base / "sshd") as sshd:
            direct = await session([sys.executable, "-m", "lspmux", "client"], local_env, local)
            try:
                here = await measure(direct, local, args, None)
            finally:
                await direct.stop()
            env = {**local_env, "LSPMUX_SSH": sshd.ssh}
            argv = [sys.executable, "-m", "lspmux", "client", "--remote", sshd.url(remote),
                    "--remote-lspmux", str(remote_lspmux(base / "sshd", remote_env))]  # fmt: skip
            far = await session(argv, env, local)
            try:
                there = await measure(far, local, args, sshd.port)
            finally:
                await far.stop()
    finally:
        stop_daemons(local_env["XDG_RUNTIME_DIR"], remote_env["XDG_RUNTIME_DIR"])
        shutil.rmtree(base, ignore_errors=True)
    print(report(here, there, args))
    if args.write:
        write_section(DOC, report(here, there, args), BEGIN, END)
        print(f"written to {DOC}", file=sys.stderr)


def report(here: dict[str, Any], there: dict[str, Any], args: argparse.Namespace) -> str:
    """The docs/benchmarks.md section, between its markers."""
    load = " / ".join(Path("/proc/loadavg").read_text().split()[:3])
    lines = [
        BEGIN,
        "### Remote: `--remote ssh://` over loopback against a local daemon",
        "",
        f"`scripts/bench_remote.py`, {time.strftime('%Y-%m-%d')}: {args.requests} basedpyright "
        f"hovers, ruff formatting a 2.5 MB file, {args.keystrokes} one-character edits; the "
        f"same questions to a local daemon and, in the same run, through a loopback sshd to a "
        f"daemon on the far side (load average {load}, 1/5/15 min, on {os.cpu_count()} cores "
        "shared with other work: the spread between runs is large).",
        "",
        "| | local daemon | --remote ssh (loopback) | added |",
        "|---|---:|---:|---:|",
    ]
    for key, label in (("hover_p50", "hover p50 (ms)"), ("hover_p90", "hover p90 (ms)"),
                       ("big_ms", f"{here['big_bytes'] / 1e6:.1f} MB answer (ms)")):  # fmt: skip
        lines.append(
            f"| {label} | {here[key]:.1f} | {there[key]:.1f} | {there[key] - here[key]:+.1f} |"
        )
    lines.append(f"| bytes per keystroke: LSP frame | {here['frame']} | {there['frame']} | |")
    lines.append(
        f"| bytes per keystroke: on the wire (ssh, TCP payload) | — | {there['wire']:.0f} | |"
    )
    lines.append(END)
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--keystrokes", type=int, default=200)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    asyncio.run(main(parser.parse_args()))
