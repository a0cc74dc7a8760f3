"""scripts/bench_edits.py in its tiny mode: it runs end to end (direct, proxy and daemon), checks
the stub's final text against the client's, and writes its section, keeping the others.
Timings are not checked: they mean nothing at these sizes.

Also the stub's `--incremental` mode alone: it takes edits and gives back the text's digest.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from lspmux.text import apply_changes

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH = ROOT / "scripts" / "bench_edits.py"
SERVER = ROOT / "scripts" / "bench_server.py"


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
    proc = subprocess.run(
        [sys.executable, str(SERVER), "--incremental"],
        input=b"".join(_frame(m) for m in requests),
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    answers = {m["id"]: m for m in _bodies(proc.stdout)}
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
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    argv = [sys.executable, str(BENCH), "--quick", "--output", str(page), "--timeout", "200"]
    proc = subprocess.run(
        [*argv, "--json", str(raw)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = page.read_text()
    assert "old table" not in text and "kept as it is" in text and "also kept" in text
    assert text.count("<!-- bench:edits -->") == 1 and text.count("<!-- /bench:edits -->") == 1
    section = text.split("<!-- bench:edits -->")[1].split("<!-- /bench:edits -->")[0]
    assert "| 10 KB: edit + hover |" in section and "quick mode" in section
    assert "final text is the client's (SHA-256; proxy / daemon) | **yes** / **yes** |" in section
    # The raw figures feed a later run's "before" column.
    sys.path.insert(0, str(BENCH.parent))
    import bench_edits

    res = bench_edits.load_results(raw)
    assert res.stream_ok == {"direct": True, "proxy": True, "daemon": True}
    compared = bench_edits.report(res, res, quick=True)
    assert "| after | before | target |" in compared
