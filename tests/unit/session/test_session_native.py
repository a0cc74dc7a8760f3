"""The native lane (`session/native.py`, `_speedups.c`'s `lane_requests` and `lane_answers`):
runs of plain requests and answers handled in C, exactly as the fast lane handles them — and
every other message, in the same read, left to the Python in its place.

The fast lane's own tests (`test_session_fast.py`) and the answered-once properties run through
the native lane too, wherever the speedups are built; `tests/unit/test_speedups.py` runs them
again without it.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from lspmux import speedups
from lspmux.session import native
from lspmux.session.fast import FastExchange
from lspmux.wire.writes import BATCH

from .memory import Held, MemorySession, ScriptedServer, until
from .test_session_fast import HOVER, hover_params, in_flight, opened

pytestmark = pytest.mark.skipif(
    speedups.native is None, reason=f"lspmux's C speedups: {speedups.status}"
)


@contextmanager
def one_read(m: MemorySession) -> Iterator[None]:
    """What the client sends inside the block reaches lspmux in one read."""
    sent: list[bytes] = []
    deliver = m.client.to_lspmux
    assert deliver is not None
    m.client.to_lspmux = sent.append
    try:
        yield
    finally:
        m.client.to_lspmux = deliver
    deliver(b"".join(sent))


def runs(m: MemorySession) -> tuple[int, int]:
    """How many requests and answers of `m`'s session went by the native lane."""
    requests = m.session.conn.lane if m.session.conn is not None else None
    assert isinstance(requests, native.RequestRun)
    answers = 0
    for backend in m.pool.backends.values():
        conn = backend._conn
        lane = conn.lane if conn is not None else None
        assert isinstance(lane, native.AnswerRun)
        answers += lane.handled
    return requests.handled, answers


def hover(n: int) -> Any:
    return lambda p: {"contents": f"h{n}:{p['position']['character']}"}


async def test_a_read_of_hovers_goes_by_the_native_lane_with_a_change_kept_in_its_place(
    mem: Any,
) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(1)})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x = 1\n")
    # the first asks the server's `supports` (the Python's way), which the lane then reads
    await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    before = runs(m)
    with one_read(m):
        ids = [m.client.request("textDocument/hover", hover_params(uri)) for _ in range(10)]
        change = {"textDocument": {"uri": uri, "version": 2},
                  "contentChanges": [{"text": "y = 2\n"}]}  # fmt: skip
        m.client.notify("textDocument/didChange", change)
        ids += [
            m.client.request(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": 0, "character": k}},
            )
            for k in range(10)
        ]
    answers = [await m.client.answer(i) for i in ids]
    assert [a["id"] for a in answers] == ids
    assert answers[-1]["result"] == {"contents": "h1:9"}
    requests, relayed = runs(m)
    assert requests - before[0] == 20
    assert relayed - before[1] == 20
    # the server saw the change between the tenth and the eleventh hover, as it was sent
    seen = [msg["method"] for msg in a.received if msg.get("method") in (
        "textDocument/hover", "textDocument/didChange")][1:]  # fmt: skip
    assert (
        seen
        == ["textDocument/hover"] * 10 + ["textDocument/didChange"] + ["textDocument/hover"] * 10
    )
    server_ids = [m["id"] for m in a.requests("textDocument/hover")[1:]]
    assert len(set(server_ids)) == 20 and server_ids == sorted(server_ids)
    assert not m.session.link.inflight
    m.client.assert_answered_once()


async def test_the_native_lane_makes_the_fast_lanes_exchange(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Held({"contents": "h"})})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    warm = m.client.request("textDocument/hover", hover_params(uri))
    await until(lambda: a.requests("textDocument/hover"), "the first hover at the server")
    a.release()
    await m.client.answer(warm)
    before = runs(m)[0]
    msg_id = m.client.request("textDocument/hover", hover_params(uri), msg_id="c-1")
    await until(lambda: len(a.requests("textDocument/hover")) == 2, "the hover at the server")
    ex = in_flight(m, msg_id)
    assert type(ex) is FastExchange
    backend = next(iter(m.pool.backends.values()))
    server_id = a.requests("textDocument/hover")[1]["id"]
    assert ex.targets == [(backend, server_id)]
    # read in place: the params are the request's bytes until something asks for them
    assert ex._body is not None and orjson.loads(ex._body)["id"] == "c-1"
    assert (ex.client_id, ex.method, ex.params) == ("c-1", "textDocument/hover", hover_params(uri))
    assert ex._body is None
    assert (ex.answered, ex.family, ex.fit_for, ex.per_backend) == (False, None, None, None)
    # every slot of the exchange is set, as its __init__ sets them (a slot added later that
    # the C does not set would be unreadable)
    slots = {name for cls in type(ex).__mro__ for name in getattr(cls, "__slots__", ())}
    assert len(slots) == 15
    for name in slots:
        getattr(ex, name)
    assert ex.timeout == 5.0 and ex.deadline > 0
    assert runs(m)[0] == before + 1
    a.release()
    assert (await m.client.answer(msg_id))["result"] == {"contents": "h"}


@pytest.mark.parametrize("client_id", ["é-1", 'q"1', -4, 2**62])
async def test_ids_the_c_does_not_write_are_answered_by_the_python(
    mem: Any, client_id: Any
) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(2)})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    answer = await m.client.answer(
        m.client.request("textDocument/hover", hover_params(uri), msg_id=client_id)
    )
    assert answer == {"jsonrpc": "2.0", "id": client_id, "result": {"contents": "h2:0"}}
    assert not m.session.link.inflight


async def test_what_is_not_plain_in_a_read_goes_the_python_way_in_its_place(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(3)})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    before = runs(m)[0]
    deliver = m.client.to_lspmux
    assert deliver is not None

    def frame(msg: Any) -> bytes:
        body = msg if isinstance(msg, bytes) else orjson.dumps(msg)
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    good = {"jsonrpc": "2.0", "method": "textDocument/hover", "params": hover_params(uri)}
    deliver(
        b"".join(
            [
                frame({**good, "id": 101}),
                frame(b"{not json"),  # ParseError, id null
                frame({**good, "id": 102, "jsonrpc": "1.0"}),  # InvalidRequest
                frame({**good, "id": 103, "params": {"textDocument": {"uri": uri}}}),
                frame({**good, "id": "s-105", "params": {**hover_params(uri), "x": [1, {}]}}),
                frame({**good, "id": 106}),
                # Locate: what follows waits for it (the dispatch holds it), the lane included
                frame({**good, "id": 104, "params": {**hover_params(uri), "locate": {}}}),
                frame({**good, "id": 107}),
            ]
        )
    )
    m.client.sent_ids.extend([101, None, 102, 103, "s-105", 106, 104, 107])
    assert (await m.client.answer(101))["result"] == {"contents": "h3:0"}
    assert (await m.client.answer(102))["error"]["code"] == -32600
    assert (await m.client.answer(103))["error"]["code"] == -32602
    assert "error" in await m.client.answer(104)  # Locate without a symbol: told what is wrong
    assert (await m.client.answer("s-105"))["result"] == {"contents": "h3:0"}
    assert (await m.client.answer(106))["result"] == {"contents": "h3:0"}
    assert (await m.client.answer(107))["result"] == {"contents": "h3:0"}
    assert (await m.client.answer(None))["error"]["code"] == -32700
    assert runs(m)[0] - before == 3  # 101, s-105 and 106; the others went the Python's way
    assert len(a.requests("textDocument/hover")) == 5  # the first, 101, s-105, 106 and 107


async def test_a_merge_of_one_server_sets_its_origin_as_the_fast_lane_does(mem: Any) -> None:
    caps = {**HOVER, "completionProvider": {"resolveProvider": True}}
    items = {"isIncomplete": False, "items": [{"label": "x", "data": 1}]}
    a = ScriptedServer("a", caps, {"textDocument/completion": lambda p: items,
                                   "completionItem/resolve": lambda p: {**p, "detail": "d"}})  # fmt: skip
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}}
    listed = await m.client.answer(m.client.request("textDocument/completion", params))
    item = listed["result"]["items"][0]
    resolved = await m.client.answer(m.client.request("completionItem/resolve", item))
    assert resolved["result"]["detail"] == "d"
    assert a.requests("completionItem/resolve")[0]["params"]["data"] == 1


async def editor_and_agent(
    mem: Any, tmp_path: Path, a: ScriptedServer
) -> tuple[MemorySession, MemorySession, str]:
    """An editor and an agent sharing server `a` (the agent closed by the caller), each with its
    own text of a.py, which both take hovers as they come (nothing to fit: the lane takes
    them); the editor's first hover asked the server's `supports` and made it hold the
    editor's text."""
    editor = mem(a=a)
    takes = {"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}}}
    await editor.initialize(takes)
    agent = MemorySession(tmp_path, {"a": a}, share_with=editor, client_id="agent")
    await agent.initialize(takes)
    uri = editor.open("a.py", "editor_text = 1\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    agent.open("a.py", "agent_text = 2\n")
    await until(lambda: "agent_text" in str(a.received[-1]), "the agent's text there")
    await editor.client.answer(editor.client.request("textDocument/hover", hover_params(uri)))
    return editor, agent, uri


async def test_on_a_shared_server_the_native_lane_makes_it_hold_the_askers_text_first(
    mem: Any, tmp_path: Path
) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: {"contents": "h"}})
    editor, agent, uri = await editor_and_agent(mem, tmp_path, a)
    try:
        before = runs(editor)[0], runs(agent)[0]
        for asker, text in ((agent, "agent_text = 2\n"), (editor, "editor_text = 1\n")) * 2:
            await asker.client.answer(asker.client.request("textDocument/hover", hover_params(uri)))
            held = ""  # the text the server held when it got the last hover
            for msg in a.received:
                if msg.get("method") == "textDocument/didChange":
                    held = msg["params"]["contentChanges"][-1]["text"]
                elif msg.get("method") == "textDocument/didOpen":
                    held = msg["params"]["textDocument"]["text"]
            assert held == text
        assert (runs(editor)[0], runs(agent)[0]) == (before[0] + 2, before[1] + 2)
        agent.client.assert_answered_once()
    finally:
        await agent.close()


async def test_the_native_lane_sends_a_shared_servers_older_text_of_the_askers_again(
    mem: Any, tmp_path: Path
) -> None:
    """The lane reads whether the server holds the asker's current text from the server's
    tables (`holds_already`, as `BackendDocuments.holds`); one that holds an older version of
    it (its `current` entry behind the asker's own) is sent the text, as `ensure_holds`
    sends it, before the hover."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: {"contents": "h"}})
    _editor, agent, uri = await editor_and_agent(mem, tmp_path, a)
    try:
        ask = agent.client.request
        await agent.client.answer(ask("textDocument/hover", hover_params(uri)))
        doc = next(iter(agent.pool.backends.values())).documents.get(uri)
        holder = agent.session
        assert doc is not None and doc.current == {holder: doc.holders[holder]}
        texts = len(a.notifications("textDocument/didChange"))
        before = runs(agent)[0]
        await agent.client.answer(ask("textDocument/hover", hover_params(uri)))
        assert len(a.notifications("textDocument/didChange")) == texts  # held: nothing sent
        doc.current[holder] = -1  # the server's text of the agent's is behind the agent's own
        await agent.client.answer(ask("textDocument/hover", hover_params(uri)))
        changes = a.notifications("textDocument/didChange")
        assert len(changes) == texts + 1
        assert changes[-1]["params"]["contentChanges"][-1]["text"] == "agent_text = 2\n"
        assert runs(agent)[0] == before + 2
        agent.client.assert_answered_once()
    finally:
        await agent.close()


async def test_the_native_lane_keeps_no_exchange_once_answered(mem: Any) -> None:
    """Each exchange the C makes is freed once answered (a reference it kept would keep every
    exchange, its params and its client's answer alive)."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(4)})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    before = runs(m)
    for _ in range(5):
        with one_read(m):
            ids = [m.client.request("textDocument/hover", hover_params(uri)) for _ in range(40)]
        for i in ids:
            await m.client.answer(i)
    assert runs(m) == (before[0] + 200, before[1] + 200)
    gc.collect()
    assert [o for o in gc.get_objects() if type(o) is FastExchange] == []
    assert sys.getrefcount(FastExchange) < 50  # each exchange holds its type


async def test_a_lane_that_fails_is_turned_off_and_the_python_handles_the_read(
    mem: Any, caplog: pytest.LogCaptureFixture
) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(5)})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    conn = m.session.conn
    assert conn is not None

    def broken(items: list[Any], start: int) -> int:
        raise RuntimeError("broken lane")

    conn.lane = broken
    answer = await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    assert answer["result"] == {"contents": "h5:0"}
    assert conn.lane is None
    assert "the native lane failed; it is turned off" in caplog.text


async def test_a_large_message_is_left_to_the_python_unparsed_by_the_lane(mem: Any) -> None:
    """A request over 16 KiB (and a document's text in a notification, which has no id) is
    not parsed by the lane, only by the Python: large bodies are parsed once."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(6)})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    before = runs(m)[0]
    big = {**hover_params(uri), "padding": "x" * 17_000}
    answer = await m.client.answer(m.client.request("textDocument/hover", big))
    assert answer["result"] == {"contents": "h6:0"}
    assert runs(m)[0] == before
    await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    assert runs(m)[0] == before + 1


async def test_a_client_whose_answers_are_fitted_sends_by_the_lane_and_gets_them_fitted(
    mem: Any, tmp_path: Path
) -> None:
    md = {"contents": {"kind": "markdown", "value": "**Returns** `h`"}}
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: md})
    editor = mem(a=a)
    await editor.initialize({"textDocument": {"hover": {"contentFormat": ["markdown"]}}})
    raw = MemorySession(tmp_path, {"a": a}, share_with=editor, client_id="raw")
    await raw.initialize({})  # declares nothing: a markdown hover is fitted for it
    try:
        uri = await opened(editor, "a.py", "x\n")
        raw.open("a.py", "x\n")
        await until(lambda: raw.session.backends_for(uri)[0].state == "running", "running")
        await editor.client.answer(editor.client.request("textDocument/hover", hover_params(uri)))
        before = runs(raw)[0]
        plain = {"contents": {"kind": "plaintext", "value": "Returns h"}}
        for _ in range(3):
            answer = await raw.client.answer(
                raw.client.request("textDocument/hover", hover_params(uri))
            )
            assert answer["result"] == plain
        assert runs(raw)[0] == before + 3  # sent by the lane, fitted by the Python's way
        assert (await editor.client.answer(
            editor.client.request("textDocument/hover", hover_params(uri))))["result"] == md  # fmt: skip
        raw.client.assert_answered_once()
    finally:
        await raw.close()


async def test_a_markdown_hover_the_c_can_fit_is_answered_by_the_lane_fitted(
    mem: Any, tmp_path: Path
) -> None:
    """Code blocks and plain lines: the answer lane fits them where they stand
    (`fit_hover_markdown`) for the client that declared nothing, and relays them as they are
    to the editor that takes markdown; markup it cannot fit goes the Python's way, in its
    place in the read."""
    values = {0: "```rust\nfn h() -> u32\n```\n\nReturns it.", 1: "**Returns** `h`"}

    def answer(p: Any) -> Any:
        return {"contents": {"kind": "markdown", "value": values[p["position"]["character"]]}}

    a = ScriptedServer("a", HOVER, {"textDocument/hover": answer})
    editor = mem(a=a)
    await editor.initialize({"textDocument": {"hover": {"contentFormat": ["markdown"]}}})
    raw = MemorySession(tmp_path, {"a": a}, share_with=editor, client_id="raw")
    await raw.initialize({})
    try:
        uri = await opened(editor, "a.py", "x\n")
        raw.open("a.py", "x\n")
        await until(lambda: raw.session.backends_for(uri)[0].state == "running", "running")
        await editor.client.answer(editor.client.request("textDocument/hover", at(uri, 0)))
        requests, answered = runs(raw)
        with one_read(raw):
            ids = [raw.client.request("textDocument/hover", at(uri, c)) for c in (0, 0, 1, 0)]
        got = [(await raw.client.answer(i))["result"]["contents"] for i in ids]
        fitted = {"kind": "plaintext", "value": "fn h() -> u32\n\nReturns it."}
        assert got == [fitted, fitted, {"kind": "plaintext", "value": "Returns h"}, fitted]
        # all four sent by the lane; three answered by it, the marked-up one by the Python
        assert runs(raw) == (requests + 4, answered + 3)
        mine = (await editor.client.answer(
            editor.client.request("textDocument/hover", at(uri, 0))))["result"]["contents"]  # fmt: skip
        assert mine == {"kind": "markdown", "value": values[0]}
        raw.client.assert_answered_once()
    finally:
        await raw.close()


def at(uri: str, character: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": character}}


async def test_a_read_alternating_between_two_servers_gives_each_its_own_ids(
    tmp_path: Path,
) -> None:
    """A run keeps what it read of its target's connection (its next id, its tables): a read
    that alternates between two servers reads each again, and writes each one's counter back."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(1)})
    b = ScriptedServer("b", HOVER, {"textDocument/hover": hover(2)})
    m = MemorySession(tmp_path, {"a": a, "b": b}, file_types_of={"a": (".py",), "b": (".rs",)})
    try:
        await m.initialize()
        ua, ub = await opened(m, "a.py", "x\n"), await opened(m, "b.rs", "y\n")
        for uri in (ua, ub):  # each server's `supports`, asked by the Python
            await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
        before = runs(m)
        with one_read(m):
            ids = [
                m.client.request("textDocument/hover", at(uri, k))
                for k in range(6)
                for uri in (ua, ub)
            ]
        answers = [await m.client.answer(i) for i in ids]
        expected = [{"contents": f"h{n}:{k}"} for k in range(6) for n in (1, 2)]
        assert [x["result"] for x in answers] == expected
        assert runs(m) == (before[0] + 12, before[1] + 12)
        for server in (a, b):
            sent = [r["id"] for r in server.requests("textDocument/hover")][-6:]
            assert sent == list(range(sent[0], sent[0] + 6))
            conn = next(x for x in m.pool.backends.values() if x.name == server.name)._conn
            assert conn is not None and conn._next_id == sent[-1] + 1
        assert not m.session.link.inflight
        m.client.assert_answered_once()
    finally:
        await m.close()


async def test_one_read_on_a_shared_server_sends_the_askers_text_once_then_its_hovers(
    mem: Any, tmp_path: Path
) -> None:
    """The first hover of the read makes the shared server hold the asker's text (the Python
    sends it: the run then reads the tables again); the next ones find it held."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(5)})
    _editor, agent, uri = await editor_and_agent(mem, tmp_path, a)
    try:
        before, start = runs(agent)[0], len(a.received)
        with one_read(agent):
            ids = [agent.client.request("textDocument/hover", at(uri, k)) for k in range(4)]
        answers = [await agent.client.answer(i) for i in ids]
        assert [x["result"] for x in answers] == [{"contents": f"h5:{k}"} for k in range(4)]
        seen = a.received[start:]
        assert [msg["method"] for msg in seen] == ["textDocument/didChange"] + [
            "textDocument/hover"
        ] * 4
        assert seen[0]["params"]["contentChanges"][-1]["text"] == "agent_text = 2\n"
        sent = [msg["id"] for msg in seen[1:]]
        assert sent == list(range(sent[0], sent[0] + 4))
        assert runs(agent)[0] == before + 4
        agent.client.assert_answered_once()
    finally:
        await agent.close()


async def test_one_read_of_a_shared_servers_answers_reaches_each_client(
    mem: Any, tmp_path: Path
) -> None:
    """Answers to two clients in one read of the server: the run reads each client's link
    once it meets it, and each answer goes to its own client under its own id."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Held(p["position"])})
    editor = mem(a=a)
    takes = {"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}}}
    await editor.initialize(takes)
    agent = MemorySession(tmp_path, {"a": a}, share_with=editor, client_id="agent")
    await agent.initialize(takes)
    try:
        uri = await opened(editor, "a.py", "x = 1\n")
        agent.open("a.py", "x = 1\n")
        await until(lambda: agent.session.backends_for(uri)[0].state == "running", "running")
        warm = editor.client.request("textDocument/hover", hover_params(uri))
        await until(lambda: a.held, "the first hover at the server")
        a.release()
        await editor.client.answer(warm)
        before = runs(editor)[1]
        asked = [
            (who, who.client.request("textDocument/hover", at(uri, k)))
            for k in range(3)
            for who in (editor, agent)
        ]
        await until(lambda: len(a.held) == 6, "six hovers held at the server")
        held, a.held = a.held, []
        frames = [orjson.dumps({"jsonrpc": "2.0", "id": i, "result": v}) for i, v in held]
        assert a._to_lspmux is not None
        a._to_lspmux.write(b"".join(b"Content-Length: %d\r\n\r\n" % len(f) + f for f in frames))
        for k, (who, msg_id) in enumerate(asked):
            answer = await who.client.answer(msg_id)
            assert answer["result"] == {"line": 0, "character": k // 2}
        assert runs(editor)[1] == before + 6
        assert not editor.session.link.inflight and not agent.session.link.inflight
        agent.client.assert_answered_once()
    finally:
        await agent.close()


async def test_a_document_of_two_servers_one_serving_it_goes_by_the_lane(mem: Any) -> None:
    """Two servers for the document, one of which does not hover: the lane reads both (their
    state, their `supports` answers) and sends to the one that does; two that do are the
    policy's to decide, the Python's way."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(7)})
    quiet = ScriptedServer("b", {"textDocumentSync": {"openClose": True, "change": 2}}, {})
    m = mem(a=a, b=quiet)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    assert len(m.session.backends_for(uri)) == 2
    await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    before = runs(m)[0]
    with one_read(m):
        ids = [m.client.request("textDocument/hover", at(uri, k)) for k in range(3)]
    answers = [await m.client.answer(i) for i in ids]
    assert [x["result"] for x in answers] == [{"contents": f"h7:{k}"} for k in range(3)]
    assert runs(m)[0] == before + 3
    assert quiet.requests("textDocument/hover") == []


async def test_what_a_run_held_is_counted_when_the_python_sends_in_the_same_run(
    mem: Any, tmp_path: Path
) -> None:
    """A run counts the bytes it holds on a connection (`_held_size`) and writes the count
    back when done; when the Python sends on that connection in the middle of the run (the
    shared server made to hold the asker's text of another document), it must find the run's
    count and the run must keep the Python's: at the write, the count is the size of the
    bodies held."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(6)})
    editor, agent, uri = await editor_and_agent(mem, tmp_path, a)
    try:
        await agent.client.answer(agent.client.request("textDocument/hover", hover_params(uri)))
        other = editor.open("b.py", "b_editor = 1\n")
        agent.open("b.py", "b_agent = 2\n")
        await until(lambda: "b_agent" in str(a.received[-1]), "the agent's b.py there")
        await editor.client.answer(editor.client.request("textDocument/hover", at(other, 1)))
        conn = next(iter(agent.pool.backends.values()))._conn
        assert conn is not None
        counted: list[tuple[int, int]] = []
        flush = conn._flush

        def check() -> None:
            held = b"".join(bytes(p) for p in conn._held)
            bodies, at_ = 0, 0
            while at_ < len(held):
                head = held.index(b"\r\n\r\n", at_)
                size = int(held[at_:head].split(b":")[1])
                bodies += size
                at_ = head + 4 + size
            counted.append((conn._held_size, bodies))
            flush()

        conn._flush = check  # type: ignore[method-assign]
        before, start = runs(agent)[0], len(a.received)
        with one_read(agent):
            ids = [agent.client.request("textDocument/hover", at(u, 2)) for u in (uri, other)]
        for i in ids:
            await agent.client.answer(i)
        seen = [msg.get("method") for msg in a.received[start:]]
        assert seen == ["textDocument/hover", "textDocument/didChange", "textDocument/hover"]
        assert runs(agent)[0] == before + 2
        assert counted and all(size == bodies for size, bodies in counted), counted
        agent.client.assert_answered_once()
    finally:
        await agent.close()


GUARDS: dict[str, Any] = {
    "not running": lambda m: setattr(m.session, "state", "starting"),
    "a message held behind a request": lambda m: m.session.dispatch._held.update(x=[{}]),
    "the client's connection waits for an answer": lambda m: m.session.conn._pending.update(
        {10**9: object()}
    ),
    "a debug log": lambda m: setattr(m.session.conn, "_debug", True),
    "a client behind": lambda m: setattr(m.session.conn, "_congestion", object()),
}


@pytest.mark.parametrize("guard", GUARDS)
async def test_the_request_run_takes_nothing_when_its_guard_says_the_python_must(
    mem: Any, guard: str
) -> None:
    """`run_requests`' guards, each on its own: with it, the run returns where it started and
    sends nothing; with the state put back, it takes the same request."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover(7)})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x = 1\n")
    await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    conn, dispatch, session = m.session.conn, m.session.dispatch, m.session
    saved = (session.state, dict(dispatch._held), dict(conn._pending), conn._debug)
    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": "g", "method": "textDocument/hover", "params": at(uri, 1)}
    )
    run = conn.lane
    assert isinstance(run, native.RequestRun)
    m.client.sent_ids.append("g")  # sent past the client, into the run
    BATCH.dirty = []
    try:
        assert run([b"{}"], 1) == 1  # nothing to take
        GUARDS[guard](m)
        assert run([body], 0) == 0
        assert BATCH.dirty == [] and "g" not in session.link.inflight
        session.state, conn._debug, conn._congestion = saved[0], saved[3], None
        dispatch._held.clear()
        dispatch._held.update(saved[1])
        conn._pending.clear()
        conn._pending.update(saved[2])
        assert run([body], 0) == 1
        assert "g" in session.link.inflight
        held = BATCH.dirty
    finally:
        BATCH.dirty = None
    for c in held:
        c._flush()
    assert (await m.client.answer("g"))["result"] == {"contents": "h7:1"}
    await m.close()


async def test_the_answer_run_leaves_a_debugging_servers_answers_to_the_python(mem: Any) -> None:
    """A server connection that logs at debug level has its answers read by the Python (which
    logs each); the run takes them again once it does not."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Held(p["position"])})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x = 1\n")
    warm = m.client.request("textDocument/hover", hover_params(uri))
    await until(lambda: a.held, "the first hover at the server")
    a.release()
    await m.client.answer(warm)
    conn = next(iter(m.pool.backends.values()))._conn
    assert conn is not None and isinstance(conn.lane, native.AnswerRun)
    before = runs(m)[1]
    conn._debug = True
    first = m.client.request("textDocument/hover", hover_params(uri))
    await until(lambda: a.held, "a hover at the server")
    a.release()
    await m.client.answer(first)
    assert runs(m)[1] == before
    conn._debug = False
    second = m.client.request("textDocument/hover", hover_params(uri))
    await until(lambda: a.held, "a hover at the server")
    a.release()
    await m.client.answer(second)
    assert runs(m)[1] == before + 1
    await m.close()
