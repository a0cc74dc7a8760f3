"""The diagnostics benchmark: what merging costs, and what lspmux adds to a linter's run.

1. Merged publish latency, in process. A real `Session` (its `DiagnosticStore`, its
   `SessionLinting`, its client `Connection` with a transport that records the time of each
   write) holds 1,000 open documents. Every document gets diagnostics from three sources: two
   servers (`basedpyright`, `ruff`: `store.update` + `session.publish`, what
   `Session.publish_from` does once a publish's version is accepted) and one CLI linter (`biome`,
   through `SessionLinting._on_result`, the linter result path). The clock starts just before
   the *last* source's result is handed over and stops when the merged
   `textDocument/publishDiagnostics` frame (orjson-encoded, framed) is written to the
   transport. Several rounds, each with new diagnostics for every file (so every publish
   changes the merged set). p50 / p95 / max over every (file, round).
2. Linter overhead. `biome lint --reporter=json FILE` run directly (asyncio subprocess, output
   read) against `run_linter` (temporary copy beside the file, same argv, output parsed into
   LSP diagnostics) on the same file, alternating, many runs: medians, and lspmux's share.

Prints a Markdown table (the lead folds it into docs/benchmarks.md).

Usage: .venv/bin/python scripts/bench_diagnostics.py [--files 1000] [--rounds 5] [--runs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lspmux.backends.pool import Pool  # noqa: E402
from lspmux.config.loader import load_config  # noqa: E402
from lspmux.config.model import Config  # noqa: E402
from lspmux.diagnostics.linters.runner import run_linter  # noqa: E402
from lspmux.session.session import Session  # noqa: E402

JS = """var x = 1;
if (x == 2) {
  debugger;
}
let unused = 3;
function f(a, b) {
  return a == b;
}
"""


class _Transport:
    """A write transport that records when each frame was written."""

    def __init__(self) -> None:
        self.last_write = 0.0
        self.frames = 0
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self.last_write = time.perf_counter()
        self.frames += 1
        self.bytes += len(data)

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


def _diag(source: str, line: int, n: int, salt: int) -> dict[str, Any]:
    return {
        "range": {
            "start": {"line": line, "character": 4},
            "end": {"line": line, "character": 12 + n % 5},
        },
        "severity": 1 + n % 3,
        "code": f"{source}-{n}",
        "source": source,
        "message": f"{source} finding {n} (round {salt}) about something on line {line}",
        "data": {"fix": {"id": n, "round": salt}},
    }


def _diags(source: str, count: int, salt: int) -> list[dict[str, Any]]:
    return [_diag(source, i * 3 + salt % 3, i, salt) for i in range(count)]


async def bench_publish(files: int, rounds: int, per_source: int) -> dict[str, Any]:
    session = Session(Pool(shared=False), lambda _root: Config())
    session.state = "running"
    conn = session.connection("bench", duplex=False)
    transport = _Transport()
    conn.attach_writer(transport)  # type: ignore[arg-type]
    uris = [f"file:///bench/src/module_{i:04d}.js" for i in range(files)]
    for uri in uris:
        session.documents.open(uri, "javascript", 1, JS)
        session.store.set_version(uri, 1)
    samples: list[float] = []
    for rnd in range(rounds):
        for uri in uris:
            for server in ("basedpyright", "ruff"):
                if session.store.update(uri, server, _diags(server, per_source, rnd), 1):
                    session.publish(uri)
            linter_diags = _diags("biome", per_source, rnd)
            session.linting._versions[(uri, "biome")] = 1  # the version the run read
            written = transport.frames
            start = time.perf_counter()
            session.linting._on_result(uri, "biome", linter_diags, None)
            assert transport.frames == written + 1, "the linter's result was not published"
            samples.append(transport.last_write - start)
    samples.sort()
    return {
        "files": files,
        "rounds": rounds,
        "per_source": per_source,
        "n": len(samples),
        "p50": statistics.median(samples),
        "p95": samples[int(len(samples) * 0.95) - 1],
        "max": samples[-1],
        "frame_bytes": transport.bytes / max(transport.frames, 1),
    }


async def _direct(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
    )
    await proc.communicate()
    return time.perf_counter() - start


async def bench_linter(runs: int) -> dict[str, Any] | None:
    biome = shutil.which("biome") or str(ROOT / ".tools/node_modules/.bin/biome")
    if not os.access(biome, os.X_OK):
        return None
    config = load_config(ROOT, []).linters["biome"]
    config = dataclasses.replace(config, command=(biome, *config.command[1:]), disabled=False)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        path = root / "app.js"
        path.write_text(JS)
        direct_argv = [biome, "lint", "--reporter=json", str(path)]
        direct: list[float] = []
        through: list[float] = []
        count = 0
        for _ in range(3):  # warm-up (file cache, node start)
            await _direct(direct_argv, root)
            await run_linter(config, path=str(path), text=JS, root=root)
        for _ in range(runs):
            direct.append(await _direct(direct_argv, root))
            start = time.perf_counter()
            diags = await run_linter(config, path=str(path), text=JS, root=root)
            through.append(time.perf_counter() - start)
            count = len(diags)
    d, t = statistics.median(direct), statistics.median(through)
    return {"runs": runs, "direct": d, "lspmux": t, "overhead": (t - d) / d, "diagnostics": count}


def table(pub: dict[str, Any], lint: dict[str, Any] | None) -> str:
    ms = 1000.0
    lines = [
        f"Diagnostics ({platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs)",
        "",
        "| measurement | value |",
        "|---|---|",
        f"| merged publish after the last of 3 sources, {pub['files']} open files x "
        f"{pub['rounds']} rounds, {pub['per_source']} diagnostics per source: p50 | "
        f"{pub['p50'] * ms:.3f} ms |",
        f"| same, p95 (target ≤ 5 ms) | {pub['p95'] * ms:.3f} ms |",
        f"| same, max | {pub['max'] * ms:.3f} ms |",
        f"| size of one merged publish frame | {pub['frame_bytes'] / 1024:.1f} KiB |",
    ]
    if lint is None:
        lines.append("| biome lint direct vs through run_linter | biome not installed |")
    else:
        lines += [
            f"| `biome lint --reporter=json` run directly, median of {lint['runs']} | "
            f"{lint['direct'] * ms:.1f} ms |",
            f"| same file through `run_linter` (temp copy + parse, {lint['diagnostics']} "
            f"diagnostics), median | {lint['lspmux'] * ms:.1f} ms |",
            f"| lspmux's share of the linter run (target ≤ 10%) | {lint['overhead'] * 100:+.1f}% |",
        ]
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-source", type=int, default=10)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    pub = await bench_publish(args.files, args.rounds, args.per_source)
    lint = await bench_linter(args.runs)
    print(table(pub, lint))


if __name__ == "__main__":
    asyncio.run(main())
