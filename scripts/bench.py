"""The proxy benchmark: what `lspmux proxy` adds in front of a language server, measured.

One run sends the same workload, with a raw client (asyncio pipes + orjson, no LSP library), to
`scripts/bench_server.py` (a fast LSP echo server) three ways: (a) directly; (b) through a byte
relay, a uvloop process that copies bytes both ways and parses nothing (this script with
`--relay-child`): the floor any proxy process pays for the extra hop; (c) through
`python -m lspmux proxy`, configured with the bench server alone (for `.bench` files).

- hover latency: sequential requests after a warm-up, p50/p95, in rounds that alternate between
  the three so that load changes on the machine hit all of them alike;
- pipelined throughput: N hover requests written at once, then every response read; with the
  CPU time and the system calls the process in front of the client spent per request;
- completion latency: a ~2.5 MB CompletionList, median of sequential requests; measured warm,
  after the pipelined test (the row kept since the first runs), and cold, on fresh processes
  whose first large messages they are (as an editor's session meets them);
- for context, in-process: what relaying that CompletionList costs through lspmux's raw path,
  orjson loads+dumps, and a pygls-style typed path (lsprotocol/cattrs).

The table goes into docs/benchmarks.md between `<!-- bench:proxy -->` and
`<!-- /bench:proxy -->` (other sections are kept). Every wait is bounded; every process started
here is stopped at the end, also on error. Nothing but stdio pipes is used.

Usage: .venv/bin/python scripts/bench.py [--quick | --medium] [--output FILE] [--no-write] [--profile FILE]

It benchmarks the lspmux of the tree it is in (that tree goes first on the `PYTHONPATH` of
every process it starts): to compare two trees, run each tree's own copy of this script.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import gc
import importlib.metadata
import math
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bench_peers
import orjson
import psutil

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "scripts" / "bench_server.py"
DEFAULT_OUTPUT = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- bench:proxy -->"
END = "<!-- /bench:proxy -->"
FILE_TYPE = ".bench"
LANGUAGE_ID = "bench"

#: Targets of issue 21, by the way the client reaches the server: hover p50 added (ms),
#: pipelined requests/s as a share of direct, the 2.5 MB completion added (ms).
TARGETS: dict[str, tuple[float, float, float]] = {
    "proxy": (0.06, 0.70, 1.5),
    "daemon": (0.10, 0.50, 5.0),
    "daemon-bare": (0.10, 0.50, 5.0),
}

HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"content-length\s*:\s*(\d+)", re.IGNORECASE)
# Responses (from the server, or relayed by lspmux) start {"jsonrpc":"2.0","id":N,...
#: (rassumfrassum writes them with spaces: `{"jsonrpc": "2.0", "id": N, "result": {`.)
_RESPONSE_HEAD = re.compile(
    rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(\d+)\s*,\s*(?="(?:result|error)")'
)
_RESULT_OBJECT = re.compile(rb'"result"\s*:\s*\{')


def is_result(body: bytes, off: int) -> bool:
    """Whether the answer at `off` (after its id) is a result object."""
    return _RESULT_OBJECT.match(body, off) is not None


@dataclass(frozen=True)
class Sizes:
    """How much work one run does."""

    latency_rounds: int  # alternating direct/proxy rounds of hover latency
    latency_per_round: int
    warmup: int
    pipelined: int  # hover requests written at once
    pipeline_rounds: int
    completions: int
    completion_items: int
    micro_repeats: int  # in-process relay measurements of the CompletionList

    @property
    def latency_total(self) -> int:
        return self.latency_rounds * self.latency_per_round


FULL = Sizes(
    latency_rounds=4,
    latency_per_round=500,
    warmup=300,
    pipelined=20_000,
    pipeline_rounds=3,
    completions=20,
    completion_items=12_000,
    micro_repeats=5,
)
QUICK = Sizes(
    latency_rounds=2,
    latency_per_round=50,
    warmup=20,
    pipelined=500,
    pipeline_rounds=1,
    completions=3,
    completion_items=500,
    micro_repeats=1,
)
#: Between the two: enough requests for numbers to compare while iterating (a minute or so).
MEDIUM = dataclasses.replace(
    FULL, latency_rounds=2, latency_per_round=300, warmup=100, pipelined=10_000, pipeline_rounds=2,
    completions=8, micro_repeats=1,
)  # fmt: skip


class BenchError(Exception):
    """The benchmark could not run (a peer failed, timed out or answered wrongly)."""


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(msg: dict[str, Any]) -> bytes:
    return frame(orjson.dumps(msg))


# -- a raw LSP client on a subprocess's pipes ---------------------------------------------------


class Peer(asyncio.SubprocessProtocol):
    """One LSP server process (the bench server, or the proxy) and a minimal raw client for it.

    Responses are matched by id without parsing their bodies (`_RESPONSE_HEAD`); anything else
    is parsed: server→client requests are answered with null, notifications are dropped.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        #: further processes whose CPU counts as this peer's (the daemon behind a shim)
        self.also_counted: list[int] = []
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin: asyncio.WriteTransport | None = None
        self.exited: asyncio.Future[int | None] = self.loop.create_future()
        self._buf = bytearray()
        self._need = -1
        self._next_id = 1
        self._waiters: dict[int, asyncio.Future[tuple[bytes, int]]] = {}
        # pipelined mode: ids in [lo, hi) are only counted
        self._pipe_lo = self._pipe_hi = 0
        self._pipe_seen = 0
        self._pipe_errors = 0
        self._pipe_done: asyncio.Future[None] | None = None

    # transport plumbing

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.stdin = self.transport.get_pipe_transport(0)  # type: ignore[union-attr,assignment]

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            return
        buf = self._buf
        buf += data
        while True:
            if self._need < 0:
                end = buf.find(HEADER_END)
                if end < 0:
                    return
                m = _CONTENT_LENGTH.search(buf, 0, end)
                if m is None:
                    self._fail(BenchError(f"{self.name}: frame without Content-Length"))
                    return
                self._need = int(m.group(1))
                del buf[: end + 4]
            n = self._need
            if len(buf) < n:
                return
            if len(buf) == n:
                body = bytes(buf)
                buf.clear()
            else:
                body = bytes(buf[:n])
                del buf[:n]
            self._need = -1
            self._on_body(body)

    def process_exited(self) -> None:
        code = self.transport.get_returncode() if self.transport is not None else None
        if not self.exited.done():
            self.exited.set_result(code)
        self._fail(BenchError(f"{self.name} exited (code {code})"))

    def _fail(self, exc: BaseException) -> None:
        waiters, self._waiters = self._waiters, {}
        for fut in waiters.values():
            if not fut.done():
                fut.set_exception(exc)
        if self._pipe_done is not None and not self._pipe_done.done():
            self._pipe_done.set_exception(exc)

    def _on_body(self, body: bytes) -> None:
        m = _RESPONSE_HEAD.match(body)
        if m is not None:
            msg_id = int(m.group(1))
            if self._pipe_lo <= msg_id < self._pipe_hi:
                self._pipe_seen += 1
                if body.startswith(b'"error"', m.end()):
                    self._pipe_errors += 1
                if self._pipe_seen == self._pipe_hi - self._pipe_lo and self._pipe_done:
                    self._pipe_done.set_result(None)
                return
            fut = self._waiters.pop(msg_id, None)
            if fut is not None and not fut.done():
                fut.set_result((body, m.end()))
            return
        msg = orjson.loads(body)
        if "method" in msg and "id" in msg:  # a server→client request: answer it
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif "method" not in msg:  # a response in another key order
            fut = self._waiters.pop(msg.get("id"), None)
            if fut is not None and not fut.done():
                key = b'"result"' if "result" in msg else b'"error"'
                fut.set_result((body, body.find(key)))

    # sending

    def send(self, msg: dict[str, Any]) -> None:
        self.write(encode(msg))

    def write(self, data: bytes) -> None:
        if self.stdin is None or self.stdin.is_closing():
            raise BenchError(f"{self.name}: stdin is closed")
        self.stdin.write(data)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def start_request(self, method: str, params: Any) -> asyncio.Future[tuple[bytes, int]]:
        """Send a request; the future gets (raw body, offset of its "result"/"error" key)."""
        msg_id = self._next_id
        self._next_id += 1
        fut: asyncio.Future[tuple[bytes, int]] = self.loop.create_future()
        self._waiters[msg_id] = fut
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return fut

    async def call(self, method: str, params: Any, timeout: float = 30.0) -> Any:
        """A request's result, parsed; an error response raises BenchError."""
        body, _ = await asyncio.wait_for(self.start_request(method, params), timeout)
        msg = orjson.loads(body)
        if "error" in msg:
            raise BenchError(f"{self.name}: {method} failed: {msg['error']}")
        return msg.get("result")

    async def pipelined(self, blob: bytes, first_id: int, count: int, timeout: float) -> float:
        """Write `count` framed requests (ids first_id…) at once; seconds until all answered."""
        self._pipe_lo, self._pipe_hi = first_id, first_id + count
        self._pipe_seen = self._pipe_errors = 0
        self._pipe_done = self.loop.create_future()
        start = time.perf_counter()
        self.write(blob)
        try:
            await asyncio.wait_for(self._pipe_done, timeout)
        except TimeoutError:
            raise BenchError(
                f"{self.name}: {count:,} pipelined requests: {self._pipe_seen:,} answered "
                f"in {timeout:g} s"
            ) from None
        finally:
            self._pipe_lo = self._pipe_hi = 0
        elapsed = time.perf_counter() - start
        if self._pipe_errors:
            raise BenchError(f"{self.name}: {self._pipe_errors} pipelined requests failed")
        return elapsed

    def cpu_seconds(self) -> float:
        """User + system CPU time the process (and `also_counted`) used so far (0 when
        unknown)."""
        if self.transport is None:
            return 0.0
        total = 0.0
        for pid in [self.transport.get_pid(), *self.also_counted]:
            try:
                times = psutil.Process(pid).cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system
        return total

    def syscalls(self) -> int:
        """Read + write system calls the process has made so far (0 when unknown)."""
        if self.transport is None:
            return 0
        try:
            io = psutil.Process(self.transport.get_pid()).io_counters()
        except (psutil.Error, AttributeError):
            return 0
        return int(io.read_count + io.write_count)

    def reserve_ids(self, count: int) -> int:
        first = self._next_id
        self._next_id += count
        return first


@dataclass
class Running:
    """Processes started by this run, so that every one of them is stopped at the end."""

    peers: list[Peer] = field(default_factory=list)
    #: every process started, as psutil handles: they know their start time, so a pid that a
    #: process of someone else's has taken since is never signalled
    procs: dict[int, psutil.Process] = field(default_factory=dict)

    def _track(self, pid: int) -> None:
        with suppress(psutil.Error):
            self.procs.setdefault(pid, psutil.Process(pid))

    async def spawn(
        self, name: str, argv: list[str], *, cwd: Path, env: dict[str, str], stderr: Path
    ) -> Peer:
        loop = asyncio.get_running_loop()
        with stderr.open("ab") as err:
            _, peer = await loop.subprocess_exec(
                lambda: Peer(name),
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        assert peer.transport is not None
        self.peers.append(peer)
        self._track(peer.transport.get_pid())
        return peer

    def adopt_children(self, peer: Peer) -> None:
        """Remember the processes `peer` started (the proxy's backends) to stop them too."""
        if peer.transport is None:
            return
        with suppress(psutil.Error):
            for child in psutil.Process(peer.transport.get_pid()).children(recursive=True):
                self._track(child.pid)

    async def stop(self, peer: Peer, timeout: float = 10.0) -> int | None:
        """shutdown + exit, then wait for the process; kill it if it does not go."""
        if not peer.exited.done():
            with suppress(Exception):
                await peer.call("shutdown", None, timeout=timeout)
                peer.notify("exit", None)
                if peer.stdin is not None:
                    peer.stdin.close()
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(peer.exited), timeout)
        if not peer.exited.done() and peer.transport is not None:
            peer.transport.kill()
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(peer.exited), timeout)
        return peer.exited.result() if peer.exited.done() else None

    def leftovers(self) -> list[int]:
        """Processes of this run still alive (not counting zombies)."""
        alive = []
        for pid, proc in sorted(self.procs.items()):
            with suppress(psutil.Error):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(pid)
        return alive

    def kill_all(self) -> None:
        for peer in self.peers:
            if peer.transport is not None and not peer.exited.done():
                with suppress(ProcessLookupError):
                    peer.transport.kill()
        for pid in self.leftovers():
            with suppress(psutil.Error):
                self.procs[pid].kill()  # psutil checks it is still the same process
        for peer in self.peers:
            if peer.transport is not None:
                peer.transport.close()


# -- the workload -------------------------------------------------------------------------------


#: The ways the client reaches the bench server: directly, through a byte relay that parses
#: nothing (the floor any proxy process pays), through `lspmux proxy`, and through the daemon
#: (`lspmux client` → `lspmux server`) as an editor that declares markdown, snippets and links
#: and as a raw client that declares no capabilities at all (the shared server's answers are
#: then fitted for it: markdown → plain text, snippets → text).
PEERS = ("direct", "relay", "proxy", "daemon", "daemon-bare")
#: With --peers, two other LSP proxies (scripts/bench_peers.py) in the same rounds.
OTHERS = ("rass", "agent")
#: What each peer is called in the report.
TITLES = {
    "direct": "direct",
    "relay": "byte relay",
    "proxy": "proxy",
    "daemon": "daemon",
    "daemon-bare": "daemon, no capabilities",
    "rass": "rassumfrassum",
    "agent": "lsp-devtools agent",
}

Series = dict[str, list[float]]


def _series() -> Series:
    return {name: [] for name in PEERS + OTHERS}


@dataclass
class Results:
    sizes: Sizes
    hover: Series = field(default_factory=_series)
    hover_rounds: Series = field(default_factory=_series)  # the median of each round
    throughput: Series = field(default_factory=_series)  # requests/s, one per round
    completion: Series = field(default_factory=_series)
    #: the same on fresh processes of `PEERS`, right after start (`measure_completion(cold=True)`)
    completion_cold: Series = field(default_factory=_series)
    #: the very first 2.5 MB answer of each peer (seconds), one sample
    completion_first: dict[str, float] = field(default_factory=dict)
    #: resident memory (bytes) after the warm completions: of the proxy, and of the daemon
    rss_after: dict[str, int] = field(default_factory=dict)
    #: CPU seconds per pipelined request of the process the client talks to
    cpu_per_request: Series = field(default_factory=_series)
    #: read + write system calls per pipelined request, of the same process
    syscalls_per_request: Series = field(default_factory=_series)
    completion_bytes: int = 0
    micro: dict[str, float] = field(default_factory=dict)
    started: datetime.datetime = field(default_factory=lambda: datetime.datetime.now(datetime.UTC))
    load_before: tuple[float, float, float] = field(default_factory=os.getloadavg)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    leftovers: list[int] = field(default_factory=list)
    #: A peer proxy (`OTHERS`) whose pipelined test failed, and why: its cells say so.
    failed: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)  # of the peers, when measured

    @property
    def columns(self) -> tuple[str, ...]:
        """The report's columns: lspmux's ways, and the peer proxies when they were measured."""
        return PEERS + OTHERS if self.versions else PEERS


@contextmanager
def no_gc() -> Iterator[None]:
    """Keep the client's garbage collector out of the timed loops."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def hover_params(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 3}}


#: What an editor declares about the answers it takes (markdown, snippets, links): a shared
#: server's answers then reach it as they are (a client that declares less gets them fitted,
#: which parses them; see docs/sharing.md).
EDITOR_CAPABILITIES: dict[str, Any] = {
    "textDocument": {
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "completion": {
            "completionItem": {
                "snippetSupport": True,
                "documentationFormat": ["markdown", "plaintext"],
            }
        },
        "definition": {"linkSupport": True},
    }
}


async def initialize(
    peer: Peer, workspace: Path, capabilities: dict[str, Any] = EDITOR_CAPABILITIES
) -> None:
    await peer.call(
        "initialize",
        {
            "processId": os.getpid(),
            "clientInfo": {"name": "lspmux-bench"},
            "rootUri": workspace.as_uri(),
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
            "capabilities": capabilities,
        },
        timeout=60.0,
    )
    peer.notify("initialized", {})


async def open_and_wait(peer: Peer, uri: str, timeout: float = 60.0) -> None:
    """didOpen, then hover until the (possibly still starting) backend answers with a result."""
    peer.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": LANGUAGE_ID, "version": 1, "text": "bench\n"}},
    )
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        body, off = await asyncio.wait_for(
            peer.start_request("textDocument/hover", hover_params(uri)),
            max(deadline - time.monotonic(), 0.1),
        )
        if is_result(body, off):
            return
        last = body[:300].decode("utf-8", "replace")
        await asyncio.sleep(0.2)
    raise BenchError(f"{peer.name}: hover never answered with a result; last answer: {last}")


async def hover_once(peer: Peer, uri: str) -> float:
    start = time.perf_counter()
    body, off = await asyncio.wait_for(
        peer.start_request("textDocument/hover", hover_params(uri)), 10.0
    )
    elapsed = time.perf_counter() - start
    if not is_result(body, off):
        raise BenchError(f"{peer.name}: hover failed: {body[:300]!r}")
    return elapsed


async def measure_hover(peers: dict[str, tuple[Peer, str]], res: Results) -> None:
    sizes = res.sizes
    for peer, uri in peers.values():
        for _ in range(sizes.warmup):
            await hover_once(peer, uri)
    for _ in range(sizes.latency_rounds):
        for name, (peer, uri) in peers.items():
            with no_gc():
                samples = [await hover_once(peer, uri) for _ in range(sizes.latency_per_round)]
            res.hover[name].extend(samples)
            res.hover_rounds[name].append(statistics.median(samples))


def pipeline_blob(peer: Peer, uri: str, count: int) -> tuple[bytes, int]:
    first = peer.reserve_ids(count)
    params = hover_params(uri)
    blob = b"".join(
        encode(
            {"jsonrpc": "2.0", "id": first + i, "method": "textDocument/hover", "params": params}
        )
        for i in range(count)
    )
    return blob, first


#: How long a peer proxy (`OTHERS`) may take for one pipelined batch before its cells say it
#: failed (the slowest measured, the lsp-devtools agent, needs ~7 s for 20,000).
#: A peer that fails it is replaced by a fresh process for the completion test (`run`).
OTHERS_PIPELINE_TIMEOUT = 30.0


async def measure_throughput(peers: dict[str, tuple[Peer, str]], res: Results) -> None:
    """Pipelined rounds. lspmux's columns must pass; a peer proxy that does not answer a batch
    in time (rassumfrassum 0.3.5 stalls on a large one) gets "failed: why" in its cells and is
    not asked again (the rest of the run goes on)."""
    n = res.sizes.pipelined

    async def batch(name: str, peer: Peer, uri: str, count: int, timeout: float) -> float | None:
        blob, first = pipeline_blob(peer, uri, count)
        if name not in OTHERS:
            return await peer.pipelined(blob, first, count, timeout=timeout)
        try:
            return await peer.pipelined(blob, first, count, min(timeout, OTHERS_PIPELINE_TIMEOUT))
        except BenchError as exc:
            res.failed[name] = str(exc)
            return None

    for name, (peer, uri) in peers.items():  # warm-up: a tenth of the batch
        await batch(name, peer, uri, max(n // 10, 1), 60.0)
    for _ in range(res.sizes.pipeline_rounds):
        for name, (peer, uri) in peers.items():
            if name in res.failed:
                continue
            before, calls = peer.cpu_seconds(), peer.syscalls()
            with no_gc():
                elapsed = await batch(name, peer, uri, n, 120.0)
            if elapsed is None:
                continue
            res.throughput[name].append(n / elapsed)
            res.cpu_per_request[name].append((peer.cpu_seconds() - before) / n)
            res.syscalls_per_request[name].append((peer.syscalls() - calls) / n)


async def completion_once(peer: Peer, uri: str) -> tuple[float, bytes]:
    params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 3}}
    start = time.perf_counter()
    body, off = await asyncio.wait_for(peer.start_request("textDocument/completion", params), 30.0)
    elapsed = time.perf_counter() - start
    if not is_result(body, off):
        raise BenchError(f"{peer.name}: completion failed: {body[:300]!r}")
    return elapsed, body


async def measure_completion(
    peers: dict[str, tuple[Peer, str]], res: Results, *, cold: bool = False
) -> None:
    """Three untimed answers per peer (the answer checked once, fully parsed), then rounds of
    timed ones. `cold`: fresh processes' first requests, right after start, into `completion_cold`
    (and each peer's very first answer into `completion_first`); else into `completion`."""
    expected = res.sizes.completion_items
    series = res.completion_cold if cold else res.completion
    for name, (peer, uri) in peers.items():  # warm-up, and check the answer once, fully parsed
        for i in range(3):
            took, body = await completion_once(peer, uri)
            if cold and i == 0:
                res.completion_first[name] = took
        items = orjson.loads(body)["result"]["items"]
        if len(items) != expected:
            raise BenchError(f"{name}: completion had {len(items)} items, expected {expected}")
        res.completion_bytes = len(body)
    for _ in range(res.sizes.completions):
        for name, (peer, uri) in peers.items():
            with no_gc():
                elapsed, _ = await completion_once(peer, uri)
            series[name].append(elapsed)


# -- in-process relay costs of the same CompletionList -------------------------------------------


def _best_of(fn: Callable[[], object], repeats: int) -> float:
    """Median CPU seconds of `fn` over `repeats` runs (after one untimed run): CPU, not wall
    time, so that other processes on the machine count as little as they can."""
    fn()
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def measure_micro(res: Results, items: int) -> None:
    """What relaying the CompletionList response costs in-process, by path (seconds)."""
    import json

    sys.path.insert(0, str(ROOT))
    from lspmux.wire.framing import FrameParser
    from lspmux.wire.messages import rewrite_response_id, sniff_response

    sys.path.insert(0, str(SERVER.parent))
    from bench_server import completion_list

    result = completion_list(items)
    body = orjson.dumps({"jsonrpc": "2.0", "id": 7, "result": result})
    framed = frame(body)
    chunk = 65536  # what one pipe read delivers
    chunks = [framed[i : i + chunk] for i in range(0, len(framed), chunk)]

    def raw_relay() -> bytes:
        parser = FrameParser()
        out = b""
        for piece in chunks:
            for got in parser.feed(piece):
                assert isinstance(got, bytes)
                sniffed = sniff_response(got)
                assert sniffed is not None
                out = rewrite_response_id(got, sniffed[1], 42)  # written with its header
        return out

    from lspmux.wire.connection import Connection

    class Sink:  # a transport that takes every write (what the client's pipe would)
        def write(self, data: bytes) -> None:
            pass

        def writelines(self, pieces: list[bytes | memoryview]) -> None:
            pass

        def is_closing(self) -> bool:
            return False

        def get_write_buffer_size(self) -> int:
            return 0

    def quiet(_msg: dict[str, Any]) -> None:
        pass

    client = Connection("client", on_request=quiet, on_notification=quiet)
    client.attach_writer(Sink())  # type: ignore[arg-type]
    answered: list[int] = []
    # the bench server's answer to the first request of a connection (id 1)
    stream = memoryview(frame(orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": result})))

    def to_client(got: bytes, offset: int) -> None:
        answered.append(1)
        client.send_raw_response(got, offset, 42)

    def in_place_relay() -> None:  # the proxy's way: server connection → client connection
        server = Connection("server", on_request=quiet, on_notification=quiet)
        server.attach_writer(Sink())  # type: ignore[arg-type]
        server.request("textDocument/completion", None, quiet, raw=to_client)
        for i in range(0, len(stream), chunk):  # each read: the kernel's one copy
            buf = server.get_buffer(-1)
            n = min(len(buf), chunk, len(stream) - i)
            buf[:n] = stream[i : i + n]
            server.buffer_updated(n)
        assert answered.pop() == 1

    def orjson_relay() -> bytes:
        msg = orjson.loads(body)
        msg["id"] = 42
        return orjson.dumps(msg)

    from lspmux.routing import adapt, fit_raw

    kind = adapt.COMPLETION  # a completion answer's fitting kind (its route's `fit`)
    markdown_only = {
        "textDocument": {"completion": {"completionItem": {"documentationFormat": ["markdown"]}}}
    }

    def fit_parsed() -> bytes:  # what the daemon's fitting did before issue 21
        msg = orjson.loads(body)
        msg["result"] = adapt.adapt(kind, msg["result"], {})
        return orjson.dumps(msg)

    repeats = res.sizes.micro_repeats
    res.micro["raw"] = _best_of(raw_relay, repeats)
    res.micro["in_place"] = _best_of(in_place_relay, repeats)
    res.micro["orjson"] = _best_of(orjson_relay, repeats)
    res.micro["fit_parsed"] = _best_of(fit_parsed, repeats)
    res.micro["fit_raw"] = _best_of(lambda: fit_raw.fit_body(kind, body, {}), repeats)
    res.micro["scan"] = _best_of(lambda: fit_raw.needs_fitting(kind, body, markdown_only), repeats)
    try:
        from lsprotocol import converters
        from lsprotocol import types as t
    except ImportError:
        return
    conv = converters.get_converter()
    message = orjson.loads(body)

    def cattrs_only() -> object:
        obj = conv.structure(message, t.CompletionResponse)
        return conv.unstructure(obj, t.CompletionResponse)

    def typed_relay() -> bytes:  # what pygls does: json + structure, unstructure + json
        obj = conv.structure(json.loads(body), t.CompletionResponse)
        return json.dumps(conv.unstructure(obj, t.CompletionResponse)).encode()

    res.micro["cattrs"] = _best_of(cattrs_only, repeats)
    res.micro["typed"] = _best_of(typed_relay, repeats)


# -- running it ---------------------------------------------------------------------------------


def write_config(tmp: Path, items: int, extra_args: tuple[str, ...] = ()) -> Path:
    """A --config file defining the bench server for .bench files, and disabling any default
    server or linter that would also match them."""
    sys.path.insert(0, str(ROOT))
    from lspmux.config.loader import load_config

    probe = tmp / f"probe{FILE_TYPE}"
    cfg = load_config(tmp, [])
    lines = [
        "[servers.bench]",
        "command = "
        + orjson.dumps([sys.executable, str(SERVER), "--items", str(items), *extra_args]).decode(),
        f'file_types = ["{FILE_TYPE}"]',
        f'language_ids = ["{LANGUAGE_ID}"]',
        'root_markers = [".bench-root"]',
        "request_timeout = 120.0",
        "",
    ]
    for server in cfg.servers_for(str(probe), LANGUAGE_ID):
        lines += [f'[servers."{server.name}"]', "disabled = true", ""]
    for linter in cfg.linters_for(str(probe), LANGUAGE_ID):
        lines += [f'[linters."{linter.name}"]', "disabled = true", ""]
    path = tmp / "bench.toml"
    path.write_text("\n".join(lines))
    check = load_config(tmp, [path])
    names = [s.name for s in check.servers_for(str(probe), LANGUAGE_ID)]
    if names != ["bench"] or check.linters_for(str(probe), LANGUAGE_ID):
        raise BenchError(f"the bench config does not isolate the bench server: {names}")
    return path


#: How each process of `PEERS` but the shims is called in errors, and its stderr file.
SPAWNED = {
    "direct": ("bench_server", "server.stderr"),
    "relay": ("byte relay", "relay.stderr"),
    "proxy": ("lspmux proxy", "proxy.stderr"),
}


@dataclass
class Setup:
    """What every set of peers of one run shares."""

    running: Running
    tmp: Path
    workspace: Path
    uri: str
    config: Path
    env: dict[str, str]
    server: list[str]  # the bench server's argv


async def spawn_other(setup: Setup, name: str, folder: Path) -> Peer:
    """A peer proxy (`OTHERS`) around its own bench server."""
    argv = bench_peers.commands(setup.server)[name]
    return await setup.running.spawn(
        TITLES[name], argv, cwd=setup.workspace, env=setup.env, stderr=folder / f"{name}.stderr"
    )


async def start_peers(
    setup: Setup, names: tuple[str, ...], folder: Path, profile: Path | None = None
) -> tuple[dict[str, Peer], int]:
    """Fresh processes for `names` (the daemon's through a daemon of their own; logs in
    `folder`), each initialized with the bench document open: by name, and the daemon's pid
    (its caller stops it: `stop_daemon`, also on error)."""
    running, workspace, env, server = setup.running, setup.workspace, setup.env, setup.server
    socket_path = setup.tmp / "xdg-runtime" / f"bench-{folder.name}.sock"
    daemon_pid = await start_daemon(running, setup.config, socket_path, env, folder)
    client = [sys.executable, "-m", "lspmux", "client", "--connect", f"unix:{socket_path}"]
    by_name: dict[str, Peer] = {}
    for name in names:
        if name in OTHERS:
            by_name[name] = await spawn_other(setup, name, folder)
            continue
        if name == "proxy":
            argv = [sys.executable]
            argv += ["-m", "cProfile", "-o", str(profile)] if profile is not None else []
            argv += ["-m", "lspmux", "proxy", "--config", str(setup.config)]
            argv += ["--log-level", "warning", "--log-file", str(folder / "proxy.log")]
        else:
            argv = {
                "direct": server,
                "relay": [sys.executable, str(Path(__file__).resolve()), RELAY_FLAG, *server],
            }.get(name, [*client, "--no-autostart"])  # the daemon's ways: a shim each
        label, stderr = SPAWNED.get(name, (f"lspmux client ({name})", "client.stderr"))
        by_name[name] = await running.spawn(
            label, argv, cwd=workspace, env=env, stderr=folder / stderr
        )
    for name, peer in by_name.items():
        await ready(setup, name, peer)
        if name in ("daemon", "daemon-bare"):
            peer.also_counted.append(daemon_pid)
    return by_name, daemon_pid


async def ready(setup: Setup, name: str, peer: Peer) -> None:
    """`peer` initialized (as a raw client without capabilities for "daemon-bare") with the
    bench document open; the processes it started are counted as its own."""
    caps = {} if name == "daemon-bare" else EDITOR_CAPABILITIES
    await initialize(peer, setup.workspace, caps)
    await open_and_wait(peer, setup.uri)
    setup.running.adopt_children(peer)


async def stop_peers(setup: Setup, by_name: dict[str, Peer], daemon_pid: int) -> None:
    """shutdown + exit for each peer (each must exit 0), then the daemon."""
    for peer in by_name.values():
        # The lsp-devtools agent keeps retrying its inspector after its server exited and
        # never exits by itself: it is killed after the wait (noted in the report).
        agent = peer is by_name.get("agent")
        code = await setup.running.stop(peer, timeout=2.0 if agent else 10.0)
        if code != 0 and not agent:
            raise BenchError(f"{peer.name} exited with code {code} after shutdown/exit")
    await asyncio.sleep(0.2)
    stop_daemon(setup.running, daemon_pid)


async def run(
    sizes: Sizes, tmp: Path, profile: Path | None = None, versions: dict[str, str] | None = None
) -> Results:
    """The measurements in the order kept since the first runs (hovers, pipelined batches,
    the 2.5 MB answer warm), then the 2.5 MB answer cold, on fresh processes of lspmux's
    ways (`PEERS`): measured first on the same ones it would change what follows (the
    client's and the servers' heaps, hence their figures, depend on what they did before)."""
    res = Results(sizes, versions=versions or {})
    workspace = tmp / "workspace"
    workspace.mkdir()
    (workspace / ".bench-root").write_text("")
    (workspace / f"main{FILE_TYPE}").write_text("bench\n")
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg-config")  # no user config leaks in
    env["XDG_CACHE_HOME"] = str(tmp / "xdg-cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["XDG_RUNTIME_DIR"] = str(tmp / "xdg-runtime")
    (tmp / "xdg-runtime").mkdir(mode=0o700)
    env.pop("LSPMUX_LOG", None)
    env.pop("LSPMUX_ADDRESS", None)
    setup = Setup(
        running=Running(),
        tmp=tmp,
        workspace=workspace,
        uri=(workspace / f"main{FILE_TYPE}").as_uri(),
        config=write_config(tmp, sizes.completion_items),
        env=env,
        server=[sys.executable, str(SERVER), "--items", str(sizes.completion_items)],
    )
    cold_dir = tmp / "cold"
    cold_dir.mkdir()
    daemon_pids: list[int] = []
    try:
        names = PEERS + (OTHERS if versions else ())
        by_name, daemon_pid = await start_peers(setup, names, tmp, profile)
        daemon_pids.append(daemon_pid)
        peers = {name: (peer, setup.uri) for name, peer in by_name.items()}
        await measure_hover(peers, res)
        await measure_throughput(peers, res)
        for name in res.failed:  # stalled with a batch unanswered: a fresh one for the rest
            await setup.running.stop(by_name[name], timeout=2.0)
            by_name[name] = fresh = await spawn_other(setup, name, tmp)
            await ready(setup, name, fresh)
            peers[name] = (fresh, setup.uri)
        await measure_completion(peers, res)
        proxy = by_name["proxy"].transport
        assert proxy is not None
        for name, pid in (("proxy", proxy.get_pid()), ("daemon", daemon_pid)):
            with suppress(psutil.Error):  # what the large answers left it holding
                res.rss_after[name] = psutil.Process(pid).memory_info().rss
        await stop_peers(setup, by_name, daemon_pids.pop())
        # The cold answer: fresh processes whose first large message it is.
        by_name, daemon_pid = await start_peers(setup, PEERS, cold_dir)
        daemon_pids.append(daemon_pid)
        await measure_completion({n: (p, setup.uri) for n, p in by_name.items()}, res, cold=True)
        await stop_peers(setup, by_name, daemon_pids.pop())
        res.leftovers = setup.running.leftovers()
    except BaseException:
        logs = ("proxy.log", "daemon.log", "proxy.stderr", "client.stderr", "relay.stderr")
        logs += ("rass.stderr", "agent.stderr") if versions else ()
        for folder in (tmp, cold_dir):
            print_tails(folder, (*logs, "server.stderr"))
        raise
    finally:
        for pid in daemon_pids:
            stop_daemon(setup.running, pid)
        setup.running.kill_all()
    return res


async def start_daemon(
    running: Running, config: Path, socket_path: Path, env: dict[str, str], cwd: Path
) -> int:
    """`lspmux server` on a private socket; it runs in `cwd` (not here: `python -m` would
    import the lspmux of the current folder before PYTHONPATH's)."""
    log = cwd / "daemon.log"
    argv = [sys.executable, "-m", "lspmux", "server", "--listen", f"unix:{socket_path}"]
    argv += ["--config", str(config), "--log-level", "warning", "--log-file", str(log)]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    running._track(proc.pid)
    deadline = time.monotonic() + 30
    while not socket_path.exists():
        if time.monotonic() > deadline or proc.returncode is not None:
            raise BenchError(f"the daemon did not start; see {log}")
        await asyncio.sleep(0.05)
    return proc.pid


def stop_daemon(running: Running, pid: int) -> None:
    """SIGTERM to the daemon `pid` (0: none) once its children are tracked; wait for them."""
    if not pid:
        return
    children: list[psutil.Process] = []
    with suppress(psutil.Error):
        children = psutil.Process(pid).children(recursive=True)
    for child in children:
        running._track(child.pid)
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    with suppress(psutil.Error):
        psutil.Process(pid).wait(15)
    psutil.wait_procs(children, timeout=15)  # the daemon stops its servers as it exits


def print_tails(folder: Path, names: tuple[str, ...]) -> None:
    """The end of each log in `folder` that has something in it, to stderr (after a failure)."""
    for name in names:
        path = folder / name
        if path.exists() and path.stat().st_size:
            tail = path.read_text(errors="replace")[-3000:]
            print(f"--- {name} (tail) ---\n{tail}", file=sys.stderr)


# -- the byte relay: the floor ----------------------------------------------------------------

RELAY_FLAG = "--relay-child"


async def _relay(
    argv: list[str],
    up: Callable[[bytes], bytes] | None = None,
    down: Callable[[bytes], bytes] | None = None,
) -> int:
    """Run `argv` and copy bytes stdin → its stdin and its stdout → stdout, parsing nothing;
    with `up` and `down` (scripts/bench_floor.py's thin relays), each read is written as they
    turn it (the whole messages in it, their ids rewritten)."""
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[int] = loop.create_future()
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)

    class Child(asyncio.SubprocessProtocol):
        def pipe_data_received(self, fd: int, data: bytes) -> None:
            out.write(data if down is None else down(data))

        def process_exited(self) -> None:
            if not exited.done():
                exited.set_result(child.get_returncode() or 0)

    child, _ = await loop.subprocess_exec(
        Child, *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    child_in: asyncio.WriteTransport = child.get_pipe_transport(0)  # type: ignore[assignment]

    class Stdin(asyncio.Protocol):
        def data_received(self, data: bytes) -> None:
            child_in.write(data if up is None else up(data))

        def eof_received(self) -> bool | None:
            child_in.close()
            return None

    await loop.connect_read_pipe(Stdin, sys.stdin.buffer)
    try:
        return await exited
    finally:
        child.close()


# -- the report ----------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (q from 0 to 100), nearest-rank on sorted values."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def ms(seconds: float, digits: int = 3) -> str:
    return f"{seconds * 1000:.{digits}f} ms"


def yes(ok: bool) -> str:
    return "**yes**" if ok else "**NO**"


def machine() -> str:
    model = platform.processor() or platform.machine()
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break

    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    return (
        f"{os.cpu_count()} CPUs ({model}), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"uvloop {version('uvloop')}, orjson {version('orjson')}, "
        f"lsprotocol {version('lsprotocol')}, cattrs {version('cattrs')}, "
        f"lspmux's C speedups {speedups_status()}"
    )


def speedups_status() -> str:
    """Whether the lspmux processes measured use the C speedups (`lspmux/speedups.py`): they
    load them as this process does (the same checkout and environment)."""
    sys.path.insert(0, str(ROOT))
    from lspmux import speedups

    return speedups.status


def revision() -> str:
    """The commit measured, and whether lspmux/ had uncommitted changes."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "lspmux"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "an unknown revision"
    return f"commit {commit}" + (" with uncommitted changes in lspmux/" if dirty else "")


LSPMUX = ("proxy", "daemon", "daemon-bare")


def report(res: Results, quick: bool) -> str:
    s = res.sizes
    cols = res.columns
    hover = {name: (pct(res.hover[name], 50), pct(res.hover[name], 95)) for name in cols}
    thr = {name: statistics.median(res.throughput[name] or [math.nan]) for name in cols}
    comp = {name: statistics.median(res.completion[name]) for name in cols}
    cold = {name: statistics.median(res.completion_cold[name] or [math.nan]) for name in cols}
    cpu = {name: statistics.median(res.cpu_per_request[name] or [math.nan]) for name in cols}
    calls = {name: statistics.median(res.syscalls_per_request[name] or [math.nan]) for name in cols}

    def pipelined_cell(name: str) -> str:
        """Pipelined requests/s and the share of direct, or why the peer has none."""
        if name in res.failed:
            return f"failed: {res.failed[name]}"
        return f"{thr[name]:,.0f} ({thr[name] / thr['direct']:.0%})"

    peers = "".join(f", {n} {v}" for n, v in res.versions.items())
    mb = res.completion_bytes / 1e6
    when = res.started.strftime("%Y-%m-%d %H:%M UTC")
    load = " → ".join("/".join(f"{x:.2f}" for x in la) for la in (res.load_before, res.load_after))

    def row(label: str, values: dict[str, str]) -> str:
        return f"| {label} | " + " | ".join(values[name] for name in res.columns) + " |"

    def rounds(name: str) -> str:
        pairs = zip(res.hover_rounds["direct"], res.hover_rounds[name], strict=True)
        return ", ".join(f"{(p - d) * 1000:+.3f}" for d, p in pairs)

    lines = [
        BEGIN,
        "## Proxy overhead",
        "",
        "<!-- Generated by scripts/bench.py (make bench); edits between the markers are lost. -->",
        "",
    ]
    if quick:
        lines += ["**Quick mode (`--quick`): tiny sizes, the numbers mean nothing.**", ""]
    lines += [
        f"Measured {when}, lspmux at {revision()}, on {machine()}{peers}. Load average (1/5/15 min) "
        f"before → after the run: {load}.",
        "",
        "One raw client (asyncio pipes + orjson, no LSP library) sends the same workload to "
        "`scripts/bench_server.py`, an LSP server that answers at once: **direct**ly; through a "
        "**byte relay** (a uvloop process that copies bytes both ways and parses nothing: the "
        "floor any proxy process pays for the extra hop); through **`lspmux proxy`** "
        "(`--config bench.toml`, the bench server as the only server for `.bench` files); and "
        "through the **daemon** (`lspmux client` → `lspmux server`, one shared bench server; "
        "the client passes its stdin and stdout to the daemon, which then serves them itself), "
        "once as an editor that declares markdown, snippets and links, and once as a raw "
        "client that declares **no capabilities** (the shared server's markdown and snippets "
        "are fitted for it). All alternate in rounds, so that a change in machine load hits "
        "all of them.",
        "",
        "| measurement | " + " | ".join(TITLES[n] for n in cols) + " |",
        "|---|" + "---:|" * len(cols),
        row(
            f"hover latency p50 ({s.latency_total:,} sequential requests)",
            {n: ms(v[0]) for n, v in hover.items()},
        ),
        row("hover latency p95", {n: ms(v[1]) for n, v in hover.items()}),
        row(
            f"pipelined hover throughput ({s.pipelined:,} requests written at once), requests/s",
            {n: pipelined_cell(n) for n in cols},
        ),
        row(
            "CPU time per pipelined request (the process the client talks to; for the daemon, "
            "shim + daemon)",
            {n: "—" if math.isnan(v) else f"{v * 1e6:.1f} µs" for n, v in cpu.items()},
        ),
        row(
            f"completion latency, {mb:.2f} MB CompletionList ({s.completion_items:,} items), "
            f"median of {s.completions}",
            {n: ms(v, 2) for n, v in comp.items()},
        ),
        row(
            f"the same, cold: fresh processes, their first requests after `initialize`, "
            f"median of {s.completions}",
            {n: "—" if math.isnan(v) else ms(v, 2) for n, v in cold.items()},
        ),
        "",
        "Against the targets of issue 21 (added = through lspmux minus direct, same run; the "
        "2.5 MB answer warm, after the pipelined test, and cold, as a new session meets it):",
        "",
        "| | hover p50 added | pipelined, share of direct | 2.5 MB completion added | "
        "2.5 MB added, cold |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in LSPMUX:
        t_hover, t_share, t_comp = TARGETS[name]
        added = hover[name][0] - hover["direct"][0]
        share = thr[name] / thr["direct"]
        added_c = comp[name] - comp["direct"]
        added_cold = cold[name] - cold["direct"]
        lines.append(
            f"| {TITLES[name]} | {ms(added)} (≤ {t_hover} ms: "
            f"{yes(added <= t_hover / 1000)}) | {share:.0%} (≥ {t_share:.0%}: "
            f"{yes(share >= t_share)}) | {ms(added_c, 2)} (≤ {t_comp:g} ms: "
            f"{yes(added_c <= t_comp / 1000)}) | {ms(added_cold, 2)} (≤ {t_comp:g} ms: "
            f"{yes(added_cold <= t_comp / 1000)}) |"
        )
    if res.versions:
        lines += [
            "",
            "Beside the other LSP proxies (`--peers`: rassumfrassum run as `rass --log-level "
            "silent -- <server>`, the lsp-devtools agent as `lsp-devtools agent -- <server>`, "
            "both from `.bench-peers/`; added = minus direct, same run):",
            "",
            "| | hover p50 added | pipelined, share of direct | 2.5 MB completion added |",
            "|---|---:|---:|---:|",
        ]
        for name in cols[1:]:
            lines.append(
                f"| {TITLES[name]} | {ms(hover[name][0] - hover['direct'][0])} | "
                f"{pipelined_cell(name)} | "
                f"{ms(comp[name] - comp['direct'], 2)} |"
            )
    lines += [
        "",
        "- **Latency** is the client's wall time from writing a request to having read its whole "
        "response. Added hover p50 per round of "
        f"{s.latency_per_round} requests, in ms: "
        + "; ".join(f"{TITLES[n]} {rounds(n)}" for n in LSPMUX)
        + ".",
        "- **Throughput** counts *requests answered* per second: from writing all "
        f"{s.pipelined:,} requests in one write until the last response is read; median of "
        f"{s.pipeline_rounds} rounds (proxy rounds: "
        + ", ".join(f"{x:,.0f}" for x in res.throughput["proxy"])
        + "). Each request is two messages through the proxy, the request in and the response "
        f"out, so the proxy relayed {2 * thr['proxy']:,.0f} messages/s. The proxy made "
        f"{calls['proxy']:.3f} read/write system calls per request (writes are coalesced per "
        "read).",
        "- lspmux relays the completion answer as raw bytes with only its id rewritten "
        "(`sniff_response` + `rewrite_response_id`); it never parses the list. For a client "
        "that declared no capabilities, the daemon fits only what the client cannot take.",
        "- **Cold and warm 2.5 MB answer**: the warm row comes after the pipelined batches "
        f"({s.pipelined:,} hovers each), in the same processes as every row above. The cold "
        "row is measured last, on fresh processes of lspmux's ways (a daemon of their own), "
        "whose first large messages they are, as a new editor's session meets them (measured "
        "first on the same processes, it changed every figure after it: what a process's "
        "allocator costs depends on what it did before; lspmux/memory.py). Each one's very "
        "first 2.5 MB answer there (one sample, not in the medians; through the daemon it may "
        "start the fitting worker), in ms: "
        + ", ".join(f"{TITLES[n]} {v * 1000:.2f}" for n, v in res.completion_first.items())
        + "."
        + (
            " Resident memory after the warm row: "
            + ", ".join(f"{n} {v / 2**20:.1f} MiB" for n, v in res.rss_after.items())
            + "."
            if res.rss_after
            else ""
        ),
        "",
    ]
    if res.micro:
        lines += [
            f"For context, what relaying that {mb:.2f} MB response costs inside one process, by "
            f"path (median of {s.micro_repeats}):",
            "",
            "| relay path | ms of CPU per response |",
            "|---|---:|",
            "| lspmux raw: FrameParser (64 KiB reads) + `sniff_response` + "
            "`rewrite_response_id` | "
            f"{res.micro['raw'] * 1000:.2f} |",
            "| the proxy's way: the server connection reads it in place (64 KiB reads into "
            "`get_buffer`), sniffs it and hands it to the client connection "
            "(`send_raw_response`: header, new head and the body's bytes written as they are) | "
            f"{res.micro['in_place'] * 1000:.2f} |",
            f"| orjson loads + dumps | {res.micro['orjson'] * 1000:.2f} |",
            "| fitted for a client without markdown, parsed: orjson loads + `adapt.adapt` + "
            f"dumps (the daemon's fitting before) | {res.micro['fit_parsed'] * 1000:.2f} |",
            "| fitted for that client in place: `fit_raw.fit_body` (the markdown documentation "
            f"rewritten, the other bytes kept) | {res.micro['fit_raw'] * 1000:.2f} |",
            "| nothing to fit (a client that takes markdown, no snippets; the list has none): "
            f"`fit_raw.needs_fitting`, then relayed | {res.micro['scan'] * 1000:.2f} |",
        ]
        if "cattrs" in res.micro:
            lines += [
                "| lsprotocol/cattrs structure + unstructure (`CompletionResponse`) | "
                f"{res.micro['cattrs'] * 1000:.1f} |",
                "| pygls-style typed relay: json.loads + structure + unstructure + json.dumps | "
                f"{res.micro['typed'] * 1000:.1f} |",
            ]
        lines.append("")
    lines += [
        "Reproduce: `make bench` (or `.venv/bin/python scripts/bench.py`; `--quick` for a smoke "
        "run, `--peers` to add the other proxies, `--no-write` to only print, `--profile FILE` to run the proxy under cProfile).",
        END,
    ]
    return "\n".join(lines)


def write_section(path: Path, section: str, begin: str = BEGIN, end_mark: str = END) -> None:
    """Replace the section of `path` between `begin` and `end_mark` (bench:proxy unless told),
    keeping everything else (or add it)."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    start, end = text.find(begin), text.find(end_mark)
    if start >= 0 and end > start:
        text = text[:start] + section + text[end + len(end_mark) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _runner() -> Callable[[Any], Any]:
    """uvloop's runner when installed (as `lspmux` itself uses), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run
    return uvloop.run  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [RELAY_FLAG]:
        return int(_runner()(_relay(argv[1:])))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument(
        "--medium", action="store_true", help="mid sizes, never written: for before/after"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="markdown file")
    parser.add_argument("--no-write", action="store_true", help="print the section only")
    parser.add_argument("--timeout", type=float, default=900.0, help="whole-run limit (s)")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="run the proxy under cProfile, stats to FILE (numbers are then not written)",
    )
    parser.add_argument(
        "--peers", action="store_true", help="also measure rassumfrassum and the lsp-devtools agent"
    )
    args = parser.parse_args(argv)
    versions: dict[str, str] = {}
    if args.peers:
        try:
            versions = bench_peers.ensure()
        except bench_peers.PeerInstallError as exc:
            print(f"bench: --peers: {exc}", file=sys.stderr)
            return 1
    sizes = QUICK if args.quick else MEDIUM if args.medium else FULL
    runner = _runner()
    with tempfile.TemporaryDirectory(prefix="lspmux-bench-") as tmp_name:
        tmp = Path(tmp_name)

        async def bounded() -> Results:
            return await asyncio.wait_for(run(sizes, tmp, args.profile, versions), args.timeout)

        try:
            res = runner(bounded())
        except (TimeoutError, BenchError) as exc:
            print(f"bench: {exc or 'timed out'}", file=sys.stderr)
            return 1
        print("measuring in-process relay costs…", file=sys.stderr)
        measure_micro(res, sizes.completion_items)
    res.load_after = os.getloadavg()
    section = report(res, args.quick)
    print(section)
    if res.leftovers:
        print(f"bench: processes still running after the run: {res.leftovers}", file=sys.stderr)
        return 1
    if not args.no_write and args.profile is None and not args.medium:
        write_section(args.output, section)
        print(f"written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
