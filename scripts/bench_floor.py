"""The floor of a relay: what one extra process between a client and its server costs, with and
without an interpreter in it, beside what `lspmux proxy` costs.

Issue 21's per-message targets (hover added ≤ 0.06 ms, pipelined ≥ 70% of direct) are set
against a direct connection. `scripts/bench.py` shows lspmux's ways beside a byte relay written
in Python (uvloop); this script asks what the hop itself costs, so that the part of lspmux's
figure that is lspmux's own work is known:

- **direct**: the client talks to `scripts/bench_server.py`;
- **byte relay, uvloop**: `scripts/bench.py`'s relay (a uvloop process copying bytes both ways);
- **byte relay, native**: `scripts/relay_floor.c`, compiled here with the machine's C compiler
  (`cc`), a poll loop with non-blocking descriptors and a buffer per direction;
- **thin Python relay**: the least a Python relay that reads messages does (`bench.py`'s relay
  with `_python_lane`'s per-read functions, run as this script's child on uvloop): frames
  parsed, each request's id replaced by its own, each answer's id put back by a byte splice,
  no routing, no checks, no guarantees. What it adds
  beyond the byte relay is the price of looking at each message in Python at all;
- **thin relay, its per-read work in C**: the same relay on uvloop, each read handed to
  `scripts/lane_floor.c` (a CPython extension built here) that frames it, re-ids the requests
  or puts the answers' ids back and returns the bytes to write: what the per-message work costs
  once it is out of the interpreter, the wake-ups still the event loop's;
- **lspmux proxy**: `lspmux proxy --config bench.toml` (the bench server for `.bench` files,
  as in `scripts/bench.py`).

The client is blocking Python (`os.read`/`os.write`, no event loop, one process), so that its own
cost stays out of the figures as far as it can: a direct hover is ~0.03 ms here, ~0.13 ms with
`bench.py`'s asyncio client. Each round measures every way in turn (so that a change in machine
load hits all of them): `--hovers` sequential hovers (their p50), then `--pipelined` hovers
written at once by a thread and read back (requests answered per second). Medians over
`--rounds`; added = the way's minus direct's, share = the way's over direct's.

    .venv/bin/python scripts/bench_floor.py [--quick] [--write]

`--write` puts the table into docs/benchmarks.md between `<!-- bench:floor -->` and
`<!-- /bench:floor -->`. Without a C compiler the script stops and says what to install.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # scripts/bench.py: its config, relay and section writer

ROOT = Path(__file__).resolve().parent.parent
NATIVE_SOURCE = ROOT / "scripts" / "relay_floor.c"
LANE_SOURCE = ROOT / "scripts" / "lane_floor.c"
BEGIN, END = "<!-- bench:floor -->", "<!-- /bench:floor -->"
WAYS = ("direct", "uvloop", "native", "thin", "lane", "proxy")
TITLES = {
    "direct": "direct",
    "uvloop": "byte relay, uvloop",
    "native": "byte relay, native (C)",
    "thin": "thin Python relay (frames, ids)",
    "lane": "thin relay, its per-read work in C",
    "proxy": "lspmux proxy",
}


class FloorError(Exception):
    """The run cannot go on; the message says why and what to do."""


def compile_native(tmp: Path) -> Path:
    """`relay_floor.c` compiled into `tmp`: the path of the executable."""
    exe = tmp / "relay_floor"
    _compile([_compiler(), "-O2", "-o", str(exe), str(NATIVE_SOURCE)], NATIVE_SOURCE)
    return exe


# -- the thin Python relay ------------------------------------------------------------------

THIN_FLAG = "--thin-child"
#: The same with its per-read work in C: `--lane-child FOLDER COMMAND…`.
LANE_FLAG = "--lane-child"
_HEADER = re.compile(rb"Content-Length: *(\d+)\r\n\r\n")
_ANSWER_ID = re.compile(rb'"id":(\d+)')


class _Frames:
    """The pure-Python way of a read: whole message bodies to `handle`, what it gives back
    joined (a partial message kept for the next read)."""

    def __init__(self, handle: Callable[[bytes, list[bytes]], None]) -> None:
        self.handle = handle
        self.rest = b""

    def __call__(self, data: bytes) -> bytes:
        buf = self.rest + data if self.rest else data
        pos, out = 0, []
        while (head := _HEADER.match(buf, pos)) is not None:
            end = head.end() + int(head.group(1))
            if end > len(buf):
                break
            self.handle(buf[head.end() : end], out)
            pos = end
        self.rest = buf[pos:]
        return b"".join(out)


def _python_lane() -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
    """(up, down) in Python: each client request gets an id of the relay's own (kept in a
    dict), each answer its client's id back."""
    pending: dict[int, Any] = {}
    last = 0

    def request(body: bytes, out: list[bytes]) -> None:
        nonlocal last
        msg = orjson.loads(body)
        if "id" in msg and "method" in msg:
            last += 1
            pending[last], msg["id"] = msg["id"], last
            body = orjson.dumps(msg)
        out += (b"Content-Length: %d\r\n\r\n" % len(body), body)

    def answer(body: bytes, out: list[bytes]) -> None:
        found = _ANSWER_ID.search(body, 0, 40)
        if found is not None and b'"method"' not in body and int(found.group(1)) in pending:
            client_id = orjson.dumps(pending.pop(int(found.group(1))))
            body = body[: found.start(1)] + client_id + body[found.end(1) :]
        # (an answer the relay does not know passes as it is, as in the C lane)
        out += (b"Content-Length: %d\r\n\r\n" % len(body), body)

    return _Frames(request), _Frames(answer)


def _native_lane(folder: str) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
    """(up, down) in C: `lane_floor.Lane` (scripts/lane_floor.c, built into `folder`)."""
    sys.path.insert(0, folder)
    import lane_floor  # type: ignore[import-not-found]

    lane = lane_floor.Lane()
    return lane.up, lane.down


# -- the client --------------------------------------------------------------------------------


def _compiler() -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise FloorError(
            "no C compiler on PATH for the native relay and lane: install one "
            "(apt-get install gcc), then run again"
        )
    return cc


def _compile(argv: list[str], source: Path) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise FloorError(f"{argv[0]} failed on {source}:\n{done.stderr}")


def compile_lane(tmp: Path) -> Path:
    """`lane_floor.c` built as an extension of this interpreter (its headers: Debian's
    python3-dev for the system's Python) into a folder of `tmp`: the folder."""
    folder = tmp / "lane"
    folder.mkdir(exist_ok=True)
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        raise FloorError(
            f"no Python.h in {include} for the C lane: install this Python's headers "
            "(apt-get install python3-dev for Debian's), then run again"
        )
    target = folder / f"lane_floor{sysconfig.get_config_var('EXT_SUFFIX')}"
    argv = [_compiler(), "-O2", "-shared", "-fPIC", f"-I{include}", "-o", str(target)]
    _compile([*argv, str(LANE_SOURCE)], LANE_SOURCE)
    return folder


def frame(msg: dict[str, Any]) -> bytes:
    body = orjson.dumps(msg)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Peer:
    """A process the client speaks LSP to over its stdin and stdout, blocking."""

    def __init__(self, name: str, argv: list[str], cwd: Path, stderr: Path) -> None:
        self.name = name
        with stderr.open("wb") as err:
            self.proc = subprocess.Popen(
                argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.out, self.inp = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self.buf = b""
        self.last_id = 0

    def send(self, msg: dict[str, Any]) -> None:
        self.write(frame(msg))

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.out, view) :]

    def _fill(self) -> None:
        got = os.read(self.inp, 1 << 20)
        if not got:
            raise FloorError(f"{self.name} closed its output (see its stderr file)")
        self.buf += got

    def message(self) -> dict[str, Any]:
        """The next message; a request from the peer is answered with a null result."""
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end >= 0:
                end = head_end + 4 + int(self.buf[len(b"Content-Length:") : head_end])
                if len(self.buf) >= end:
                    body, self.buf = self.buf[head_end + 4 : end], self.buf[end:]
                    msg: dict[str, Any] = orjson.loads(body)
                    if "method" in msg and "id" in msg:
                        self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                        continue
                    return msg
            self._fill()

    def request(self, method: str, params: Any) -> Any:
        self.last_id += 1
        self.send({"jsonrpc": "2.0", "id": self.last_id, "method": method, "params": params})
        while True:
            msg = self.message()
            if msg.get("id") == self.last_id:
                if "error" in msg:
                    raise FloorError(f"{self.name}: {method} failed: {msg['error']}")
                return msg.get("result")

    def pipelined(self, params: Any, count: int) -> float:
        """`count` hovers written at once (by a thread, so that the answers are read while
        they are written): requests answered per second."""
        first = self.last_id + 1
        data = b"".join(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": first + k,
                    "method": "textDocument/hover",
                    "params": params,
                }
            )
            for k in range(count)
        )
        self.last_id += count
        started = time.perf_counter()
        writer = threading.Thread(target=self.write, args=(data,))
        writer.start()
        answered, pos, buf = 0, 0, bytearray(self.buf)  # appended to in place: no copy per read
        last = b""
        while answered < count:
            head_end = buf.find(b"\r\n\r\n", pos)
            if head_end < 0 or len(buf) < head_end + 4 + int(buf[pos + 15 : head_end]):
                got = os.read(self.inp, 1 << 20)
                if not got:
                    raise FloorError(f"{self.name} closed its output while pipelined")
                buf += got
                continue
            end = head_end + 4 + int(buf[pos + 15 : head_end])
            last, pos, answered = bytes(buf[head_end + 4 : end]), end, answered + 1
        elapsed = time.perf_counter() - started
        writer.join()
        self.buf = bytes(buf[pos:])
        if orjson.loads(last).get("id") != self.last_id:
            raise FloorError(f"{self.name}: the last pipelined answer is not the last request's")
        return count / elapsed

    def stop(self) -> None:
        try:
            self.request("shutdown", None)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            self.proc.wait(timeout=10)
        except (FloorError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


@dataclass
class Results:
    rounds: int
    hovers: int
    pipelined: int
    hover: dict[str, list[float]] = field(default_factory=lambda: {w: [] for w in WAYS})
    throughput: dict[str, list[float]] = field(default_factory=lambda: {w: [] for w in WAYS})
    started: datetime.datetime = field(default_factory=lambda: datetime.datetime.now(datetime.UTC))
    load: tuple[float, float, float] = field(default_factory=os.getloadavg)


def measure(tmp: Path, rounds: int, hovers: int, pipelined: int) -> Results:
    workspace = tmp / "workspace"
    workspace.mkdir()
    (workspace / ".bench-root").touch()
    doc = workspace / f"a{bench.FILE_TYPE}"
    doc.write_text("fn bench\n")
    uri = doc.as_uri()
    config = bench.write_config(tmp, 10)
    server = [sys.executable, str(bench.SERVER), "--items", "10"]
    argv = {
        "direct": server,
        "uvloop": [sys.executable, str(bench.__file__), bench.RELAY_FLAG, *server],
        "native": [str(compile_native(tmp)), *server],
        "thin": [sys.executable, str(Path(__file__).resolve()), THIN_FLAG, *server],
        "lane": [sys.executable, str(Path(__file__).resolve()), LANE_FLAG,
                 str(compile_lane(tmp)), *server],
        "proxy": [sys.executable, "-m", "lspmux", "proxy", "--config", str(config),
                  "--log-level", "warning", "--log-file", str(tmp / "proxy.log")],
    }  # fmt: skip
    res = Results(rounds, hovers, pipelined)
    peers: list[Peer] = []
    try:
        for way in WAYS:
            peer = Peer(way, argv[way], workspace, tmp / f"{way}.stderr")
            peers.append(peer)
            peer.request("initialize", {"processId": os.getpid(), "rootUri": workspace.as_uri(),
                                        "capabilities": {}})  # fmt: skip
            peer.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            text_doc = {"uri": uri, "languageId": bench.LANGUAGE_ID, "version": 1,
                        "text": doc.read_text()}  # fmt: skip
            peer.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                       "params": {"textDocument": text_doc}})  # fmt: skip
        params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 3}}
        for peer in peers:  # each way answers before anything is timed
            if not peer.request("textDocument/hover", params):
                raise FloorError(f"{peer.name}: the hover has no answer")
        for _ in range(rounds):
            for peer in peers:
                times = []
                for _ in range(hovers):
                    t = time.perf_counter()
                    peer.request("textDocument/hover", params)
                    times.append(time.perf_counter() - t)
                res.hover[peer.name].append(statistics.median(times) * 1000)
                res.throughput[peer.name].append(peer.pipelined(params, pipelined))
    finally:
        for peer in peers:
            peer.stop()
    return res


def section(res: Results) -> str:
    hover = {w: statistics.median(v) for w, v in res.hover.items()}
    rate = {w: statistics.median(v) for w, v in res.throughput.items()}
    lines = [
        BEGIN,
        "### The floor of a relay: one extra process, native or Python, beside the proxy",
        "",
        "<!-- Generated by scripts/bench_floor.py (make bench); edits between the markers are lost. -->",
        "",
        f"Measured {res.started:%Y-%m-%d %H:%M} UTC on {os.cpu_count()} CPUs, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}; "
        f"load average before the run {res.load[0]:.2f}. A blocking client (no event loop) "
        f"against `scripts/bench_server.py`: {res.rounds} round(s), each way in turn; per round "
        f"{res.hovers:,} sequential hovers (p50) and {res.pipelined:,} hovers written at once.",
        "",
        "| way | hover p50 | added | pipelined, requests/s | share of direct |",
        "|---|---:|---:|---:|---:|",
    ]
    for way in WAYS:
        added = "—" if way == "direct" else f"{hover[way] - hover['direct']:+.3f} ms"
        lines.append(
            f"| {TITLES[way]} | {hover[way]:.3f} ms | {added} | {rate[way]:,.0f} | "
            f"{100 * rate[way] / rate['direct']:.0f}% |"
        )
    lines += [
        "",
        "Per round, hover p50 in ms: "
        + "; ".join(f"{TITLES[w]} " + ", ".join(f"{v:.3f}" for v in res.hover[w]) for w in WAYS)
        + ".",
        "",
        "Reproduce: `.venv/bin/python scripts/bench_floor.py --write` (needs a C compiler).",
        END,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in ([THIN_FLAG], [LANE_FLAG]):  # a thin relay: bench.py's, each read turned
        import uvloop

        if argv[0] == LANE_FLAG:
            return int(uvloop.run(bench._relay(argv[2:], *_native_lane(argv[1]))))
        return int(uvloop.run(bench._relay(argv[1:], *_python_lane())))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--hovers", type=int, default=1000, help="sequential hovers per round")
    parser.add_argument("--pipelined", type=int, default=20_000, help="hovers written at once")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.hovers, args.pipelined = 1, 20, 200
    try:
        with tempfile.TemporaryDirectory(prefix="lspmux-floor-") as tmp:
            res = measure(Path(tmp), args.rounds, args.hovers, args.pipelined)
    except FloorError as exc:
        print(f"bench_floor: {exc}", file=sys.stderr)
        return 1
    text = section(res)
    print(text)
    if args.write:
        bench.write_section(args.output, text, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
