"""Two clients of one shared server, each with its own unsaved text of the same file, each
answered for its own text — with the real basedpyright, ruff and clangd behind the daemon.

Before: a shared server held whichever client edited last, and a request was forwarded as it
was, so the editor was answered from the agent's buffer (a hover on the wrong line, rename
edits at the wrong places, formatting computed on another text and applied to this one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t

from tests.e2e.conftest import Proxy, plain
from tests.e2e.daemon_harness import DaemonUnderTest, daemon_fixture

pytestmark = pytest.mark.e2e

SHIFT = "SHIFTED  =  1\n"  # one more line at the top, and not formatted the way ruff wants


def insert_top(client: Proxy, uri: str, text: str) -> None:
    client.change(
        uri,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(0, 0), t.Position(0, 0)), text=text
            )
        ],
    )


async def hover(client: Proxy, uri: str, line: int, col: int) -> str:
    result = await client.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(line, col))
    )
    return str(plain(result.contents)) if result is not None else ""


async def definition_lines(client: Proxy, uri: str, line: int, col: int) -> set[int]:
    result = await client.client.text_document_definition_async(
        t.DefinitionParams(t.TextDocumentIdentifier(uri), t.Position(line, col))
    )
    out = set()
    for item in result or []:
        rng = getattr(item, "target_selection_range", None) or item.range
        out.add(rng.start.line)
    return out


async def rename_lines(client: Proxy, uri: str, line: int, col: int) -> set[int]:
    edit = await client.client.text_document_rename_async(
        t.RenameParams(t.TextDocumentIdentifier(uri), t.Position(line, col), "renamed")
    )
    lines: set[int] = set()
    for change in (edit.document_changes or []) if edit else []:
        lines |= {e.range.start.line for e in change.edits}
    for edits in (edit.changes or {}).values() if edit else []:
        lines |= {e.range.start.line for e in edits}
    return lines


async def test_two_clients_with_different_text_each_get_answers_for_their_own(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    editor = await daemon.client(workspace)
    agent = await daemon.client(workspace)
    uri = editor.open("app.py", "python")
    agent.open("app.py", "python")
    await editor.diagnostics_where(uri, lambda ds: bool(ds))
    insert_top(agent, uri, SHIFT)  # the agent's buffer: every line one further down
    # Greeter is on line 3 for the editor and on line 4 for the agent, and so on.
    for _round in range(2):  # alternate: each request finds the other client's text there
        assert "class Greeter" in await hover(editor, uri, 3, 7)
        assert "class Greeter" in await hover(agent, uri, 4, 7)
        assert await definition_lines(editor, uri, 15, 15) == {3}
        assert await definition_lines(agent, uri, 16, 15) == {4}
        assert await rename_lines(editor, uri, 15, 5) == {15, 16}
        assert await rename_lines(agent, uri, 16, 5) == {16, 17}
    # ruff formats: the agent's extra line needs fixing, the editor's text does not.
    options = t.FormattingOptions(4, True)
    agent_edits = await agent.client.text_document_formatting_async(
        t.DocumentFormattingParams(t.TextDocumentIdentifier(uri), options)
    )
    editor_edits = await editor.client.text_document_formatting_async(
        t.DocumentFormattingParams(t.TextDocumentIdentifier(uri), options)
    )
    assert agent_edits and any("SHIFTED = 1" in e.new_text for e in agent_edits)
    assert not editor_edits
    assert len(daemon.backends("basedpyright")) == 1


async def test_two_clients_of_one_clangd_each_get_answers_for_their_own_text(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    editor = await daemon.client(workspace)
    agent = await daemon.client(workspace)
    uri = editor.open("hello.c", "c")
    agent.open("hello.c", "c")
    insert_top(agent, uri, "/* the agent's comment */\n")
    for _round in range(2):
        assert "add" in await hover(editor, uri, 5, 17)
        assert "add" in await hover(agent, uri, 6, 17)
        assert await definition_lines(editor, uri, 5, 17) == {2}
        assert await definition_lines(agent, uri, 6, 17) == {3}
    assert len(daemon.backends("clangd")) == 1


_: Any = daemon_fixture
