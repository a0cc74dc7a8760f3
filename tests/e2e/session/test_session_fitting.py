"""Large answers fitted for a client that declared less than the shared server was told: by
the fitting worker process, off the event loop, with the loop itself as the fallback."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from lspmux.session import fitting
from tests.unit.session.memory import MemorySession, ScriptedServer, settle, until

CAPS = {
    "hoverProvider": True,
    "completionProvider": {},
    "textDocumentSync": {"openClose": True, "change": 2},
}
RICH = {
    "textDocument": {
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "completion": {
            "completionItem": {"snippetSupport": True, "documentationFormat": ["markdown"]}
        },
    }
}
ITEMS = 3000  # ≈ 300 KB: over FIT_ON_LOOP


def completion_list(_params: Any) -> dict[str, Any]:
    return {
        "isIncomplete": False,
        "items": [
            {
                "label": f"item_{i}",
                "documentation": {"kind": "markdown", "value": f"Returns `item_{i}`, *fast*."},
                "insertText": f"item_{i}(${{1:x}})$0",
                "insertTextFormat": 2,
            }
            for i in range(ITEMS)
        ],
    }


def position(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}


@pytest.fixture
async def shared(tmp_path: Path):  # type: ignore[no-untyped-def]
    """An editor that declared everything and an agent that declared nothing, on one server."""
    server = ScriptedServer(
        "a",
        CAPS,
        {
            "textDocument/completion": completion_list,
            "textDocument/hover": lambda p: {"contents": {"kind": "plaintext", "value": "x"}},
        },
    )
    editor = MemorySession(tmp_path, {"a": server})
    await editor.initialize(RICH)
    agent = MemorySession(tmp_path, {"a": server}, share_with=editor, client_id="agent")
    await agent.initialize({})
    editor.open("a.py", "x\n")
    uri = agent.open("a.py", "x\n")
    yield agent, uri
    await agent.close()
    await editor.close()
    await fitting.stop()


def assert_fitted(answer: dict[str, Any]) -> None:
    items = answer["result"]["items"]
    assert len(items) == ITEMS
    assert items[7]["documentation"] == {"kind": "plaintext", "value": "Returns item_7, fast."}
    assert items[7]["insertText"] == "item_7(x)"
    assert items[7]["insertTextFormat"] == 1


async def test_a_large_answer_is_fitted_while_the_loop_answers_others(shared: Any) -> None:
    """Before: the 300 KB answer was parsed, rewritten and encoded on the event loop, so the
    hover asked after it waited for all of that. Now the worker process fits it and the hover
    is answered first."""
    agent, uri = shared
    client = agent.client
    completion = client.request("textDocument/completion", position(uri))
    hover = client.request("textDocument/hover", position(uri))
    await until(lambda: completion in client.responses, "the completion's answer")
    assert list(client.responses).index(hover) < list(client.responses).index(completion)
    assert_fitted(client.responses[completion][0])
    assert fitting.fitter()._proc is not None  # the worker did it


@pytest.mark.parametrize(
    "argv",
    [
        ["/nonexistent/python3"],  # cannot start
        [sys.executable, "-c", "import sys; sys.stdin.buffer.read(1)"],  # dies at once
        [sys.executable, "-c", "import sys\nfor _ in sys.stdin.buffer: pass"],  # never answers
    ],
    ids=["cannot-start", "dies", "never-answers"],
)
async def test_without_a_working_worker_the_answer_is_fitted_on_the_loop(
    shared: Any, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, uri = shared
    monkeypatch.setattr(fitting, "FIT_TIMEOUT", 1.0)
    fitting._fitters[asyncio.get_running_loop()] = fitting.Fitter(argv)
    msg_id = agent.client.request("textDocument/completion", position(uri))
    assert_fitted(await agent.client.answer(msg_id, timeout=15))


async def test_a_request_cancelled_while_fitted_is_answered_once(
    shared: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, uri = shared
    fits = [0, 0]  # started, finished: the worker's work, which `settle` cannot see
    real_fit = fitting._fit

    async def counted_fit(*args: Any) -> None:
        fits[0] += 1
        try:
            await real_fit(*args)
        finally:
            fits[1] += 1

    monkeypatch.setattr(fitting, "_fit", counted_fit)
    msg_id = agent.client.request("textDocument/completion", position(uri))
    agent.client.notify("$/cancelRequest", {"id": msg_id})
    answer = await agent.client.answer(msg_id)
    await settle()  # the server's answer has reached lspmux (and maybe the worker)
    await until(lambda: fits[0] == fits[1], "the worker's late answer handled")
    await settle()  # whatever that answer made lspmux write has arrived
    assert "error" in answer or len(answer["result"]["items"]) == ITEMS
    assert len(agent.client.responses[msg_id]) == 1


async def test_a_large_answer_with_nothing_to_fit_is_relayed_without_the_worker(
    tmp_path: Path,
) -> None:
    """A client that takes markdown but not snippets, and a list without snippets: the bytes
    are scanned, not parsed, and the answer is the server's, untouched."""
    plain_items = [
        {"label": f"item_{i}", "documentation": {"kind": "markdown", "value": f"`item_{i}`"}}
        for i in range(ITEMS)
    ]
    answer = {"isIncomplete": False, "items": plain_items}
    server = ScriptedServer("a", CAPS, {"textDocument/completion": lambda p: answer})
    editor = MemorySession(tmp_path, {"a": server})
    await editor.initialize(RICH)
    agent = MemorySession(tmp_path, {"a": server}, share_with=editor, client_id="agent")
    markdown_only = {"textDocument": {"completion": {"completionItem": RICH_ITEM_DOCS}}}
    await agent.initialize(markdown_only)
    try:
        editor.open("a.py", "x\n")
        uri = agent.open("a.py", "x\n")
        got = await agent.client.answer(
            agent.client.request("textDocument/completion", position(uri)), timeout=15
        )
        assert got["result"] == answer
        assert fitting.fitter()._proc is None  # never needed
    finally:
        await agent.close()
        await editor.close()
        await fitting.stop()


RICH_ITEM_DOCS = {"documentationFormat": ["markdown"]}


@pytest.mark.parametrize("on_loop", [True, False], ids=["on-the-loop", "over-the-limit"])
async def test_a_large_list_of_markdown_without_escapes_is_fitted_without_the_worker(
    tmp_path: Path, on_loop: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client without capabilities, a list whose only change is its markdown documentation
    and whose bytes hold no escape: fitted in place on the loop (no round trip of the answer
    to the worker) — unless it is over `FIT_IN_PLACE_ON_LOOP`, when the worker does it."""
    items = [
        {"label": f"item_{i}", "documentation": {"kind": "markdown", "value": f"`item_{i}` *x*"}}
        for i in range(ITEMS)
    ]
    server = ScriptedServer(
        "a", CAPS, {"textDocument/completion": lambda p: {"isIncomplete": False, "items": items}}
    )
    if not on_loop:
        monkeypatch.setattr(fitting, "FIT_IN_PLACE_ON_LOOP", fitting.FIT_ON_LOOP)
    editor = MemorySession(tmp_path, {"a": server})
    await editor.initialize(RICH)
    agent = MemorySession(tmp_path, {"a": server}, share_with=editor, client_id="agent")
    await agent.initialize({})
    try:
        editor.open("a.py", "x\n")
        uri = agent.open("a.py", "x\n")
        got = await agent.client.answer(
            agent.client.request("textDocument/completion", position(uri)), timeout=15
        )
        docs = [item["documentation"] for item in got["result"]["items"]]
        assert docs == [{"kind": "plaintext", "value": f"item_{i} x"} for i in range(ITEMS)]
        assert (fitting.fitter()._proc is None) == on_loop
    finally:
        await agent.close()
        await editor.close()
        await fitting.stop()
