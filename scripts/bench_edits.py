"""The edit benchmark: what lspmux adds to editing, from 10 KB to 10 MB documents, many documents.

The same raw client as scripts/bench.py talks to `scripts/bench_server.py --incremental` (an
instant stub that takes incremental edits and ignores them until asked for the text) three ways
in one run: directly, through `lspmux proxy`, and through the daemon (`lspmux client` →
`lspmux server`). Measured:

- one single-character didChange followed by a hover, at 10 KB, 1 MB and 10 MB: the median
  time until the hover's answer, next to a hover alone, in rounds alternating between the
  three; what lspmux adds to the edit is (edit+hover - hover) through lspmux minus the same
  direct;
- opening a 10 MB document (didOpen, then a hover on it): the time added, and what the
  lspmux process's RSS grew by, per byte of the document's UTF-8 (after opening, and again
  after its first edits, when the text has been cut into chunks);
- 1,000 edits of a 10 MB document written at once, then a hover: the time until its answer
  (every edit processed before it), then the text the stub ends with, compared with the
  client's (SHA-256);
- 5,000 open documents of 10 KB: hover latency with and without them, in alternating phases
  (opened, closed, opened again).

The table goes into docs/benchmarks.md between `<!-- bench:edits -->` and `<!-- /bench:edits -->`.
`--json FILE` also writes the raw figures; `--before FILE` (figures of an earlier run, e.g. of
main's code through `--lspmux-root`) adds them as a "before" column. Every wait is bounded and
every process started here is stopped at the end.

Usage: .venv/bin/python scripts/bench_edits.py [--quick] [--output FILE] [--no-write]
           [--json FILE] [--before FILE] [--lspmux-root DIR] [--cycles N] [--stream-timeout S]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import hashlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import (
    FILE_TYPE,
    LANGUAGE_ID,
    ROOT,
    BenchError,
    Peer,
    Running,
    _runner,
    encode,
    initialize,
    no_gc,
    print_tails,
    start_daemon,
    write_config,
    write_section,
)

DEFAULT_OUTPUT = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- bench:edits -->"
END = "<!-- /bench:edits -->"
PEERS = ("direct", "proxy", "daemon")
KB, MB = 1_000, 1_000_000

#: Targets of issue 13.
TARGET_EDIT_MS = 0.1
TARGET_STREAM_S = 1.0
TARGET_OPEN_MS = 50.0
TARGET_MEMORY = 1.5
TARGET_MANY = 0.10
#: Seconds to wait before reading a process's RSS (lspmux trims freed memory 0.5 s after a
#: large document: lspmux/memory.py).
SETTLE = 1.0


@dataclass(frozen=True)
class Sizes:
    docs: tuple[int, ...]  # document sizes of the edit+hover measurement
    cycles: int  # edit+hover (and hover) samples per round and peer
    rounds: int
    warmup: int
    big: int  # the document opened, then streamed to
    stream: int  # edits streamed
    many: int  # documents opened at once
    many_size: int
    hovers: int  # hover samples per round, before and after opening them


FULL = Sizes(
    docs=(10 * KB, MB, 10 * MB),
    cycles=300,
    rounds=3,
    warmup=30,
    big=10 * MB,
    stream=1000,
    many=5000,
    many_size=10 * KB,
    hovers=500,
)
QUICK = Sizes(
    docs=(10 * KB, 200 * KB),
    cycles=20,
    rounds=1,
    warmup=5,
    big=200 * KB,
    stream=100,
    many=50,
    many_size=2 * KB,
    hovers=20,
)


def make_text(size: int) -> str:
    """About `size` bytes of ASCII code-like lines of ~57 characters, "\\n"-broken."""
    line = "    value_{:07d} = compute(alpha, beta) + 42  # padding\n"
    return "".join(line.format(i) for i in range(max(size // len(line.format(0)), 1)))


class Model:
    """The client's text, as lines; edits insert at (line, character), ASCII only."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.size = len(text.encode())

    def insert(self, line: int, character: int, s: str) -> None:
        old = self.lines[line]
        self.lines[line] = old[:character] + s + old[character:]

    def sha256(self) -> str:
        return hashlib.sha256("\n".join(self.lines).encode()).hexdigest()


@dataclass
class Doc:
    uri: str
    model: Model
    version: int = 1
    edits: int = 0

    def change(self, line: int, character: int = 10, s: str = "x") -> bytes:
        """One didChange inserting `s` (applied to the model too), framed."""
        self.version += 1
        self.edits += 1
        self.model.insert(line, character, s)
        pos = {"line": line, "character": character}
        return encode(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": self.uri, "version": self.version},
                    "contentChanges": [{"range": {"start": pos, "end": pos}, "text": s}],
                },
            }
        )

    def next_line(self) -> int:
        return (self.edits * 7919) % (len(self.model.lines) - 1)


def open_message(uri: str, text: str) -> bytes:
    return encode(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": LANGUAGE_ID, "version": 1, "text": text}
            },
        }
    )


def hover_params(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 3}}


async def hover(peer: Peer, uri: str, timeout: float = 60.0) -> None:
    body, off = await asyncio.wait_for(
        peer.start_request("textDocument/hover", hover_params(uri)), timeout
    )
    if not body.startswith(b'"result":{', off):
        raise BenchError(f"{peer.name}: hover failed: {body[:300]!r}")


async def timed_hover(peer: Peer, uri: str, before: bytes = b"", timeout: float = 60.0) -> float:
    """Write `before` (edits, an open), then a hover: seconds until its answer."""
    start = time.perf_counter()
    if before:
        peer.write(before)
    await hover(peer, uri, timeout)
    return time.perf_counter() - start


def rss(pid: int) -> int:
    with suppress(psutil.Error):
        return int(psutil.Process(pid).memory_info().rss)
    return 0


@dataclass
class Results:
    sizes: Sizes
    lspmux_root: str
    #: per document size, per peer: medians (seconds) of edit+hover and of hover alone
    edit_hover: dict[str, dict[str, float]] = field(default_factory=dict)
    hover_only: dict[str, dict[str, float]] = field(default_factory=dict)
    open_s: dict[str, float] = field(default_factory=dict)
    open_samples: dict[str, list[float]] = field(default_factory=dict)  # seconds, per peer
    open_memory: dict[str, float] = field(default_factory=dict)  # RSS growth / UTF-8 size
    edited_memory: dict[str, float] = field(default_factory=dict)
    stream_s: dict[str, float | None] = field(default_factory=dict)  # None: not within the limit
    stream_ok: dict[str, bool | None] = field(default_factory=dict)
    many_before: dict[str, float] = field(default_factory=dict)
    many_after: dict[str, float] = field(default_factory=dict)
    many_memory: dict[str, float] = field(default_factory=dict)  # RSS growth, bytes per document
    started: str = field(default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat())
    load: tuple[float, float, float] = field(default_factory=os.getloadavg)


# -- the measurements ---------------------------------------------------------------------------


async def measure_edits(
    peers: dict[str, Peer], workspace: Path, res: Results, stream_timeout: float
) -> None:
    s = res.sizes
    for size in s.docs:
        key = label(size)
        text = make_text(size)
        docs = {}
        for name, peer in peers.items():
            doc = Doc((workspace / f"edit{size}{FILE_TYPE}").as_uri(), Model(text))
            await timed_hover(peer, doc.uri, open_message(doc.uri, text))
            for _ in range(s.warmup):
                await timed_hover(peer, doc.uri, doc.change(doc.next_line()), stream_timeout)
            docs[name] = doc
        both: dict[str, list[float]] = {n: [] for n in peers}
        alone: dict[str, list[float]] = {n: [] for n in peers}
        for _ in range(s.rounds):
            for name, peer in peers.items():
                doc = docs[name]
                with no_gc():
                    for _ in range(s.cycles):
                        edit = doc.change(doc.next_line())
                        both[name].append(await timed_hover(peer, doc.uri, edit, stream_timeout))
                        alone[name].append(await timed_hover(peer, doc.uri))
        res.edit_hover[key] = {n: statistics.median(v) for n, v in both.items()}
        res.hover_only[key] = {n: statistics.median(v) for n, v in alone.items()}
        for name, peer in peers.items():
            await check_text(peer, docs[name])
        print(f"edits at {key}: {res.edit_hover[key]}", file=sys.stderr)


async def check_text(peer: Peer, doc: Doc) -> bool:
    """Whether the stub's text of `doc` (through `peer`) is the client's."""
    got = await peer.call("bench/text", {"textDocument": {"uri": doc.uri}}, timeout=120.0)
    if not got or got["sha256"] != doc.model.sha256():
        raise BenchError(f"{peer.name}: the server's text of {doc.uri} is not the client's: {got}")
    return True


def close_message(uri: str) -> bytes:
    return encode(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didClose",
            "params": {"textDocument": {"uri": uri}},
        }
    )


#: Opens of the big document timed per peer (each of its own file, closed after), in rounds
#: that go through the peers in turn, so that a change of the machine's load hits them all.
OPEN_SAMPLES = 5


async def measure_open(
    peers: dict[str, Peer], pids: dict[str, int], workspace: Path, res: Results
) -> dict[str, Doc]:
    """Open the big document on each peer: time added (median of `OPEN_SAMPLES` opens) and
    RSS growth (the first open); the documents, left open."""
    text = make_text(res.sizes.big)
    docs = {}
    for name, peer in peers.items():
        doc = docs[name] = Doc((workspace / f"big{FILE_TYPE}").as_uri(), Model(text))
        pid = pids.get(name)
        before = rss(pid) if pid else 0
        first = await timed_hover(peer, doc.uri, open_message(doc.uri, text))
        res.open_samples.setdefault(name, []).append(first)
        if pid:
            await asyncio.sleep(SETTLE)
            res.open_memory[name] = (rss(pid) - before) / doc.model.size
            # A few edits: the text is cut into chunks (and the whole string freed).
            edits = b"".join(doc.change(doc.next_line()) for _ in range(5))
            await timed_hover(peer, doc.uri, edits, timeout=60.0)
            await asyncio.sleep(SETTLE)
            res.edited_memory[name] = (rss(pid) - before) / doc.model.size
    for i in range(1, OPEN_SAMPLES if res.sizes.big >= 1_000_000 else 1):
        for name, peer in peers.items():
            uri = (workspace / f"big-{i}{FILE_TYPE}").as_uri()
            took = await timed_hover(peer, uri, open_message(uri, text))
            res.open_samples[name].append(took)
            await timed_hover(peer, uri, close_message(uri))
            await asyncio.sleep(0.2)  # the freed text's memory is given back meanwhile
    for name, samples in res.open_samples.items():
        res.open_s[name] = statistics.median(samples)
        shown = ", ".join(f"{x * 1000:.1f}" for x in samples)
        print(f"{name}: open {res.open_s[name] * 1000:.1f} ms (samples: {shown})", file=sys.stderr)
    return docs


async def measure_stream(
    peers: dict[str, Peer], pids: dict[str, int], docs: dict[str, Doc], res: Results, limit: float
) -> None:
    """Write the edits of the big document at once, then a hover; check the final text."""
    s = res.sizes
    for name, peer in peers.items():
        doc = docs[name]
        pid = pids.get(name)
        lines = len(doc.model.lines) - 1
        stride = max(lines // s.stream, 1)
        blob = b"".join(doc.change(k * stride % lines) for k in range(s.stream))
        try:
            res.stream_s[name] = await timed_hover(peer, doc.uri, blob, timeout=limit)
        except TimeoutError:
            res.stream_s[name] = res.stream_ok[name] = None
            print(f"{name}: {s.stream} edits not processed within {limit:g}s", file=sys.stderr)
            with suppress(ProcessLookupError, psutil.Error):  # it would hold the CPU for long
                os.kill(pid or peer.transport.get_pid(), signal.SIGKILL)  # type: ignore[union-attr]
            continue
        res.stream_ok[name] = await check_text(peer, doc)
        print(f"{name}: stream {res.stream_s[name]:.3f} s", file=sys.stderr)


async def measure_many(
    peers: dict[str, Peer], pids: dict[str, int], workspace: Path, res: Results
) -> None:
    """Hover latency without and with the many documents open, in alternating phases (opened,
    then closed, then opened again…) so that a change of the machine's load hits both."""
    s = res.sizes
    text = make_text(s.many_size)
    probe = {n: (workspace / f"probe{FILE_TYPE}").as_uri() for n in peers}
    for name, peer in peers.items():
        await timed_hover(peer, probe[name], open_message(probe[name], "probe\n"))
    uris = [(workspace / f"many{i:05d}{FILE_TYPE}").as_uri() for i in range(s.many)]
    opens = b"".join(open_message(uri, text) for uri in uris)
    closes = b"".join(close_message(uri) for uri in uris)
    without: dict[str, list[float]] = {n: [] for n in peers}
    with_many: dict[str, list[float]] = {n: [] for n in peers}

    async def hovers(into: dict[str, list[float]]) -> None:
        for name, peer in peers.items():
            with no_gc():
                for _ in range(s.hovers):
                    into[name].append(await timed_hover(peer, probe[name]))

    for phase in range(s.rounds):
        await hovers(without)
        for name, peer in peers.items():
            pid = pids.get(name)
            before = rss(pid) if pid else 0
            await timed_hover(peer, probe[name], opens, timeout=300.0)
            if pid and phase == 0:
                await asyncio.sleep(SETTLE)
                res.many_memory[name] = (rss(pid) - before) / s.many
        await hovers(with_many)
        for name, peer in peers.items():
            await timed_hover(peer, probe[name], closes, timeout=300.0)
    res.many_before.update({n: statistics.median(v) for n, v in without.items()})
    res.many_after.update({n: statistics.median(v) for n, v in with_many.items()})


# -- running it ---------------------------------------------------------------------------------


def label(size: int) -> str:
    return f"{size // MB} MB" if size >= MB else f"{size // KB} KB"


async def run(sizes: Sizes, tmp: Path, lspmux_root: Path, stream_timeout: float) -> Results:
    res = Results(sizes, str(lspmux_root))
    workspace = tmp / "workspace"
    workspace.mkdir()
    (workspace / ".bench-root").write_text("")
    config = write_config(tmp, 10, ("--incremental",))
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg-config")
    env["XDG_CACHE_HOME"] = str(tmp / "xdg-cache")
    env["XDG_RUNTIME_DIR"] = str(tmp / "xdg-runtime")
    (tmp / "xdg-runtime").mkdir(mode=0o700)
    env["PYTHONPATH"] = str(lspmux_root)
    env.pop("LSPMUX_LOG", None)
    env.pop("LSPMUX_ADDRESS", None)
    running = Running()
    server = [sys.executable, str(ROOT / "scripts" / "bench_server.py"), "--incremental"]
    daemon_pid = 0
    try:
        socket_path = tmp / "xdg-runtime" / "bench.sock"
        daemon_pid = await start_daemon(running, config, socket_path, env, tmp)
        peers = {
            "direct": await running.spawn(
                "bench_server", server, cwd=workspace, env=env, stderr=tmp / "server.stderr"
            ),
            "proxy": await running.spawn(
                "lspmux proxy",
                [
                    *(sys.executable, "-m", "lspmux", "proxy", "--config", str(config)),
                    *("--log-level", "warning", "--log-file", str(tmp / "proxy.log")),
                ],
                cwd=workspace,
                env=env,
                stderr=tmp / "proxy.stderr",
            ),
            "daemon": await running.spawn(
                "lspmux client",
                [
                    *(sys.executable, "-m", "lspmux", "client"),
                    *("--connect", f"unix:{socket_path}", "--no-autostart"),
                ],
                cwd=workspace,
                env=env,
                stderr=tmp / "client.stderr",
            ),
        }
        for peer in peers.values():
            await initialize(peer, workspace)
        proxy_pid = peers["proxy"].transport.get_pid()  # type: ignore[union-attr]
        pids = {"proxy": proxy_pid, "daemon": daemon_pid}
        # Memory first, while the processes hold nothing else; the stream last (an old lspmux
        # that cannot finish it is killed).
        big = await measure_open(peers, pids, workspace, res)
        await measure_edits(peers, workspace, res, stream_timeout)
        await measure_many(peers, pids, workspace, res)
        await measure_stream(peers, pids, big, res, stream_timeout)
        for peer in peers.values():
            running.adopt_children(peer)
            if not peer.exited.done():
                await running.stop(peer, timeout=5.0)
    except BaseException:
        logs = ("proxy.log", "daemon.log", "proxy.stderr", "client.stderr", "server.stderr")
        print_tails(tmp, logs)
        raise
    finally:
        if daemon_pid:
            with suppress(psutil.Error):
                for child in psutil.Process(daemon_pid).children(recursive=True):
                    running._track(child.pid)
            with suppress(ProcessLookupError):
                os.kill(daemon_pid, signal.SIGTERM)
            with suppress(psutil.Error):
                psutil.Process(daemon_pid).wait(15)
        running.kill_all()
    return res


# -- the report ---------------------------------------------------------------------------------


def ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.2f} ms"


def verdict(ok: bool | None) -> str:
    return "—" if ok is None else ("**yes**" if ok else "no")


def edit_added(res: Results, key: str, peer: str) -> float:
    """What the edit adds through `peer`, beyond what it costs directly (seconds)."""
    eh, h = res.edit_hover[key], res.hover_only[key]
    return (eh[peer] - h[peer]) - (eh["direct"] - h["direct"])


def report(res: Results, before: Results | None, quick: bool) -> str:
    s = res.sizes
    lines = [
        BEGIN,
        "## Editing: documents that edit in place",
        "",
        f"Run {res.started[:16]} UTC, load {res.load[0]:.2f}; `scripts/bench_edits.py`"
        + (" (quick mode: sizes too small to mean anything)" if quick else "")
        + ". The stub (`bench_server.py --incremental`) answers at once and keeps the edits "
        "unapplied until asked, so the time is lspmux's. Medians; `direct` is the stub "
        "without lspmux, in the same run.",
        "",
    ]
    head = "| | " + " | ".join(PEERS) + " | lspmux adds (proxy / daemon) |"
    if before is not None:
        head += " before: lspmux adds (proxy / daemon) |"
    lines += [
        f"**One single-character edit, then a hover** ({s.rounds} x {s.cycles} per size and peer; "
        "'adds' is (edit+hover - hover) through lspmux minus the same direct: what the edit "
        f"costs lspmux; target ≤ {TARGET_EDIT_MS} ms):",
        "",
        head,
        "|---" * (head.count("|") - 1) + "|",
    ]
    for size in s.docs:
        key = label(size)
        for what, table in (("edit + hover", res.edit_hover), ("hover alone", res.hover_only)):
            row = f"| {key}: {what} | " + " | ".join(ms(table[key][p]) for p in PEERS)
            if what == "edit + hover":
                row += " | " + " / ".join(ms(edit_added(res, key, p)) for p in PEERS[1:])
                if before is not None:
                    row += " | " + (
                        " / ".join(ms(edit_added(before, key, p)) for p in PEERS[1:])
                        if key in before.edit_hover
                        else "—"
                    )
                row += " |"
            else:
                row += " | |" + (" |" if before is not None else "")
            lines.append(row)
    lines.append("")
    big = label(s.big)

    def both(table: dict[str, Any], fmt: Any) -> str:
        return " / ".join(fmt(table.get(p)) for p in PEERS[1:])

    def x(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}x"

    def added_open(r: Results) -> str:
        return " / ".join(
            ms(r.open_s[p] - r.open_s["direct"]) if p in r.open_s else "—" for p in PEERS[1:]
        )

    def secs(v: float | None) -> str:
        return "not within the limit" if v is None else f"{v:.3f} s"

    def many_change(r: Results, p: str) -> str:
        if p not in r.many_after:
            return "—"
        return f"{(r.many_after[p] / r.many_before[p] - 1) * 100:+.1f}%"

    rows = [
        (
            f"open a {big} document: time added (proxy / daemon)",
            added_open(res),
            added_open(before) if before else None,
            f"≤ {TARGET_OPEN_MS:.0f} ms",
        ),
        (
            f"memory per open {big} document, x its UTF-8 size, after opening (proxy / daemon)",
            both(res.open_memory, x),
            both(before.open_memory, x) if before else None,
            f"≤ {TARGET_MEMORY}x",
        ),
        (
            "… after its first edits (its text cut into chunks, the whole string freed)",
            both(res.edited_memory, x),
            both(before.edited_memory, x) if before else None,
            f"≤ {TARGET_MEMORY}x",
        ),
        (
            f"{s.stream} edits of the {big} document written at once, until the hover "
            "behind them is answered (direct / proxy / daemon)",
            " / ".join(secs(res.stream_s.get(p)) for p in PEERS),
            " / ".join(secs(before.stream_s.get(p)) for p in PEERS) if before else None,
            f"≤ {TARGET_STREAM_S:.0f} s",
        ),
        (
            "… the stub's final text is the client's (SHA-256; proxy / daemon)",
            both(res.stream_ok, verdict),
            both(before.stream_ok, verdict) if before else None,
            "identical",
        ),
        (
            f"hover latency with {s.many} more documents of {label(s.many_size)} open, change "
            f"(medians of {s.rounds} phases with and without them; direct / proxy / daemon)",
            " / ".join(many_change(res, p) for p in PEERS),
            " / ".join(many_change(before, p) for p in PEERS) if before else None,
            f"±{TARGET_MANY * 100:.0f}%",
        ),
        (
            f"… memory per document (RSS growth / {s.many}; proxy / daemon)",
            both(res.many_memory, lambda v: "—" if v is None else f"{v / 1000:.1f} KB"),
            both(before.many_memory, lambda v: "—" if v is None else f"{v / 1000:.1f} KB")
            if before
            else None,
            "",
        ),
    ]
    head = "| | after |" + (" before |" if before else "") + " target |"
    lines += [head, "|---" * (head.count("|") - 1) + "|"]
    for name, now, then, target in rows:
        lines.append(f"| {name} | {now} |" + (f" {then} |" if before else "") + f" {target} |")
    lines += [
        "",
        "Before: "
        + (f"lspmux from `{before.lspmux_root}`, run {before.started[:16]} UTC." if before else "—")
        + " Reproduce: `make bench` (or `.venv/bin/python scripts/bench_edits.py`; `--quick` "
        "for a smoke run; `--lspmux-root DIR --json FILE` measures another tree's lspmux, "
        "`--before FILE` adds its figures).",
        END,
    ]
    return "\n".join(lines)


def load_results(path: Path) -> Results:
    data = json.loads(path.read_text())
    data["sizes"] = Sizes(**{k: tuple(v) if k == "docs" else v for k, v in data["sizes"].items()})
    data["load"] = tuple(data["load"])
    return Results(**data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="markdown file")
    parser.add_argument("--no-write", action="store_true", help="print the section only")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--before", type=Path, help="raw figures of an earlier run to compare")
    parser.add_argument("--lspmux-root", type=Path, default=ROOT, help="the lspmux tree to run")
    parser.add_argument("--cycles", type=int, help="edit+hover samples per round (override)")
    parser.add_argument("--rounds", type=int, help="rounds (override)")
    parser.add_argument(
        "--stream-timeout", type=float, default=120.0, help="limit for one edit burst (s)"
    )
    parser.add_argument("--timeout", type=float, default=1800.0, help="whole-run limit (s)")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.cycles:
        sizes = replace(sizes, cycles=args.cycles, warmup=min(sizes.warmup, args.cycles))
    if args.rounds:
        sizes = replace(sizes, rounds=args.rounds)
    before = load_results(args.before) if args.before else None
    with tempfile.TemporaryDirectory(prefix="lspmux-bench-edits-") as tmp_name:
        tmp = Path(tmp_name)

        async def bounded() -> Results:
            return await asyncio.wait_for(
                run(sizes, tmp, args.lspmux_root.resolve(), args.stream_timeout), args.timeout
            )

        try:
            res = _runner()(bounded())
        except (TimeoutError, BenchError) as exc:
            print(f"bench_edits: {exc or 'timed out'}", file=sys.stderr)
            return 1
    if args.json:
        raw = {**res.__dict__, "sizes": res.sizes.__dict__}
        args.json.write_text(json.dumps(raw, indent=1, default=list))
    section = report(res, before, args.quick)
    print(section)
    if not args.no_write:
        write_section(args.output, section, BEGIN, END)
        print(f"written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
