"""The in-memory harness's own check fails when it should: an answer too many, a frame cut
short, a server's request answered twice — so that the tests relying on it can fail."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from .memory import MemorySession, ScriptedServer, encode_body, until

HOVER = {"hoverProvider": True, "textDocumentSync": {"openClose": True, "change": 2}}


async def session(tmp_path: Path) -> tuple[MemorySession, ScriptedServer]:
    server = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: None})
    m = MemorySession(tmp_path, {"a": server})
    await m.initialize()
    m.open("a.py", "x\n")
    await until(lambda: server.notifications("textDocument/didOpen"), "the server's didOpen")
    return m, server


async def test_a_second_answer_fails_the_check(tmp_path: Path) -> None:
    m, _ = await session(tmp_path)
    msg_id = m.client.request("textDocument/hover", {"textDocument": {"uri": m.uri("a.py")}})
    answer = await m.client.answer(msg_id)
    m.client.feed(encode_body(orjson.dumps(answer)))  # as if lspmux answered again
    with pytest.raises(AssertionError, match=r"not answered exactly once .*: \{2: 2\}"):
        await m.close()


async def test_an_answer_to_an_id_never_sent_fails_the_check(tmp_path: Path) -> None:
    m, _ = await session(tmp_path)
    m.client.feed(encode_body(b'{"jsonrpc":"2.0","id":99,"result":null}'))
    with pytest.raises(AssertionError, match="never sent"):
        await m.close()


async def test_a_frame_cut_short_fails_the_check(tmp_path: Path) -> None:
    m, _ = await session(tmp_path)
    m.client.feed(b'Content-Length: 40\r\n\r\n{"jsonrpc":')
    with pytest.raises(AssertionError, match="never finished"):
        await m.close()


async def test_a_servers_request_answered_twice_fails_the_check(tmp_path: Path) -> None:
    m, server = await session(tmp_path)
    m.client.answers["window/showMessageRequest"] = lambda _p: None
    msg_id, answer = server.request("window/showMessageRequest", {"type": 3, "message": "?"})
    await answer
    server.feed(encode_body(orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "result": None})))
    with pytest.raises(AssertionError, match=r"server a's requests not answered exactly once"):
        await m.close()


async def test_a_request_left_unanswered_fails_the_check(tmp_path: Path) -> None:
    m, _ = await session(tmp_path)
    m.client.sent_ids.append(7)  # as if it were sent and lspmux dropped it
    with pytest.raises(AssertionError, match=r"\{7: 0\}"):
        await m.close()
