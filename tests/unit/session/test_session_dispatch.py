"""The Session against in-memory scripted servers: every request answered exactly once, in
order, with ids and tokens each side knows (issue: one method table; answer once; in order)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from .memory import Fail, Hang, Held, MemorySession, Raw, ScriptedServer, settle, until

HOVER = {"hoverProvider": True, "textDocumentSync": {"openClose": True, "change": 2}}


def hover_params(uri: str, line: int = 0, character: int = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


async def test_a_locate_path_too_long_for_the_os_is_answered(mem: Any) -> None:
    """Before: OSError(ENAMETOOLONG) escaped and the hover was never answered."""
    m = mem(a=ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: None}))
    await m.initialize()
    msg_id = m.client.request(
        "textDocument/hover", {"locate": {"file_path": "x" * 300 + ".py", "find": "<|>a"}}
    )
    answer = await m.client.answer(msg_id)
    assert "error" in answer


async def test_a_request_waiting_for_its_server_holds_later_edits_back(mem: Any) -> None:
    """Before: the didChange overtook the hover while the server started, so the position was
    sent against newer text."""
    server = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: {"contents": "h"}})
    server.initialize_delay = 0.2
    m = mem(a=server)
    await m.initialize()
    uri = m.open("a.py", "x = 1\n")
    hover = m.client.request("textDocument/hover", hover_params(uri))
    m.change(uri, 2, (0, 0), (0, 0), "y = 2\n")
    assert (await m.client.answer(hover))["result"] == {"contents": "h"}
    await until(lambda: server.notifications("textDocument/didChange"), "the didChange")
    order = [x for x in server.methods() if x.startswith("textDocument/")]
    assert order == ["textDocument/didOpen", "textDocument/hover", "textDocument/didChange"]
    assert (
        server.notifications("textDocument/didOpen")[0]["params"]["textDocument"]["text"]
        == "x = 1\n"
    )


async def test_null_with_spaces_moves_on_to_the_next_server(mem: Any) -> None:
    """Before: only the exact bytes `"result":null` counted as null; pygls writes a space."""
    a = ScriptedServer(
        "a",
        HOVER,
        {"textDocument/hover": lambda p: Raw(b'{"jsonrpc": "2.0", "id": {id}, "result": null}')},
    )
    b = ScriptedServer("b", HOVER, {"textDocument/hover": lambda p: {"contents": "from b"}})
    m = mem(a=a, b=b)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    answer = await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    assert answer["result"] == {"contents": "from b"}


async def test_a_large_non_null_answer_is_relayed_raw(mem: Any) -> None:
    big = {"contents": "y" * 200_000}
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: big})
    m = mem(a=a)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    answer = await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    assert answer["result"] == big


async def test_a_servers_cancel_reaches_the_client_under_the_clients_id(mem: Any) -> None:
    """Before: `$/cancelRequest` reached the client with the backend's id."""
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    await m.initialize({"window": {"showMessage": {}}})
    m.open("a.py", "x\n")
    await until(lambda: a.exited is not None, "the server start")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    server_id, _answer = a.request(
        "window/showMessageRequest", {"type": 3, "message": "?", "actions": []}
    )
    await until(lambda: m.client.server_requests, "the relayed request")
    relayed_id = m.client.server_requests[0]["id"]
    a.notify("$/cancelRequest", {"id": server_id})
    await until(
        lambda: [n for n in m.client.notifications if n["method"] == "$/cancelRequest"],
        "the cancel",
    )
    cancel = next(n for n in m.client.notifications if n["method"] == "$/cancelRequest")
    assert cancel["params"]["id"] == relayed_id
    assert relayed_id != server_id  # the client connection's own numbering, not the server's


async def test_a_relayed_request_the_client_never_answers_is_answered_with_an_error(
    mem: Any,
) -> None:
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    await m.initialize()
    m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    backend = m.session.backends[0]
    object.__setattr__(backend.config, "request_timeout", 0.2)
    _id, answer = a.request("window/showMessageRequest", {"type": 3, "message": "?"})
    resp = await asyncio.wait_for(answer, 5)
    assert "error" in resp  # the server is not left waiting


async def test_a_cancelled_pull_gets_request_cancelled(mem: Any) -> None:
    """Before: a cancelled textDocument/diagnostic was answered with a full result."""
    pull = {"diagnosticProvider": {"interFileDependencies": False, "workspaceDiagnostics": False}}
    a = ScriptedServer(
        "a",
        {**HOVER, **pull},
        {"textDocument/diagnostic": lambda p: Held({"kind": "full", "items": []})},
    )
    m = mem(a=a)
    await m.initialize({"textDocument": {"diagnostic": {}}})
    uri = m.open("a.py", "x\n")
    await until(lambda: a.requests("textDocument/diagnostic"), "lspmux's own pull")
    msg_id = m.client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    await settle()  # the request has reached lspmux (and waits on the pull)
    m.client.notify("$/cancelRequest", {"id": msg_id})
    answer = await m.client.answer(msg_id)
    assert answer["error"]["code"] == -32800
    assert a.release()  # the pull finishes: still one answer (checked at teardown)


@pytest.mark.parametrize(
    "params",
    [
        {"textDocument": "x", "range": {}, "context": {"diagnostics": []}},
        {"textDocument": {"uri": 3}, "range": {}},
        {"textDocument": {"uri": "file:///a.py"}, "range": {"start": 1, "end": 2}},
    ],
)
async def test_malformed_params_get_invalid_params_and_leave_nothing_in_flight(
    mem: Any, params: dict[str, Any]
) -> None:
    """Before: AttributeError inside dispatch → -32603, and the exchange stayed in flight."""
    m = mem(a=ScriptedServer("a", {**HOVER, "codeActionProvider": True}, {}))
    await m.initialize()
    answer = await m.client.answer(m.client.request("textDocument/codeAction", params))
    assert answer["error"]["code"] == -32602
    assert m.session.inflight == {}


async def test_params_nested_too_deep_to_encode_get_one_answer(mem: Any) -> None:
    """Before: the encode error answered once through the connection, the timeout again."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: None})
    m = mem(a=a)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    deep: Any = {}
    for _ in range(300):
        deep = {"d": deep}
    params = {**hover_params(uri), "extra": deep}
    answer = await m.client.answer(m.client.request("textDocument/hover", params))
    assert "error" in answer
    await settle()
    assert m.session.inflight == {}  # so no timeout answers it again


async def test_an_answer_nested_too_deep_to_reencode_is_answered_and_others_survive(
    mem: Any,
) -> None:
    deep: Any = []
    for _ in range(300):
        deep = [deep]
    a = ScriptedServer(
        "a", {**HOVER, "definitionProvider": True}, {"textDocument/definition": lambda p: deep}
    )
    b = ScriptedServer(
        "b", {**HOVER, "definitionProvider": True}, {"textDocument/definition": lambda p: []}
    )
    m = mem(a=a, b=b)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    first = m.client.request("textDocument/definition", hover_params(uri))
    second = m.client.request("textDocument/definition", hover_params(uri))
    assert "error" in (await m.client.answer(first)) or "result" in (await m.client.answer(first))
    await m.client.answer(second)


async def test_a_failing_merger_answers_with_an_error(mem: Any) -> None:
    weird = {"isIncomplete": False, "items": "not a list"}
    a = ScriptedServer(
        "a", {**HOVER, "completionProvider": {}}, {"textDocument/completion": lambda p: weird}
    )
    b = ScriptedServer(
        "b", {**HOVER, "completionProvider": {}}, {"textDocument/completion": lambda p: []}
    )
    m = mem(a=a, b=b)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    answer = await m.client.answer(m.client.request("textDocument/completion", hover_params(uri)))
    assert "error" in answer or "result" in answer


async def test_requests_before_initialize_and_after_shutdown(mem: Any) -> None:
    m = mem(a=ScriptedServer("a", HOVER, {}))
    early = await m.client.answer(
        m.client.request("textDocument/hover", hover_params("file:///x.py"))
    )
    assert early["error"]["code"] == -32002
    await m.initialize()
    assert (await m.client.answer(m.client.request("shutdown")))["result"] is None
    late = await m.client.answer(
        m.client.request("textDocument/hover", hover_params("file:///x.py"))
    )
    assert late["error"]["code"] == -32600
    again = await m.client.answer(m.client.request("initialize", {"capabilities": {}}))
    assert again["error"]["code"] == -32600


async def test_a_server_error_moves_on_and_the_last_error_is_reported(mem: Any) -> None:
    def fail(_p: Any) -> Any:
        raise Fail(-32603, "broken")

    a = ScriptedServer("a", HOVER, {"textDocument/hover": fail})
    m = mem(a=a)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    answer = await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    assert "a: broken" in answer["error"]["message"]


async def test_progress_goes_only_to_a_client_that_takes_it(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    await m.initialize({})  # no window.workDoneProgress
    m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    _id, created = a.request("window/workDoneProgress/create", {"token": "t1"})
    assert (await asyncio.wait_for(created, 5))["result"] is None
    a.notify("$/progress", {"token": "t1", "value": {"kind": "begin", "title": "x"}})
    a.notify("window/logMessage", {"type": 3, "message": "marker"})
    await until(
        lambda: any(n["method"] == "window/logMessage" for n in m.client.notifications), "marker"
    )
    assert not [n for n in m.client.notifications if n["method"] == "$/progress"]
    assert not [
        r for r in m.client.server_requests if r["method"] == "window/workDoneProgress/create"
    ]


async def test_a_token_the_client_never_heard_of_is_created_or_dropped(mem: Any) -> None:
    """Progress for a token the server created before this client attached (rust-analyzer's
    `rustAnalyzer/Fetching`, made while it started for `initialize`): its begin creates the
    token at the client under lspmux's name; an end for a token nobody began is dropped.
    Before, both reached the client raw (pygls: "Unknown progress token")."""
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    await m.initialize({"window": {"workDoneProgress": True}})
    m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    a.notify("$/progress", {"token": "ghost", "value": {"kind": "end"}})
    a.notify("$/progress", {"token": "early", "value": {"kind": "begin", "title": "Fetching"}})
    a.notify("$/progress", {"token": "early", "value": {"kind": "end"}})
    progress = lambda: [n for n in m.client.notifications if n["method"] == "$/progress"]  # noqa: E731
    await until(lambda: len(progress()) == 2, "the begin and end of the early token")
    assert [p["params"]["token"] for p in progress()] == ["lspmux/a/early"] * 2
    created = [
        r for r in m.client.server_requests if r["method"] == "window/workDoneProgress/create"
    ]
    assert [r["params"]["token"] for r in created] == ["lspmux/a/early"]


async def test_a_hanging_server_is_cancelled_and_answered_on_the_clients_cancel(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Hang()})
    m = mem(a=a)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    msg_id = m.client.request("textDocument/hover", hover_params(uri))
    await until(lambda: a.requests("textDocument/hover"), "the hover at the server")
    m.client.notify("$/cancelRequest", {"id": msg_id})
    assert (await m.client.answer(msg_id))["error"]["code"] == -32800
    await until(lambda: a.notifications("$/cancelRequest"), "the cancel at the server")
    assert (
        a.notifications("$/cancelRequest")[0]["params"]["id"]
        == a.requests("textDocument/hover")[0]["id"]
    )


# -- diagnostics: one copy per client, never stale --------------------------------------------


def seen(server: ScriptedServer) -> int:
    """The version of the document the server was last given."""
    versions = [
        m["params"]["textDocument"].get("version")
        for m in server.received
        if m.get("method") in ("textDocument/didOpen", "textDocument/didChange")
    ]
    return versions[-1]


DIAG = {
    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
    "message": "bad",
    "severity": 1,
}


async def test_a_client_that_pulls_without_refresh_support_gets_push_only(mem: Any) -> None:
    """Neovim 0.11: pull declared, no refreshSupport. Before: diagnosticProvider announced and
    publishes pushed too — every diagnostic shown twice."""
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    init = await m.initialize({"textDocument": {"diagnostic": {"dynamicRegistration": False}}})
    assert "diagnosticProvider" not in init["result"]["capabilities"]
    uri = m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    a.notify(
        "textDocument/publishDiagnostics", {"uri": uri, "version": seen(a), "diagnostics": [DIAG]}
    )
    await until(lambda: m.client.published(uri), "the push")
    assert [len(p["diagnostics"]) for p in m.client.published(uri)] == [1]
    assert not [
        r for r in m.client.server_requests if r["method"] == "workspace/diagnostic/refresh"
    ]


async def test_a_client_that_pulls_with_refresh_is_told_to_pull_and_never_pushed(mem: Any) -> None:
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    m.client.answers["workspace/diagnostic/refresh"] = lambda _p: None
    init = await m.initialize(
        {
            "textDocument": {"diagnostic": {}},
            "workspace": {"diagnostics": {"refreshSupport": True}},
        }
    )
    assert "diagnosticProvider" in init["result"]["capabilities"]
    uri = m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    a.notify(
        "textDocument/publishDiagnostics", {"uri": uri, "version": seen(a), "diagnostics": [DIAG]}
    )
    await until(
        lambda: [
            r for r in m.client.server_requests if r["method"] == "workspace/diagnostic/refresh"
        ],
        "a refresh request",
    )
    report = await m.client.answer(
        m.client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    )
    assert [d["message"] for d in report["result"]["items"]] == ["bad"]
    assert m.client.published(uri) == []


async def test_closing_a_file_clears_its_diagnostics(mem: Any) -> None:
    """Before: didClose dropped them from the store without telling the client."""
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    await m.initialize({})
    uri = m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    a.notify(
        "textDocument/publishDiagnostics", {"uri": uri, "version": seen(a), "diagnostics": [DIAG]}
    )
    await until(lambda: m.client.published(uri), "the push")
    m.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    await until(lambda: m.client.published(uri)[-1]["diagnostics"] == [], "an empty publish")


# -- announce only what is served; bridge what a server lacks ----------------------------------


async def test_the_first_start_announces_what_the_hundredth_does(mem: Any, tmp_path: Path) -> None:
    """Before: the answer came from a cache of earlier starts; with an empty cache nothing of a
    server was known, so the client never asked for what it serves until restarted."""
    (tmp_path / "a.py").write_text("x = 1\n")
    caps = {
        **HOVER,
        "semanticTokensProvider": {
            "legend": {"tokenTypes": ["variable"], "tokenModifiers": []},
            "full": True,
        },
    }
    first = mem(a=ScriptedServer("a", caps, {}))
    answer = (await first.initialize())["result"]["capabilities"]
    assert answer["hoverProvider"] is True
    assert answer["semanticTokensProvider"]["full"] == {"delta": True}
    await first.close()
    # The cache is warm now: the answer waits for no start (this server would take a minute to
    # initialize), and the server the workspace needs is started right after it.
    slow = ScriptedServer("a", caps, {})
    slow.initialize_delay = 60.0
    second = mem(a=slow)
    again = (await asyncio.wait_for(second.initialize(), 10))["result"]["capabilities"]
    assert again == answer
    await until(lambda: second.servers["a"].exited is not None, "the server started after")


async def test_semantic_token_deltas_are_computed_for_a_server_without_them(mem: Any) -> None:
    """basedpyright rejects semanticTokens/full/delta; before, lspmux announced delta and passed
    the request on, the error was dropped by Neovim and highlighting froze."""
    legend = {"tokenTypes": ["variable", "function"], "tokenModifiers": []}
    tokens = [[0, 0, 1, 0, 0], [0, 0, 1, 0, 0, 1, 0, 3, 1, 0]]

    def full(_p: Any) -> Any:
        return {
            "data": tokens[0]
            if len(a.requests("textDocument/semanticTokens/full")) == 1
            else tokens[1]
        }

    def no_delta(_p: Any) -> Any:
        raise Fail(-32601, "no delta")

    a = ScriptedServer(
        "a",
        {**HOVER, "semanticTokensProvider": {"legend": legend, "full": True}},
        {
            "textDocument/semanticTokens/full": full,
            "textDocument/semanticTokens/full/delta": no_delta,
        },
    )
    m = mem(a=a)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    first = await m.client.answer(
        m.client.request("textDocument/semanticTokens/full", {"textDocument": {"uri": uri}})
    )
    assert first["result"]["data"] == tokens[0]
    delta = await m.client.answer(
        m.client.request(
            "textDocument/semanticTokens/full/delta",
            {"textDocument": {"uri": uri}, "previousResultId": first["result"]["resultId"]},
        )
    )
    edits = delta["result"]["edits"]
    data = list(tokens[0])
    for e in sorted(edits, key=lambda e: -e["start"]):
        data[e["start"] : e["start"] + e["deleteCount"]] = e.get("data", [])
    assert data == tokens[1]
    assert not a.requests("textDocument/semanticTokens/full/delta")  # only full was asked


async def test_code_action_resolve_is_not_sent_to_a_server_that_does_not_resolve(mem: Any) -> None:
    """basedpyright answers codeAction/resolve with -32601; before, lspmux sent it there."""
    action = {"title": "Fix it", "kind": "quickfix", "edit": {"changes": {}}}
    a = ScriptedServer(
        "a", {**HOVER, "codeActionProvider": True}, {"textDocument/codeAction": lambda p: [action]}
    )
    b = ScriptedServer(
        "b",
        {**HOVER, "codeActionProvider": {"resolveProvider": True}},
        {
            "textDocument/codeAction": lambda p: [{"title": "Other", "data": 1}],
            "codeAction/resolve": lambda p: {**p, "edit": {"changes": {}}},
        },
    )
    m = mem(a=a, b=b)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    actions = (
        await m.client.answer(
            m.client.request(
                "textDocument/codeAction",
                {"textDocument": {"uri": uri}, "range": rng, "context": {"diagnostics": []}},
            )
        )
    )["result"]
    mine = next(x for x in actions if x["title"] == "Fix it")
    resolved = await m.client.answer(m.client.request("codeAction/resolve", mine))
    assert resolved["result"] == mine
    assert not a.requests("codeAction/resolve")
    other = next(x for x in actions if x["title"] == "Other")
    resolved_b = await m.client.answer(m.client.request("codeAction/resolve", other))
    assert "edit" in resolved_b["result"] and b.requests("codeAction/resolve")


# -- a shared server: each client answered for its own text and capabilities -------------------


async def test_a_shared_server_answers_each_client_against_its_own_text(
    mem: Any, tmp_path: Path
) -> None:
    """Before: the server held whichever client edited last, and a hover was forwarded as it
    was: the editor was answered from the agent's buffer."""

    def hover(p: Any) -> Any:
        return {"contents": "for the text the server held"}

    a = ScriptedServer("a", HOVER, {"textDocument/hover": hover})
    editor = mem(a=a)
    await editor.initialize()
    agent = MemorySession(tmp_path, {"a": a}, share_with=editor, client_id="agent")
    await agent.initialize()
    uri = editor.open("a.py", "editor_text = 1\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    agent.open("a.py", "agent_text = 2\n")
    await until(lambda: "agent_text" in str(a.received[-1]), "the agent's text at the server")

    def text_before_last_hover() -> str:
        """The text the server held when it got the last hover."""
        text = last = ""
        for msg in a.received:
            method = msg.get("method")
            if method == "textDocument/didOpen":
                text = msg["params"]["textDocument"]["text"]
            elif method == "textDocument/didChange":
                text = msg["params"]["contentChanges"][-1]["text"]
            elif method == "textDocument/hover":
                last = text
        return last

    await editor.client.answer(editor.client.request("textDocument/hover", hover_params(uri)))
    assert text_before_last_hover() == "editor_text = 1\n"
    await agent.client.answer(agent.client.request("textDocument/hover", hover_params(uri)))
    assert text_before_last_hover() == "agent_text = 2\n"
    await editor.client.answer(editor.client.request("textDocument/hover", hover_params(uri)))
    assert text_before_last_hover() == "editor_text = 1\n"
    agent.client.assert_answered_once()
    await agent.close()


async def test_a_shared_servers_answers_fit_each_clients_capabilities(
    mem: Any, tmp_path: Path
) -> None:
    """Before: a shared server was initialized with lspmux's own rich capabilities and every
    client got links, snippets and markdown, whatever it declared."""
    link = [
        {
            "targetUri": "file:///b.py",
            "targetRange": {
                "start": {"line": 1, "character": 0},
                "end": {"line": 3, "character": 0},
            },
            "targetSelectionRange": {
                "start": {"line": 1, "character": 4},
                "end": {"line": 1, "character": 7},
            },
        }
    ]
    a = ScriptedServer(
        "a",
        {**HOVER, "definitionProvider": True},
        {
            "textDocument/definition": lambda p: link,
            "textDocument/hover": lambda p: {
                "contents": {"kind": "markdown", "value": "**bold** `code`"}
            },
        },
    )
    rich = mem(a=a)
    await rich.initialize(
        {
            "textDocument": {
                "definition": {"linkSupport": True},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
            }
        }
    )
    plain = MemorySession(tmp_path, {"a": a}, share_with=rich, client_id="plain")
    await plain.initialize({"textDocument": {"hover": {"contentFormat": ["plaintext"]}}})
    uri = rich.open("a.py", "x\n")
    plain.open("a.py", "x\n")
    got_rich = await rich.client.answer(
        rich.client.request("textDocument/definition", hover_params(uri))
    )
    got_plain = await plain.client.answer(
        plain.client.request("textDocument/definition", hover_params(uri))
    )
    assert got_rich["result"] == link
    assert got_plain["result"] == [
        {"uri": "file:///b.py", "range": link[0]["targetSelectionRange"]}
    ]
    hover_plain = await plain.client.answer(
        plain.client.request("textDocument/hover", hover_params(uri))
    )
    assert hover_plain["result"]["contents"]["kind"] == "plaintext"
    assert "**" not in hover_plain["result"]["contents"]["value"]
    plain.client.assert_answered_once()
    await plain.close()


async def test_a_server_that_comes_up_later_is_registered_with_the_client(tmp_path: Path) -> None:
    """What lspmux announces follows what its servers serve: a server started after
    `initialize` (its file type was not in the workspace) has its providers registered
    dynamically with a client that supports it; an unregistration is passed on too."""
    (tmp_path / "a.py").write_text("x = 1\n")
    a = ScriptedServer("a", HOVER, {})
    c = ScriptedServer("c", {**HOVER, "documentFormattingProvider": True}, {})
    m = MemorySession(tmp_path, {"a": a, "c": c}, file_types_of={"c": (".c",)})
    m.client.answers["client/registerCapability"] = lambda _p: None
    m.client.answers["client/unregisterCapability"] = lambda _p: None
    try:
        init = await m.initialize(
            {
                "textDocument": {
                    "formatting": {"dynamicRegistration": True},
                    "rangeFormatting": {"dynamicRegistration": True},
                }
            }
        )
        assert "documentFormattingProvider" not in init["result"]["capabilities"]
        m.open("b.c", "int x;\n", language_id="c")
        reg = await until(
            lambda: [
                r for r in m.client.server_requests if r["method"] == "client/registerCapability"
            ],
            "a registration with the client",
        )
        methods = [x["method"] for x in reg[0]["params"]["registrations"]]
        assert methods == ["textDocument/formatting"]
        # It registers range formatting dynamically, later withdraws it: the client follows.
        _id, answered = c.request(
            "client/registerCapability",
            {"registrations": [{"id": "r1", "method": "textDocument/rangeFormatting"}]},
        )
        await asyncio.wait_for(answered, 5)
        regs = await until(
            lambda: [
                x
                for r in m.client.server_requests
                if r["method"] == "client/registerCapability"
                for x in r["params"]["registrations"]
                if x["method"] == "textDocument/rangeFormatting"
            ],
            "range formatting registered with the client",
        )
        _id, answered = c.request(
            "client/unregisterCapability",
            {"unregisterations": [{"id": "r1", "method": "textDocument/rangeFormatting"}]},
        )
        await asyncio.wait_for(answered, 5)
        gone = await until(
            lambda: [
                r for r in m.client.server_requests if r["method"] == "client/unregisterCapability"
            ],
            "the unregistration at the client",
        )
        assert gone[0]["params"]["unregisterations"][0]["id"] == regs[0]["id"]
    finally:
        m.client.assert_answered_once()
        await m.close()


async def test_shutdown_and_exit_in_one_read_still_answer_the_shutdown(mem: Any) -> None:
    """Before: exit ran on the shutdown's completion ahead of the task that answers it, so the
    connection closed with the shutdown unanswered."""
    import orjson

    from .memory import encode_body

    m = mem(a=ScriptedServer("a", HOVER, {}))
    await m.initialize()
    m.open("a.py", "x\n")
    m.client.sent_ids.append(99)
    both = encode_body(orjson.dumps({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}))
    both += encode_body(orjson.dumps({"jsonrpc": "2.0", "method": "exit"}))
    assert m.client.to_lspmux is not None
    m.client.to_lspmux(both)
    assert (await m.client.answer(99))["result"] is None
    await until(lambda: m.exited, "the session's exit")
    assert m.exited == [0]


async def test_diagnostic_status_with_a_bad_text_document_is_invalid_params(mem: Any) -> None:
    """Before: -32603 (an AttributeError inside lspmux) for the client's own mistake."""
    m = mem(a=ScriptedServer("a", HOVER, {}))
    await m.initialize()
    for params in ({"textDocument": 1}, {"textDocument": {"uri": 5}}, [1]):
        answer = await m.client.answer(m.client.request("lspmux/diagnosticStatus", params))
        assert answer["error"]["code"] == -32602, (params, answer)
        assert (
            "textDocument" in answer["error"]["message"] or "params" in answer["error"]["message"]
        )


async def test_a_file_name_too_long_for_the_os_is_served_from_the_buffer(mem: Any) -> None:
    """An open document whose name is 300 bytes (no file system has it): its hover reaches
    the server like any other; before, -32603 "File name too long" from a root lookup."""
    m = mem(a=ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: {"contents": "h"}}))
    await m.initialize()
    uri = m.open("x" * 300 + ".py", "x = 1\n")
    answer = await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    assert answer.get("result") == {"contents": "h"}, answer


async def test_an_unknown_method_nobody_can_take_is_method_not_found(mem: Any) -> None:
    """Before: `null`, as if a server had answered."""
    a = ScriptedServer("a", HOVER, {"x/known": lambda p: "yes"})
    m = mem(a=a)
    await m.initialize()
    uri = m.open("notes.unclaimed", "text\n")  # a file type no server takes
    params = {"textDocument": {"uri": uri}}
    answer = await m.client.answer(m.client.request("x/custom", params))
    assert answer["error"]["code"] == -32601, answer
    assert "x/custom" in answer["error"]["message"]
    # a file a server takes: the unknown method is forwarded to it and answered
    served = m.open("a.py", "x\n")
    answer = await m.client.answer(m.client.request("x/known", {"textDocument": {"uri": served}}))
    assert answer.get("result") == "yes", answer


async def test_symbols_are_asked_again_while_the_server_is_still_loading(mem: Any) -> None:
    """rust-analyzer answers documentSymbol with ContentModified ("waiting for cargo
    metadata") until it has loaded its project: a symbol-scoped Locate waits for it instead of
    saying that no server offers document symbols."""
    calls = []

    def symbols(params: Any) -> Any:
        calls.append(params)
        if len(calls) < 3:
            raise Fail(-32801, "waiting for cargo metadata or cargo check")
        return [
            {"name": "greet", "kind": 12, "range": {"start": {"line": 0, "character": 0},
             "end": {"line": 1, "character": 12}}, "selectionRange": {"start": {"line": 0,
             "character": 3}, "end": {"line": 0, "character": 8}}}
        ]  # fmt: skip

    caps = {**HOVER, "documentSymbolProvider": True}
    m = mem(a=ScriptedServer("a", caps, {"textDocument/documentSymbol": symbols}))
    await m.initialize()
    m.open("a.py", "def greet():\n    return 1\n")
    answer = await m.client.answer(
        m.client.request("locate/resolve", {"locate": "a.py:greet@return <|>1"})
    )
    assert len(calls) == 3, answer
    assert answer["result"]["position"] == {"line": 1, "character": 11}, answer


async def test_the_end_of_input_closes_once_the_last_request_is_answered(mem: Any) -> None:
    """`lspmux proxy < requests`: the input ends with a hover in flight; the connection stays
    open until its answer is written (woken by that answer, not a polling timer), then closes."""
    a = ScriptedServer("a", HOVER, {"textDocument/hover": lambda p: Held({"contents": "late"})})
    m = mem(a=a)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    msg_id = m.client.request("textDocument/hover", hover_params(uri))
    await until(lambda: a.requests("textDocument/hover"), "the hover at the server")
    conn = m.session.conn
    assert conn is not None
    conn.connection_lost(None)  # the read pipe ends
    await settle()
    assert not conn.closed  # the hover is still owed
    assert a.release() == 1
    await until(lambda: conn.closed, "the connection closed after the answer")
    assert (await m.client.answer(msg_id))["result"] == {"contents": "late"}


async def test_what_a_server_instance_keeps_is_kept_by_the_method_s_family(mem: Any) -> None:
    """`Backend.silent` reads `progress_open` and `published`: kept by the progress and
    diagnostics families' instance steps, the backend itself branches on no method."""
    a = ScriptedServer("a", HOVER, {})
    m = mem(a=a)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    backend = m.session.backends[0]
    a.notify("$/progress", {"token": "t", "value": {"kind": "begin", "title": "indexing"}})
    await settle()
    assert list(backend.progress_open) == ["t"]
    a.notify("$/progress", {"token": "t", "value": {"kind": "end"}})
    await settle()
    assert backend.progress_open == {}
    assert not backend.published
    a.notify("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": []})
    await settle()
    assert backend.published
