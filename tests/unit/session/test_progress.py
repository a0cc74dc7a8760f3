"""Progress titled with the server (issue 22, "Seeing what happens"): the title rule as a table,
and a session relaying a server's progress — under a token it created, and under the token a
client's request carried — to a client that shows `basedpyright: Indexing…`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lspmux.session.families.progress import titled

from .memory import Held, MemorySession, ScriptedServer, until

HOVER = {"hoverProvider": True, "textDocumentSync": {"openClose": True, "change": 2}}
TAKES = {"window": {"workDoneProgress": True}}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            {"kind": "begin", "title": "Indexing…"},
            {"kind": "begin", "title": "basedpyright: Indexing…"},
            id="a title is prefixed",
        ),
        pytest.param(
            {"kind": "begin", "title": "Indexing", "message": "3/9", "percentage": 30},
            {
                "kind": "begin",
                "title": "basedpyright: Indexing",
                "message": "3/9",
                "percentage": 30,
            },
            id="the rest of a titled begin is kept",
        ),
        pytest.param(
            {"kind": "begin", "title": "", "message": "Loading workspace", "cancellable": True},
            {"kind": "begin", "title": "basedpyright: Loading workspace", "cancellable": True},
            id="an empty title: the message moves into it",
        ),
        pytest.param(
            {"kind": "begin", "title": "  ", "message": "  "},
            {"kind": "begin", "title": "basedpyright", "message": "  "},
            id="blank title and message: the name alone",
        ),
        pytest.param(
            {"kind": "begin", "title": ""},
            {"kind": "begin", "title": "basedpyright"},
            id="pyright's empty begin: the name alone",
        ),
        pytest.param(
            {"kind": "begin"},
            {"kind": "begin", "title": "basedpyright"},
            id="no title at all: the name alone",
        ),
        pytest.param(
            {"kind": "begin", "title": 7},
            {"kind": "begin", "title": "basedpyright"},
            id="a title that is not text: the name alone",
        ),
        pytest.param(
            {"kind": "report", "message": "1 file to analyze", "percentage": 50},
            {"kind": "report", "message": "1 file to analyze", "percentage": 50},
            id="a report passes as it is",
        ),
        pytest.param(
            {"kind": "end", "message": "done"},
            {"kind": "end", "message": "done"},
            id="an end passes as it is",
        ),
        pytest.param(
            {"items": [{"label": "x"}]},
            {"items": [{"label": "x"}]},
            id="a partial result passes as it is",
        ),
    ],
)
def test_the_title_names_the_server(value: dict[str, Any], expected: dict[str, Any]) -> None:
    before = dict(value)
    assert titled("basedpyright", value) == expected
    assert value == before  # the server's message is shared by every session: never changed


def progress(m: MemorySession) -> list[dict[str, Any]]:
    return [n["params"] for n in m.client.notifications if n["method"] == "$/progress"]


async def test_a_server_created_progress_reaches_the_client_titled(mem: Any) -> None:
    a = ScriptedServer("basedpyright", HOVER, {})
    m = mem(basedpyright=a)
    m.client.answers["window/workDoneProgress/create"] = lambda _p: None
    await m.initialize(TAKES)
    m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    _id, created = a.request("window/workDoneProgress/create", {"token": "t1"})
    assert (await asyncio.wait_for(created, 5))["result"] is None
    a.notify("$/progress", {"token": "t1", "value": {"kind": "begin", "title": ""}})
    a.notify("$/progress", {"token": "t1", "value": {"kind": "report", "message": "1 file"}})
    a.notify("$/progress", {"token": "t1", "value": {"kind": "end"}})
    await until(lambda: len(progress(m)) == 3, "begin, report and end")
    assert progress(m) == [
        {"token": "lspmux/basedpyright/t1", "value": {"kind": "begin", "title": "basedpyright"}},
        {"token": "lspmux/basedpyright/t1", "value": {"kind": "report", "message": "1 file"}},
        {"token": "lspmux/basedpyright/t1", "value": {"kind": "end"}},
    ]


async def test_progress_under_the_clients_own_token_is_titled_too(mem: Any) -> None:
    """A client's request carrying a workDoneToken: no create, the client's token kept, and the
    server's begin still names the server."""
    a = ScriptedServer("ruff", HOVER, {"textDocument/hover": lambda _p: Held({"contents": "h"})})
    m = mem(ruff=a)
    await m.initialize(TAKES)
    uri = m.open("a.py", "x\n")
    params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
    hover = m.client.request("textDocument/hover", {**params, "workDoneToken": "mine"})
    await until(lambda: a.held, "the hover at the server")
    a.notify("$/progress", {"token": "mine", "value": {"kind": "begin", "title": "Hovering"}})
    a.notify("$/progress", {"token": "mine", "value": {"kind": "end", "message": "ok"}})
    await until(lambda: len(progress(m)) == 2, "begin and end")
    a.release()
    assert (await m.client.answer(hover))["result"] == {"contents": "h"}
    assert progress(m) == [
        {"token": "mine", "value": {"kind": "begin", "title": "ruff: Hovering"}},
        {"token": "mine", "value": {"kind": "end", "message": "ok"}},
    ]
    assert not [
        r for r in m.client.server_requests if r["method"] == "window/workDoneProgress/create"
    ]
