"""Agent tools benchmark (issue 11): the MCP face's per-call overhead over the same raw LSP
request, and `lspmux definition` on the command line against a warm daemon.

1. **MCP overhead.** A private `lspmux server` (own XDG_RUNTIME_DIR) on a copy of MarkupSafe's
   source (tests/data/agent/markupsafe). A raw headless LSP client on the daemon's socket asks
   `textDocument/definition`, and the `mcp` SDK's stdio client calls the `definition` tool of
   `lspmux mcp` (which connects to the same daemon) for the same position, both warm. They
   alternate in rounds; overhead = p50(MCP) - p50(raw).
2. **CLI wall time.** Then `python -m lspmux definition …` runs N times as a fresh process
   against that warm daemon; wall time per run.

3. **Checking tools (issue 19).** `diagnostics` of an unchanged file beside the raw pull
   (`textDocument/diagnostic`, answered once every source reported), and `check_edit` (an
   undefined name inserted: the text shown, every source's diagnostics for it, the text
   restored) beside the raw work it wraps — `didChange` to that text and the pull that returns
   once basedpyright and ruff have reported for it (the slowest source's own time).

Writes its tables between `<!-- bench:agent -->` and `<!-- bench:checks -->` markers in
docs/benchmarks.md with --write.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's lspmux, whatever the venv points at
DOC = ROOT / "docs" / "benchmarks.md"
SOURCE = ROOT / "tests" / "data" / "agent" / "markupsafe"
BEGIN, END = "<!-- bench:agent -->", "<!-- /bench:agent -->"
CHECKS = ("<!-- bench:checks -->", "<!-- /bench:checks -->")
CHECK_FILE = "src/markupsafe/_native.py"
AT = "tests/test_escape.py:34:29"  # `Markup` in `== Markup(expect)`: defined in src/markupsafe
POSITION = {"line": 33, "character": 28}


def _env(runtime: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}:{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env["XDG_RUNTIME_DIR"] = runtime
    env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="lmx-bench-cache-")
    env.pop("LSPMUX_ADDRESS", None)
    return env


def _quiet_ms() -> float:
    from lspmux.agent.speculation import QUIET

    return QUIET * 1000


QUIET_MS = _quiet_ms()


def pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def start_daemon(env: dict[str, str]) -> subprocess.Popen[bytes]:
    log = Path(env["XDG_RUNTIME_DIR"]) / "daemon.log"
    daemon = subprocess.Popen(
        [sys.executable, "-m", "lspmux", "server", "--log-file", str(log), "--log-level", "warning"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    sock = Path(env["XDG_RUNTIME_DIR"]) / "lspmux" / "lspmux.sock"
    for _ in range(300):
        if sock.exists():
            return daemon
        time.sleep(0.05)
    raise SystemExit("the daemon did not start")


async def mcp_vs_raw(
    root: Path, env: dict[str, str], rounds: int, per: int
) -> tuple[list[float], list[float]]:
    """Both clients on the same daemon, so the same basedpyright answers both."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from lspmux.agent.lsp import AgentLsp

    os.environ.update(env)
    raw = await AgentLsp.connect(root, name="bench raw")
    assert raw.via_daemon, "the raw client did not reach the daemon"
    path = root / "tests" / "test_escape.py"
    doc = await raw.sync(path)
    params = {"textDocument": {"uri": doc.uri}, "position": POSITION}
    for _ in range(100):
        if await raw.request("textDocument/definition", params):
            break
        await asyncio.sleep(0.2)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "lspmux", "mcp", "--root", str(root)],
        env=env, cwd=str(root),
    )  # fmt: skip
    raw_ms: list[float] = []
    mcp_ms: list[float] = []
    async with stdio_client(server) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        first = await session.call_tool("definition", {"at": AT})
        text = first.content[0].text  # type: ignore[union-attr]
        assert not first.is_error and "src/markupsafe/__init__.py:84:7" in text, text
        for _ in range(rounds):
            for _ in range(per):
                t0 = time.perf_counter()
                await session.call_tool("hover", {"at": ""})  # refused before any LSP
                FLOOR[1].append((time.perf_counter() - t0) * 1000)
            for _ in range(per):
                t0 = time.perf_counter()
                await raw.request("textDocument/definition", params)
                raw_ms.append((time.perf_counter() - t0) * 1000)
            for _ in range(per):
                t0 = time.perf_counter()
                await session.call_tool("definition", {"at": AT})
                mcp_ms.append((time.perf_counter() - t0) * 1000)
        cli_ms = await asyncio.to_thread(cli_wall, root, env, CLI_RUNS[0])
        await checking_tools(raw, session, root, rounds, max(5, per // 5))
    await raw.close()
    CLI_RUNS[1] = cli_ms
    return raw_ms, mcp_ms


#: name → (raw samples, MCP samples), ms
CHECK_MS: dict[str, tuple[list[float], list[float]]] = {}


async def checking_tools(raw: Any, session: Any, root: Path, rounds: int, per: int) -> None:
    """`diagnostics` and `check_edit` against the raw LSP work they wrap, alternating."""
    path = root / CHECK_FILE
    doc = await raw.sync(path)
    original = doc.text
    speculative = "value = undefined_thing\n" + original
    pull = {"textDocument": {"uri": doc.uri}}
    await raw.request("textDocument/diagnostic", pull)
    diag = CHECK_MS.setdefault("diagnostics", ([], []))
    check = CHECK_MS.setdefault("check_edit", ([], []))
    first = await session.call_tool(
        "check_edit", {"at": f"{CHECK_FILE}:1:1", "new_text": "value = undefined_thing\n"}
    )
    text = first.content[0].text  # type: ignore[union-attr]
    assert not first.is_error and "undefined_thing" in text, text
    for _ in range(rounds):
        for _ in range(per):
            t0 = time.perf_counter()
            await raw.request("textDocument/diagnostic", pull)
            diag[0].append((time.perf_counter() - t0) * 1000)
        for _ in range(per):
            t0 = time.perf_counter()
            answer = await session.call_tool("diagnostics", {"file": CHECK_FILE})
            diag[1].append((time.perf_counter() - t0) * 1000)
            assert not answer.is_error
        for _ in range(per):
            t0 = time.perf_counter()
            raw.show(path, speculative)
            report = await raw.request("textDocument/diagnostic", pull)
            check[0].append((time.perf_counter() - t0) * 1000)
            assert any("undefined_thing" in d["message"] for d in report["items"]), report
            raw.show(path, original)
            await raw.request("textDocument/diagnostic", pull)
        for _ in range(per):
            t0 = time.perf_counter()
            answer = await session.call_tool(
                "check_edit", {"at": f"{CHECK_FILE}:1:1", "new_text": "value = undefined_thing\n"}
            )
            check[1].append((time.perf_counter() - t0) * 1000)
            assert not answer.is_error
    await reading_tools(raw, session, root, rounds, per)


SHAPES = (
    "struct Shape { virtual ~Shape(); };\nstruct Square : Shape {};\nstruct Cube : Square {};\n"
)


async def reading_tools(raw: Any, session: Any, root: Path, rounds: int, per: int) -> None:
    """`source` (beside locate/resolveRange) and `type_hierarchy` on clangd (beside its three
    requests), alternating."""
    (root / "shapes.cpp").write_text(SHAPES)
    shapes = await raw.sync(root / "shapes.cpp")
    where = {"textDocument": {"uri": shapes.uri}, "position": {"line": 1, "character": 8}}
    locate = {"locate": f"{CHECK_FILE}:_escape_inner"}
    for _ in range(100):  # clangd indexes the file first
        if await raw.request("textDocument/prepareTypeHierarchy", where):
            break
        await asyncio.sleep(0.1)

    async def raw_source() -> None:
        await raw.request("locate/resolveRange", locate)

    async def raw_types() -> None:
        items = await raw.request("textDocument/prepareTypeHierarchy", where)
        await raw.request("typeHierarchy/supertypes", {"item": items[0]})
        await raw.request("typeHierarchy/subtypes", {"item": items[0]})

    test = await raw.sync(root / "tests" / "test_escape.py")
    at_markup = {"textDocument": {"uri": test.uri}, "position": POSITION}
    native = (await raw.sync(root / CHECK_FILE)).uri
    inner = {"textDocument": {"uri": native}, "position": {"line": 0, "character": 4}}

    async def raw_explore() -> None:
        await raw.request("textDocument/hover", inner)
        await raw.request("textDocument/definition", inner)
        await raw.request("textDocument/references", {**inner, "context": {
            "includeDeclaration": True}})  # fmt: skip
        items = await raw.request("textDocument/prepareCallHierarchy", inner)
        await raw.request("callHierarchy/incomingCalls", {"item": items[0]})
        await raw.request("locate/resolveRange", locate)

    async def raw_batch() -> None:
        await raw.request("textDocument/hover", at_markup)
        await raw.request("textDocument/definition", at_markup)
        await raw.request("locate/resolve", {"locate": f"{CHECK_FILE}:_escape_inner"})

    async def raw_references() -> None:
        await raw.request("locate/resolveRange", locate)
        await raw.request("textDocument/references", {**inner, "context": {
            "includeDeclaration": True}})  # fmt: skip

    batch = [
        {"tool": "hover", "arguments": {"at": AT}},
        {"tool": "definition", "arguments": {"at": AT}},
        {"tool": "locate", "arguments": {"at": f"{CHECK_FILE}:_escape_inner"}},
    ]
    cases = {
        "source": (raw_source, {"at": f"{CHECK_FILE}:_escape_inner"}),
        "type_hierarchy": (raw_types, {"at": "shapes.cpp:2:8"}),
        "explore": (raw_explore, {"at": f"{CHECK_FILE}:_escape_inner"}),
        "batch": (raw_batch, {"calls": batch}),
        "replace_symbol": (
            raw_source,
            {
                "at": f"{CHECK_FILE}:_escape_inner",
                "check": False,
                "new_text": "def _escape_inner(s: str, /) -> str:\n    return s",
            },
        ),
        "safe_delete": (raw_references, {"at": f"{CHECK_FILE}:_escape_inner", "check": False}),
    }
    for name, (raw_call, arguments) in cases.items():
        samples = CHECK_MS.setdefault(name, ([], []))
        first = await session.call_tool(name, arguments)
        assert not first.is_error, first.content[0].text  # type: ignore[union-attr]
        for _ in range(rounds):
            for _ in range(per):
                t0 = time.perf_counter()
                await raw_call()
                samples[0].append((time.perf_counter() - t0) * 1000)
            for _ in range(per):
                t0 = time.perf_counter()
                answer = await session.call_tool(name, arguments)
                samples[1].append((time.perf_counter() - t0) * 1000)
                assert not answer.is_error


def checks_table(rounds: int) -> str:
    rows = []
    wraps = {
        "diagnostics": "`textDocument/diagnostic` (pull, unchanged file)",
        "check_edit": "`didChange` + `textDocument/diagnostic` until every source reported",
        "source": "`locate/resolveRange` of the symbol",
        "type_hierarchy": "clangd: `prepareTypeHierarchy` + `supertypes` + `subtypes`",
        "explore": "hover + definition + references + prepareCallHierarchy + incomingCalls "
        "+ `locate/resolveRange`",
        "batch": "hover + definition + `locate/resolve` (its 3 calls)",
        "replace_symbol": "`locate/resolveRange` (preview, `check: false`: a diff)",
        "safe_delete": "`locate/resolveRange` + references (preview, `check: false`; "
        "refused: referenced)",
    }
    for name, (raw_ms, mcp_ms) in CHECK_MS.items():
        added = statistics.median(mcp_ms) - statistics.median(raw_ms)
        reading = name in ("diagnostics", "source", "type_hierarchy")
        target = "≤ 20 ms" if reading else "≤ raw + 50 ms"
        met = statistics.median(mcp_ms) <= 20 if reading else added <= 50
        shown = "**yes**" if met else "no"
        if name in ("explore", "batch"):  # several calls: the target is per call
            target, shown = "—", ""
        rows.append(
            f"| `{name}` | {wraps[name]} | {statistics.median(raw_ms):.1f} ms | "
            f"{statistics.median(mcp_ms):.1f} ms | {added:.1f} ms | {target} | "
            f"{shown} |"
        )
    n = len(next(iter(CHECK_MS.values()))[0]) if CHECK_MS else 0
    return f"""## Checking and symbol tools (issue 19)

<!-- Generated by scripts/bench_agent.py (make bench); edits between the markers are lost. -->

Same daemon and MarkupSafe copy as above; {CHECK_FILE}, real basedpyright + ruff; p50 of {n} warm calls per side in {rounds} alternating rounds.

| tool (MCP) | raw LSP work it wraps | raw p50 | MCP p50 | added | target | met |
|---|---|---:|---:|---:|---|---|
{chr(10).join(rows)}

- `check_edit` does more than the raw side: the diagnostics of the current text first (remembered from the previous check, which restored that text: no wait), the new text shown, the wait for every source's report on it plus a {int(QUIET_MS)} ms quiet period (a second publish for the same version), the status of every source, the old text restored, the comparison. The raw side is only the pull that returns when every source reported.
"""


CLI_RUNS: list[Any] = [20, []]
FLOOR: list[list[float]] = [[], []]  # python -c pass wall; MCP round trip without LSP


def cli_wall(root: Path, env: dict[str, str], runs: int) -> list[float]:
    """`lspmux definition` as a fresh process each time, while the MCP session holds the
    daemon warm (as an editor or agent would)."""
    argv = [sys.executable, "-m", "lspmux", "definition", AT]
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        FLOOR[0].append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        out = subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True)
        samples.append((time.perf_counter() - t0) * 1000)
        assert "src/markupsafe/__init__.py:84:7" in out.stdout, out.stderr
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--per", type=int, default=50, help="calls per side per round")
    parser.add_argument("--cli-runs", type=int, default=20)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lmx-agent-"))
    root = work / "markupsafe"
    shutil.copytree(SOURCE, root)
    runtime = tempfile.mkdtemp(prefix="lmx-rt-", dir="/tmp")
    env = _env(runtime)
    load_before = os.getloadavg()
    CLI_RUNS[0] = args.cli_runs
    daemon = start_daemon(env)
    try:
        raw_ms, mcp_ms = asyncio.run(mcp_vs_raw(root, env, args.rounds, args.per))
        cli_ms = CLI_RUNS[1]
    finally:
        daemon.terminate()
        daemon.wait(30)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(runtime, ignore_errors=True)
    load_after = os.getloadavg()
    overhead = statistics.median(mcp_ms) - statistics.median(raw_ms)
    cli_p50 = statistics.median(cli_ms)
    yes = "**yes**"
    table = f"""## Agent tools (MCP and CLI)

<!-- Generated by scripts/bench_agent.py (make bench); edits between the markers are lost. -->

Measured {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} on {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python {platform.python_version()}; load average (1 min) {load_before[0]:.2f} → {load_after[0]:.2f}. MarkupSafe 3.0.2's source, real basedpyright + ruff; `definition` of `Markup` in tests/test_escape.py (answer in src/markupsafe/__init__.py).

| measurement | raw LSP | MCP tool | added | target | met |
|---|---:|---:|---:|---|---|
| `definition` warm, p50 ({len(raw_ms)} calls each, {args.rounds} alternating rounds) | {statistics.median(raw_ms):.2f} ms | {statistics.median(mcp_ms):.2f} ms | {overhead:.2f} ms | ≤ 5 ms added | {yes if overhead <= 5 else "no"} |
| `definition` warm, p95 | {pct(raw_ms, 0.95):.2f} ms | {pct(mcp_ms, 0.95):.2f} ms | — | — | |
| MCP `definition` warm p50 (the whole tool call) | — | {statistics.median(mcp_ms):.2f} ms | — | ≤ 20 ms | {yes if statistics.median(mcp_ms) <= 20 else "no"} |
| MCP round trip of a call refused before any LSP work (`hover` with an empty `at`), p50 | — | {statistics.median(FLOOR[1]):.2f} ms | — | — | |
| `lspmux definition …` wall time against a warm daemon, p50 of {len(cli_ms)} fresh processes | — | {cli_p50:.0f} ms (min {min(cli_ms):.0f}, max {max(cli_ms):.0f}) | — | ≤ 150 ms | {yes if cli_p50 <= 150 else "no"} |
| for scale: `python -c pass` (same interpreter and venv), p50 | — | {statistics.median(FLOOR[0]):.0f} ms | — | — | |

- Both sides talk to one `lspmux server` (so one basedpyright answers both): the raw side is lspmux's headless LSP client (asyncio + orjson) on the daemon's socket, the MCP side the `mcp` SDK's stdio client on `lspmux mcp`. The same request, the same server's work. *Added* is the MCP face: JSON-RPC over MCP, argument checks, `at` parsing, the file re-read to check it is in sync, labels and source lines, `structuredContent`.
- The CLI run is a new Python process each time: interpreter start, `lspmux.cli` → `lspmux.agent.cli` (standard library only on this path), one `lspmux/tool` request on the daemon's socket, which runs the tool in its warm agent session for the root (lspmux/agent/hosted.py), then printing. The machine is shared (the load average above): compare the columns, not the absolute figures, with other runs.
"""
    print(table)
    checks = checks_table(args.rounds)
    print(checks)
    if args.write:
        doc = DOC.read_text()
        for (begin, end), text in (((BEGIN, END), table), (CHECKS, checks)):
            section = f"{begin}\n{text}\n{end}"
            if begin in doc and end in doc:
                head, rest = doc.split(begin, 1)
                doc = head + section + rest.split(end, 1)[1]
            else:
                doc = doc.rstrip("\n") + "\n\n" + section + "\n"
        DOC.write_text(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
