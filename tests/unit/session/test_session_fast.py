"""The fast lane (`session/fast.py`): a request for exactly one running server, relayed with one
object per request — and every request still answered exactly once, on every way out (an
answer, an error, ContentModified, a cancel, a crash)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lspmux.session.exchange import Exchange
from lspmux.session.fast import FastExchange
from tests.profiles import examples

from .memory import Fail, Hang, Held, MemorySession, ScriptedServer, until
from .test_session_answer_once import METHODS, answered_once, params_for

HOVER = {"hoverProvider": True, "textDocumentSync": {"openClose": True, "change": 2}}
SYMBOLS = {**HOVER, "workspaceSymbolProvider": True}


def hover_params(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}


def in_flight(m: Any, msg_id: Any) -> Exchange[Any]:
    return m.session.link.inflight[msg_id]  # type: ignore[no-any-return]


async def opened(m: Any, name: str, text: str) -> str:
    """Open `name` and wait for its servers to run (a request sent while one starts waits for
    it on the general way)."""
    uri = m.open(name, text)
    backends = m.session.backends_for(uri)
    await until(lambda: all(b.state == "running" for b in backends), "the servers running")
    return uri


async def hover_at(m: Any, server: ScriptedServer) -> tuple[Any, Any]:
    """Initialize `m`, open a file, send a hover and wait until `server` has it."""
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    msg_id = m.client.request("textDocument/hover", hover_params(uri))
    await until(lambda: server.requests("textDocument/hover"), f"the hover at {server.name}")
    return m, msg_id


async def test_a_hover_for_one_server_takes_the_lane_and_its_answer_comes_as_sent(
    mem: Any,
) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Held({"contents": "h"})})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x = 1\n")
    msg_id = m.client.request("textDocument/hover", hover_params(uri), msg_id="c-7")
    await until(lambda: a.requests("textDocument/hover"), "the hover at the server")
    assert type(in_flight(m, msg_id)) is FastExchange
    assert a.requests("textDocument/hover")[0]["params"] == hover_params(uri)
    a.release()
    answer = await m.client.answer(msg_id)
    assert answer == {"jsonrpc": "2.0", "id": "c-7", "result": {"contents": "h"}}
    assert not m.session.link.inflight


async def test_two_servers_for_the_method_go_the_general_way(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Held(None)})
    b = ScriptedServer("b", HOVER, {"textDocument/hover": lambda p: Held({"contents": "b"})})
    m, msg_id = await hover_at(mem(a=a, b=b), a)
    assert type(in_flight(m, msg_id)) is Exchange  # FIRST over two: null moves on to b
    a.release()
    await until(lambda: b.requests("textDocument/hover"), "the hover at the second server")
    b.release()
    assert (await m.client.answer(msg_id))["result"] == {"contents": "b"}


async def test_of_two_servers_the_one_that_serves_the_method_takes_the_lane(mem: Any) -> None:
    a = ScriptedServer("a", {"textDocumentSync": 1}, {})
    b = ScriptedServer("b", HOVER, {"textDocument/hover": lambda p: Held({"contents": "b"})})
    m, msg_id = await hover_at(mem(a=a, b=b), b)
    assert type(in_flight(m, msg_id)) is FastExchange
    b.release()
    assert (await m.client.answer(msg_id))["result"] == {"contents": "b"}
    assert not a.requests("textDocument/hover")


async def test_a_request_naming_no_document_goes_the_general_way(mem: Any) -> None:
    a = ScriptedServer("a", SYMBOLS, {"workspace/symbol": lambda p: Held([])})
    m = mem(a=a)
    await m.initialize()
    await opened(m, "a.py", "x\n")
    msg_id = m.client.request("workspace/symbol", {"query": "x"})
    await until(lambda: a.requests("workspace/symbol"), "the query at the server")
    assert type(in_flight(m, msg_id)) is Exchange
    a.release()
    assert (await m.client.answer(msg_id))["result"] == []


async def test_malformed_params_are_answered_by_the_general_way(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: {"contents": "h"}})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    msg_id = m.client.request("textDocument/hover", {"textDocument": {"uri": uri}})
    answer = await m.client.answer(msg_id)
    assert answer["error"]["code"] == -32602
    assert "position" in answer["error"]["message"]
    assert not a.requests("textDocument/hover")


async def test_an_error_answer_names_the_server_as_the_general_way_does(mem: Any) -> None:
    def broken(_p: Any) -> Any:
        raise Fail(-32603, "broken")

    m = mem(a=ScriptedServer("a", HOVER, {"textDocument/hover": broken}))
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    answer = await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    assert answer["error"] == {"code": -32603, "message": "a: broken"}


async def test_content_modified_is_asked_again_and_answered_once(mem: Any) -> None:
    calls: list[Any] = []

    def flaky(p: Any) -> Any:
        calls.append(p)
        if len(calls) == 1:
            raise Fail(-32801, "content modified")
        return {"contents": "second"}

    m = mem(a=ScriptedServer("a", HOVER, {"textDocument/hover": flaky}))
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    answer = await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    assert answer["result"] == {"contents": "second"}
    assert len(calls) == 2


async def test_a_cancel_of_a_fast_lane_request_reaches_the_server_and_answers_once(
    mem: Any,
) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Hang()})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    msg_id = m.client.request("textDocument/hover", hover_params(uri))
    await until(lambda: a.requests("textDocument/hover"), "the hover at the server")
    assert type(in_flight(m, msg_id)) is FastExchange
    m.client.notify("$/cancelRequest", {"id": msg_id})
    assert (await m.client.answer(msg_id))["error"]["code"] == -32800
    await until(lambda: a.notifications("$/cancelRequest"), "the cancel at the server")
    server_id = a.requests("textDocument/hover")[0]["id"]
    assert a.notifications("$/cancelRequest")[0]["params"]["id"] == server_id


async def test_a_crash_answers_every_pending_fast_lane_request_once(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Hang()})
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    ids = [m.client.request("textDocument/hover", hover_params(uri)) for _ in range(5)]
    await until(lambda: len(a.requests("textDocument/hover")) == 5, "the hovers at the server")
    assert all(type(in_flight(m, i)) is FastExchange for i in ids)
    a.exit(-9)
    for i in ids:
        error = (await m.client.answer(i))["error"]
        assert error["message"].startswith("a: ")
        assert "closed the connection before answering textDocument/hover" in error["message"]
    assert not m.session.link.inflight  # the close checks each was answered exactly once


async def test_on_a_shared_server_a_client_whose_answers_are_fitted_gets_them_fitted_by_the_lane(
    mem: Any, tmp_path: Path
) -> None:
    md = {"contents": {"kind": "markdown", "value": "**Returns** `h`"}}
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Held(md)})
    editor = mem(a=a)
    await editor.initialize({"textDocument": {"hover": {"contentFormat": ["markdown"]}}})
    raw = MemorySession(tmp_path, {"a": a}, share_with=editor, client_id="raw")
    await raw.initialize({})  # declares nothing: a markdown hover is fitted for it
    try:
        uri = await opened(editor, "a.py", "x\n")
        raw.open("a.py", "x\n")
        first = editor.client.request("textDocument/hover", hover_params(uri))
        await until(lambda: len(a.requests("textDocument/hover")) == 1, "the editor's hover")
        assert type(in_flight(editor, first)) is FastExchange
        assert in_flight(editor, first).fit_for is None
        second = raw.client.request("textDocument/hover", hover_params(uri))
        await until(lambda: len(a.requests("textDocument/hover")) == 2, "the raw client's hover")
        assert type(in_flight(raw, second)) is FastExchange
        assert type(in_flight(raw, second).fit_for) is dict
        a.release()
        assert (await editor.client.answer(first))["result"] == md
        plain = {"contents": {"kind": "plaintext", "value": "Returns h"}}
        assert (await raw.client.answer(second))["result"] == plain
        raw.client.assert_answered_once()
    finally:
        await raw.close()


async def test_a_fast_lane_request_the_server_never_answers_times_out_once(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Hang()})
    m, msg_id = await hover_at(mem(a=a), a)
    assert type(in_flight(m, msg_id)) is FastExchange
    error = (await m.client.answer(msg_id, timeout=30))["error"]
    assert error["message"].startswith("a: ")
    assert "did not answer textDocument/hover within 5s" in error["message"]
    await until(lambda: a.notifications("$/cancelRequest"), "the cancel at the server")


def well_formed(uri: str) -> st.SearchStrategy[Any]:
    """Params of a document request as an editor sends them (most of them take the lane)."""
    pos = st.fixed_dictionaries({"line": st.integers(0, 5), "character": st.integers(0, 20)})
    return st.fixed_dictionaries(
        {
            "textDocument": st.just({"uri": uri}),
            "position": pos,
            "range": st.fixed_dictionaries({"start": pos, "end": pos}),
        }
    )


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_with_the_server_running_every_request_is_answered_exactly_once(
    tmp_path: Path, data: st.DataObject
) -> None:
    """`test_session_answer_once`'s property once the server runs (the fast lane's case: there
    the requests are sent while it starts, and wait on the general way)."""
    uri = (tmp_path / "a.py").as_uri()
    batch = data.draw(
        st.lists(
            st.tuples(st.sampled_from(METHODS), st.one_of(well_formed(uri), params_for(uri))),
            min_size=1,
            max_size=12,
        )
    )

    answered_once(tmp_path, batch, servers_running=True)
