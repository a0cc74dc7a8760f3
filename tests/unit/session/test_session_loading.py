"""A server that must load its project before it is sent documents (backends/loading.py:
rust-analyzer, which otherwise never publishes the diagnostics of a document it was sent while
it ran `cargo metadata`): the documents a client opens and edits meanwhile reach it once its
first "Fetching" progress ends — with the text they have then — and not before, whether or not
the client takes progress (lspmux always does: backends/client_caps.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lspmux.backends.loading import ends, load_token

from .memory import MemorySession, ScriptedServer, settle, until

SYNC = {"textDocumentSync": {"openClose": True, "change": 2}}
TAKES = {"window": {"workDoneProgress": True}}
FETCHING = "rustAnalyzer/Fetching"
Make = Callable[..., MemorySession]


def _progress(kind: str, token: str = FETCHING) -> dict[str, Any]:
    return {
        "token": token,
        "value": {"kind": kind, "title": "Fetching"} if kind == "begin" else {"kind": kind},
    }


@pytest.mark.parametrize("client", [TAKES, {}], ids=["progress", "no-capabilities"])
async def test_documents_wait_for_the_end_of_rust_analyzers_first_fetch(
    mem: Make, client: dict[str, Any]
) -> None:
    ra = ScriptedServer("rust-analyzer", SYNC, {})
    s = mem(**{"rust-analyzer": ra})
    await s.initialize(client)
    uri = s.open("lib.py", "a = 1\n")
    await until(lambda: "initialized" in ra.methods(), "rust-analyzer initialized")
    ra.notify("$/progress", _progress("begin"))
    s.change(uri, 2, (0, 4), (0, 5), "2")
    ra.notify("$/progress", _progress("end", "rustAnalyzer/Roots Scanned"))  # not the one
    await settle()
    assert ra.notifications("textDocument/didOpen") == []  # still loading its workspace
    ra.notify("$/progress", _progress("end"))
    [opened] = await until(
        lambda: ra.notifications("textDocument/didOpen"), "the document once it loaded"
    )
    assert opened["params"]["textDocument"]["text"] == "a = 2\n"  # the text it has now
    assert ra.notifications("textDocument/didChange") == []  # in the didOpen already


async def test_other_servers_get_documents_at_once(mem: Make) -> None:
    other = ScriptedServer("pyright", SYNC, {})
    s = mem(pyright=other)
    await s.initialize(TAKES)
    s.open("lib.py", "a = 1\n")
    await until(lambda: other.notifications("textDocument/didOpen"), "the document at once")


@pytest.mark.parametrize(
    ("result", "client", "expected"),
    [
        ({"serverInfo": {"name": "rust-analyzer"}}, TAKES, [FETCHING]),
        ({"serverInfo": {"name": "rust-analyzer"}}, {}, []),
        ({"serverInfo": {"name": "rust-analyzer"}}, {"window": {"workDoneProgress": False}}, []),
        ({"serverInfo": {"name": "clangd"}}, TAKES, []),
        ({"serverInfo": "rust-analyzer"}, TAKES, []),
        ({"capabilities": {}}, TAKES, []),
        (None, TAKES, []),
    ],
)
def test_the_progress_that_ends_a_load(result: Any, client: Any, expected: list[str]) -> None:
    assert load_token(result, client) == expected


@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        ({"method": "$/progress", "params": _progress("end")}, True),
        ({"method": "$/progress", "params": _progress("begin")}, False),
        ({"method": "$/progress", "params": _progress("report")}, False),
        ({"method": "$/progress", "params": _progress("end", "rustAnalyzer/Indexing")}, False),
        ({"method": "window/logMessage", "params": _progress("end")}, False),
        ({"method": "$/progress", "params": {"token": FETCHING, "value": "end"}}, False),
        ({"method": "$/progress"}, False),
    ],
)
def test_the_end_of_that_progress(msg: Any, expected: bool) -> None:
    assert ends(msg, FETCHING) is expected
