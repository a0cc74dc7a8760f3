"""scripts/bench.py in its tiny mode: it runs end to end and writes its table, keeping the other
sections of the benchmarks page. Timings are not checked: they mean nothing at these sizes.

Also the bench server alone, as a real LSP server: framing, initialize, hover, completion,
shutdown and exit; and in its `--incremental` mode, where it keeps the edits it is sent. And
scripts/bench_edits.py in its tiny mode (direct, proxy and daemon; the final text checked).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from lspmux.text import apply_changes
from tests.tools import require_tool

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH = ROOT / "scripts" / "bench.py"
SERVER = ROOT / "scripts" / "bench_server.py"
BENCH_EDITS = ROOT / "scripts" / "bench_edits.py"
BENCH_START = ROOT / "scripts" / "bench_start.py"
BENCH_FLOOR = ROOT / "scripts" / "bench_floor.py"


def _frame(msg: dict[str, object]) -> bytes:
    body = orjson.dumps(msg)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _bodies(data: bytes) -> list[dict[str, Any]]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(head.split(b":")[1])
        out.append(orjson.loads(rest[:length]))
        data = rest[length:]
    return out


def serve(
    requests: list[dict[str, object]], *args: str
) -> tuple[subprocess.CompletedProcess[bytes], dict[Any, dict[str, Any]]]:
    """Run the bench server on `requests` (ending with exit); it exits 0; its answers by id."""
    proc = subprocess.run(
        [sys.executable, str(SERVER), *args],
        input=b"".join(_frame(m) for m in requests),
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return proc, {m["id"]: m for m in _bodies(proc.stdout)}


def test_the_bench_server_speaks_lsp() -> None:
    requests: list[dict[str, object]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/completion", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "textDocument/definition", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    proc, answers = serve(requests, "--items", "7")
    assert answers[1]["result"]["capabilities"]["hoverProvider"] is True
    assert "contents" in answers[2]["result"]
    assert len(answers[3]["result"]["items"]) == 7
    assert answers[4]["error"]["code"] == -32601
    assert answers[5]["result"] is None
    assert (
        proc.stdout.startswith(b"Content-Length: ") and b'{"jsonrpc":"2.0","id":2,' in proc.stdout
    )


def run_script(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A benchmark script run as `make bench` runs it: its own lspmux, not PYTHONPATH's."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=cwd,
        env=env,
        check=False,
    )


def test_quick_bench_writes_its_section_and_keeps_the_others(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(
        "# Benchmarks\n\n## Locate\n\nkept as it is\n\n"
        "<!-- bench:proxy -->\nold table\n<!-- /bench:proxy -->\n\n## Sharing\n\nalso kept\n"
    )
    proc = run_script([str(BENCH), "--quick", "--output", str(page), "--timeout", "150"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = page.read_text()
    assert "old table" not in text
    assert text.count("<!-- bench:proxy -->") == 1 and text.count("<!-- /bench:proxy -->") == 1
    assert "## Locate\n\nkept as it is" in text and "## Sharing\n\nalso kept" in text
    section = text.split("<!-- bench:proxy -->")[1].split("<!-- /bench:proxy -->")[0]
    for row in (
        "hover latency p50",
        "pipelined hover throughput",
        "completion latency",
        "the same, cold: fresh processes",  # the 2.5 MB answer as a new session meets it
    ):
        assert f"| {row}" in section
    assert "| 2.5 MB completion added | 2.5 MB added, cold |" in section
    assert "| direct | byte relay | proxy | daemon | daemon, no capabilities |" in section
    for peer in ("proxy", "daemon", "daemon, no capabilities"):  # each against its targets
        assert f"| {peer} | " in section.split("Against the targets")[1]
    assert "Quick mode" in section


def test_the_incremental_stub_keeps_the_text_it_is_sent() -> None:
    uri = "file:///w/a.bench"
    text = "first line\nsecond 😀 line\nthird\n"
    changes: list[dict[str, Any]] = [
        {"range": {"start": {"line": 1, "character": 9}, "end": {"line": 1, "character": 9}}},
        {"range": {"start": {"line": 0, "character": 5}, "end": {"line": 2, "character": 1}}},
    ]
    changes[0]["text"], changes[1]["text"] = "X", "\nnew\n"
    doc = {"uri": uri, "languageId": "bench", "version": 1, "text": text}
    td = {"textDocument": {"uri": uri}}
    requests: list[dict[str, object]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}},
        *(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": 2 + i}, "contentChanges": [c]},
            }
            for i, c in enumerate(changes)
        ),
        {"jsonrpc": "2.0", "id": 2, "method": "bench/text", "params": td},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    _, answers = serve(requests, "--incremental")
    assert answers[1]["result"]["capabilities"]["textDocumentSync"]["change"] == 2
    expected = apply_changes(text, changes)
    assert answers[2]["result"] == {
        "length": len(expected),
        "sha256": hashlib.sha256(expected.encode()).hexdigest(),
        "changes": 2,
    }


def test_quick_edit_bench_writes_its_section_and_keeps_the_others(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(
        "# Benchmarks\n\n<!-- bench:proxy -->\nkept as it is\n<!-- /bench:proxy -->\n\n"
        "<!-- bench:edits -->\nold table\n<!-- /bench:edits -->\n\n## Sharing\n\nalso kept\n"
    )
    raw = tmp_path / "raw.json"
    argv = [str(BENCH_EDITS), "--quick", "--output", str(page), "--timeout", "200"]
    proc = run_script([*argv, "--json", str(raw)], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = page.read_text()
    assert "old table" not in text and "kept as it is" in text and "also kept" in text
    assert text.count("<!-- bench:edits -->") == 1 and text.count("<!-- /bench:edits -->") == 1
    section = text.split("<!-- bench:edits -->")[1].split("<!-- /bench:edits -->")[0]
    assert "| 10 KB: edit + hover |" in section and "quick mode" in section
    assert "final text is the client's (SHA-256; proxy / daemon) | **yes** / **yes** |" in section
    # The raw figures feed a later run's "before" column.
    sys.path.insert(0, str(BENCH_EDITS.parent))
    import bench_edits

    res = bench_edits.load_results(raw)
    assert res.stream_ok == {"direct": True, "proxy": True, "daemon": True}
    compared = bench_edits.report(res, res, quick=True)
    assert "| after | before | target |" in compared


def test_the_encodings_bench_converts_every_case() -> None:
    """scripts/bench_encodings.py at a tiny size: each case really converts something."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import bench_encodings
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    text = bench_encodings.make_text(40)
    found = bench_encodings.cases(text, items=30, diagnostics=5)
    assert len(found) == 5
    for name, message, convert in found:
        assert convert() != message, name


def test_the_start_bench_measures_every_case_and_writes_its_section(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text("kept\n<!-- bench:start -->\nold table\n<!-- /bench:start -->\nalso kept\n")
    argv = [str(BENCH_START), "--rounds", "1", "--write", "--output", str(page)]
    proc = run_script(argv, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = page.read_text()
    assert "old table" not in text and text.startswith("kept\n") and text.endswith("also kept\n")
    section = text.split("<!-- bench:start -->")[1].split("<!-- /bench:start -->")[0]
    rows = [line for line in section.splitlines() if line.startswith("| `lspmux")]
    assert len(rows) == 9 and all(re.search(r"\| \d+ ms \(\d+\) \|$", row) for row in rows), section
    assert any(row.startswith("| `lspmux hover") for row in rows), section
    assert "load average" in section


def test_the_start_bench_measures_a_real_server_and_writes_its_own_section(tmp_path: Path) -> None:
    require_tool("basedpyright-langserver")
    page = tmp_path / "benchmarks.md"
    page.write_text(
        "<!-- bench:start -->\n<!-- /bench:start -->\nkept\n"
        "<!-- bench:start-real -->\nold table\n<!-- /bench:start-real -->\nalso kept\n"
    )
    argv = [
        str(BENCH_START),
        "--rounds",
        "1",
        "--real-rounds",
        "1",
        "--write",
        "--output",
        str(page),
    ]
    proc = run_script(argv, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = page.read_text()
    assert "old table" not in text and "\nkept\n" in text and text.endswith("also kept\n")
    section = text.split("<!-- bench:start-real -->")[1].split("<!-- /bench:start-real -->")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and " ms " in line]
    assert [row.split(" | ")[0] for row in rows] == [
        "| basedpyright directly",
        "| `lspmux proxy`, capability cache warm — now",
        "| `lspmux proxy`, first start (empty cache) — now",
    ], section
    assert all(
        re.search(r"\| \d+ ms \(\d+(, [+-]\d+)?\) \| \d+ ms \(\d+(, [+-]\d+)?\) \|$", row)
        for row in rows
    ), section


def test_the_floor_bench_measures_every_way_and_writes_its_section(tmp_path: Path) -> None:
    """scripts/bench_floor.py compiles its native relay and C lane and measures direct, both
    byte relays, the thin relay in Python and with the C lane, and the proxy: each relays every
    hover (a way that lost one would fail the run), and the
    section replaces only its own."""
    require_tool("cc")
    page = tmp_path / "benchmarks.md"
    page.write_text("kept\n<!-- bench:floor -->\nold table\n<!-- /bench:floor -->\nalso kept\n")
    argv = [str(BENCH_FLOOR), "--quick", "--write", "--output", str(page)]
    proc = run_script(argv, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = page.read_text()
    assert "old table" not in text and text.startswith("kept\n") and text.endswith("also kept\n")
    section = text.split("<!-- bench:floor -->")[1].split("<!-- /bench:floor -->")[0]
    rows = [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| ")]
    assert rows[1:] == [
        "| direct",
        "| byte relay, uvloop",
        "| byte relay, native (C)",
        "| thin Python relay (frames, ids)",
        "| thin relay, its per-read work in C",
        "| lspmux proxy",
    ], section


def test_the_native_relay_passes_bytes_both_ways_and_the_end_of_input(tmp_path: Path) -> None:
    """relay_floor.c, compiled, between `cat`-like Python and this test: what goes in comes
    out in order, the child sees the end of its input, and the relay exits with it."""
    cc = require_tool("cc")
    exe = tmp_path / "relay_floor"
    subprocess.run([cc, "-O2", "-o", str(exe), str(ROOT / "scripts" / "relay_floor.c")], check=True)
    echo = "import sys; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data[::-1])"
    data = os.urandom(3 << 20)  # more than a pipe holds, less than the relay's buffer
    done = subprocess.run([str(exe), sys.executable, "-c", echo], input=data,
                          capture_output=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == data[::-1]
    failed = subprocess.run([str(exe), sys.executable, "-c", "raise SystemExit(3)"],
                            capture_output=True, timeout=60)  # fmt: skip
    assert failed.returncode == 3


def test_the_c_lane_re_ids_requests_and_puts_answer_ids_back(tmp_path: Path) -> None:
    """lane_floor.c, built as bench_floor.py builds it: messages split anywhere come out whole;
    a request's id (a number or a string) is replaced by the lane's own, an `id` inside params
    is left alone, a notification passes; an answer gets its client's id back, a request from
    the server and an answer the lane does not know pass as they are."""
    require_tool("cc")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import bench_floor
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    sys.path.insert(0, str(bench_floor.compile_lane(tmp_path)))
    try:
        import lane_floor
    finally:
        del sys.path[0]
    lane = lane_floor.Lane()
    sent = [
        {"jsonrpc": "2.0", "id": 'a\\"b', "method": "x", "params": {"id": 5}},
        {"jsonrpc": "2.0", "method": "note"},
        {"jsonrpc": "2.0", "id": 77, "method": "y"},
    ]
    data = b"".join(_frame(m) for m in sent)
    out = b"".join(lane.up(data[i : i + 7]) for i in range(0, len(data), 7))
    assert _bodies(out) == [
        {"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"id": 5}},
        {"jsonrpc": "2.0", "method": "note"},
        {"jsonrpc": "2.0", "id": 2, "method": "y"},
    ]
    answers = [
        {"jsonrpc": "2.0", "id": 2, "result": {"id": 9}},
        {"jsonrpc": "2.0", "id": 1, "method": "server/asks"},
        {"jsonrpc": "2.0", "id": 1, "result": None},
        {"jsonrpc": "2.0", "id": 1, "result": "again"},
    ]
    assert _bodies(lane.down(b"".join(_frame(m) for m in answers))) == [
        {"jsonrpc": "2.0", "id": 77, "result": {"id": 9}},
        {"jsonrpc": "2.0", "id": 1, "method": "server/asks"},
        {"jsonrpc": "2.0", "id": 'a\\"b', "result": None},
        {"jsonrpc": "2.0", "id": 1, "result": "again"},
    ]
    assert lane.pending == {}
