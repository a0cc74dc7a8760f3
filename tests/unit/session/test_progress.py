"""Progress titled with the server (issue 22, "Seeing what happens"): the title rule as a table,
and a session relaying a server's progress — under a token it created, and under the token a
client's request carried — to a client that shows `basedpyright: Indexing…`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lspmux.session.families.progress import client_token, titled

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
            {"kind": "begin", "title": "BasedPyright: Indexing"},
            {"kind": "begin", "title": "BasedPyright: Indexing"},
            id="a title naming the server already is kept",
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


async def server_with_a_file(mem: Any, name: str) -> tuple[ScriptedServer, MemorySession]:
    """A server `name` with a.py open, for a client that takes progress (and answers its
    creation)."""
    a = ScriptedServer(name, HOVER, {})
    m = mem(**{name: a})
    m.client.answers["window/workDoneProgress/create"] = lambda _p: None
    await m.initialize(TAKES)
    m.open("a.py", "x\n")
    await until(lambda: a.notifications("textDocument/didOpen"), "didOpen")
    return a, m


def progress(m: MemorySession) -> list[dict[str, Any]]:
    return [n["params"] for n in m.client.notifications if n["method"] == "$/progress"]


async def test_a_server_created_progress_reaches_the_client_titled(mem: Any) -> None:
    a, m = await server_with_a_file(mem, "basedpyright")
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


@pytest.mark.parametrize(
    ("theirs", "previous", "expected"),
    [
        ("rustAnalyzer/Fetching", None, "lspmux/ra/rustAnalyzer/Fetching"),
        (
            "rustAnalyzer/Fetching",
            "lspmux/ra/rustAnalyzer/Fetching",
            "lspmux/ra/rustAnalyzer/Fetching#2",
        ),
        (
            "rustAnalyzer/Fetching",
            "lspmux/ra/rustAnalyzer/Fetching#2",
            "lspmux/ra/rustAnalyzer/Fetching#3",
        ),
        (7, None, "lspmux/ra/7"),
        (7, "lspmux/ra/7#9", "lspmux/ra/7#10"),
        ("a#b", "lspmux/ra/a#b", "lspmux/ra/a#b#2"),  # a `#` of the server's own is no generation
    ],
)
def test_a_token_created_again_gets_a_new_name(
    theirs: Any, previous: str | None, expected: str
) -> None:
    assert client_token("ra", theirs, previous) == expected


async def test_a_token_the_server_creates_twice_is_created_once_at_the_client(mem: Any) -> None:
    """rust-analyzer creates `rustAnalyzer/Fetching` again for each fetch, after the last one
    ended. Before, the client was asked to create the same token twice (pytest-lsp: "Duplicate
    progress token"); a created token is for one begin and one end."""
    a, m = await server_with_a_file(mem, "ra")
    for _ in range(3):
        _id, created = a.request("window/workDoneProgress/create", {"token": "rA/Fetching"})
        assert (await asyncio.wait_for(created, 5))["result"] is None
        a.notify("$/progress", {"token": "rA/Fetching", "value": {"kind": "begin", "title": "F"}})
        a.notify("$/progress", {"token": "rA/Fetching", "value": {"kind": "end"}})
    await until(lambda: len(progress(m)) == 6, "three begins and ends")
    created_at_client = [
        r["params"]["token"]
        for r in m.client.server_requests
        if r["method"] == "window/workDoneProgress/create"
    ]
    names = ["lspmux/ra/rA/Fetching", "lspmux/ra/rA/Fetching#2", "lspmux/ra/rA/Fetching#3"]
    assert created_at_client == names
    assert [p["token"] for p in progress(m)] == [n for n in names for _ in range(2)]
    # the user cancels the last one: the server hears of it under its own token
    m.client.notify("window/workDoneProgress/cancel", {"token": names[-1]})
    await until(lambda: a.notifications("window/workDoneProgress/cancel"), "the cancel")
    assert [n["params"] for n in a.notifications("window/workDoneProgress/cancel")] == [
        {"token": "rA/Fetching"}
    ]
