"""A session's settings and its servers (in memory): the client answers `workspace/configuration`
(merged under the configured settings), a request a server sends while its client is still
initializing waits for the client's `initialize` answer, and the client's
`didChangeConfiguration` reaches the servers that follow it."""

from __future__ import annotations

from typing import Any

from .memory import ScriptedServer, until

HOVER = {"hoverProvider": True, "textDocumentSync": {"openClose": True, "change": 2}}


async def test_the_client_answers_configuration_and_its_changes_reach_the_server(
    mem: Any,
) -> None:
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    m.client.answers["workspace/configuration"] = lambda params: [{"from": "client"}]
    await m.initialize({"workspace": {"configuration": True}})
    m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    _id, answer = a.request("workspace/configuration", {"items": [{"section": "a"}]})
    assert (await answer)["result"] == [{"from": "client"}]
    m.client.notify("workspace/didChangeConfiguration", {"settings": {"a": 1}})
    changed = await until(lambda: a.notifications("workspace/didChangeConfiguration"), "change")
    assert changed[-1]["params"] == {"settings": {"a": 1}}


async def test_a_client_that_cannot_answer_gets_the_configured_settings(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    await m.initialize({})  # no workspace.configuration: never asked
    m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    _id, answer = a.request("workspace/configuration", {"items": [{"section": "a"}]})
    assert (await answer)["result"] == [None]
    assert not m.client.server_requests


async def test_a_request_during_initialize_waits_for_the_initialize_answer(mem: Any) -> None:
    m = mem(a=ScriptedServer("a", HOVER, {}))
    seen: list[str] = []
    m.session.when_running(lambda: seen.append(m.session.state))
    assert seen == []  # still initializing: deferred
    await m.initialize()
    await until(lambda: seen, "the deferred callback")
    assert seen == ["running"]
    m.session.when_running(lambda: seen.append("now"))  # running: at once
    assert seen == ["running", "now"]


async def test_a_deferred_request_is_settled_when_the_client_goes_before_initialize(
    mem: Any,
) -> None:
    m = mem(a=ScriptedServer("a", HOVER, {}))
    seen: list[str] = []
    m.session.when_running(lambda: seen.append(m.session.state))
    m.session.exit()  # exit before initialize
    assert seen == ["closed"]  # the relay then declines, and the server gets its answer
