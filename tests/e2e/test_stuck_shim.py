"""A `lspmux client` shim whose editor stopped reading (its stdout unread) beside a healthy
client on one shared basedpyright: the healthy client's answers must not wait for the work
the stuck one asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t

from tests.e2e.daemon_harness import DaemonUnderTest, daemon_fixture, wait_until  # noqa: F401

pytestmark = pytest.mark.e2e

#: documentSymbol of this file is a ~0.6 MB answer that basedpyright takes ~20 ms to make.
FUNCTIONS = 1000
#: What the stuck editor asked before it froze: about 2.5 s of basedpyright's time.
BACKLOG = 120


def frame(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_a_healthy_client_beside_a_stuck_shim_is_answered_at_once(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    big = workspace / "big.py"
    big.write_text("".join(f"def function_{i}(a: int, b: int) -> int:\n    return a + b + {i}\n\n\n"
                           for i in range(FUNCTIONS)))  # fmt: skip
    healthy = await daemon.client(workspace)
    app = healthy.open("app.py", "python")
    healthy.open("big.py", "python")  # analysed before the measure: the stuck one adds no file
    symbols = t.DocumentSymbolParams(t.TextDocumentIdentifier(big.as_uri()))
    assert await healthy.client.text_document_document_symbol_async(symbols)

    async def hover() -> float:
        started = time.monotonic()
        answer = await healthy.client.text_document_hover_async(
            t.HoverParams(t.TextDocumentIdentifier(app), t.Position(3, 8))
        )
        assert answer is not None and "Greeter" in str(answer.contents)
        return time.monotonic() - started

    await hover()  # the first waits for big.py's analysis
    alone = sorted([await hover() for _ in range(200)])

    # An editor that froze: it asked, and never reads what the shim writes to its stdout.
    stuck = subprocess.Popen(
        [sys.executable, "-m", "lspmux", "client", "--connect", daemon.address],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=daemon.env,
        cwd=str(workspace),
    )
    try:
        assert stuck.stdin is not None
        caps = {"textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": True}}}
        asked = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": caps}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": {"uri": big.as_uri(), "languageId": "python",
                                         "version": 1, "text": big.read_text()}}},
        ]  # fmt: skip
        asked += [
            {"jsonrpc": "2.0", "id": i, "method": "textDocument/documentSymbol",
             "params": {"textDocument": {"uri": big.as_uri()}}}
            for i in range(1, BACKLOG + 1)
        ]  # fmt: skip
        stuck.stdin.write(b"".join(frame(m) for m in asked))
        stuck.stdin.flush()
        beside = sorted([await hover() for _ in range(200)])
        # The stuck shim's queue at the daemon is full (the daemon stopped reading it) ...
        await wait_until(
            lambda: "behind on its answers" in daemon.log.read_text(errors="replace"),
            30,
            "the daemon to find the stuck shim behind on its answers",
        )
        assert stuck.poll() is None  # ... and it is still connected, unread
    finally:
        stuck.kill()
        stuck.wait()
    print(f"\nhover alone:             p50 {alone[100] * 1000:.1f} ms, p99 {alone[197] * 1000:.1f} "
          f"ms, worst {alone[-1] * 1000:.1f} ms")  # fmt: skip
    print(f"hover beside stuck shim: p50 {beside[100] * 1000:.1f} ms, p99 "
          f"{beside[197] * 1000:.1f} ms, worst {beside[-1] * 1000:.1f} ms")  # fmt: skip
    assert beside[-1] < 0.6, f"a hover waited {beside[-1]:.2f}s behind the stuck shim's work"
    assert beside[197] < 0.2
