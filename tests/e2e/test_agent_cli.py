"""`lspmux <verb>` end to end: private, and through a daemon shared with an editor whose unsaved
buffer must never be overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types as t

from tests.e2e.agent_harness import MARKUPSAFE, copy_project, mcp_client, run_verb
from tests.e2e.conftest import proxy_env
from tests.e2e.daemon_harness import DaemonUnderTest, daemon_fixture  # noqa: F401

pytestmark = pytest.mark.e2e


def test_verbs_private(tmp_path: Path) -> None:
    root = copy_project(MARKUPSAFE, tmp_path)
    env = proxy_env(tmp_path)
    out = run_verb(
        root, env, "definition", "tests/test_escape.py:34", "--symbol", "Markup", "--private"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Found 1 definition",
        "src/markupsafe/__init__.py:84:7  class Markup(str):",
    ]
    out = run_verb(root, env, "references", "src/markupsafe/__init__.py:24:5", "--json",
                   "--no-include-declaration", "--limit", "3", "--private")  # fmt: skip
    data = json.loads(out.stdout)
    assert len(data["references"]) == 3 and data["count"] > 3
    assert "src/markupsafe/__init__.py:24:5" not in [r["label"] for r in data["references"]]
    out = run_verb(root, env, "hover", "../outside.py:1:1", "--private")
    assert out.returncode == 1 and "outside the workspace root" in out.stderr


async def test_verbs_share_the_daemon_and_respect_unsaved_buffers(
    daemon: DaemonUnderTest, tmp_path: Path
) -> None:
    root = copy_project(MARKUPSAFE, tmp_path)
    await daemon.start()
    # an editor, connected through the daemon, holds __init__.py with unsaved changes
    editor = await daemon.client(root)
    init = root / "src/markupsafe/__init__.py"
    disk = init.read_text()
    uri = init.as_uri()
    editor.client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            t.TextDocumentItem(uri=uri, language_id="python", version=1, text=disk)
        )
    )
    editor.client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            t.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [t.TextDocumentContentChangeWholeDocument(text=disk + "\n# typing...\n")],
        )
    )
    out = run_verb(root, daemon.env, "rename", "src/markupsafe/__init__.py:64", "--symbol",
                   "soft_str", "to_text", "--apply")  # fmt: skip
    assert out.returncode == 1, out.stdout
    assert "src/markupsafe/__init__.py is open with unsaved changes" in out.stderr
    assert init.read_text() == disk
    assert "soft_str" in (root / "tests/test_markupsafe.py").read_text()  # nothing written

    # the verb ran through the daemon: one shared basedpyright for the editor and the CLI
    out = run_verb(root, daemon.env, "definition", "tests/test_escape.py:34", "--symbol", "Markup")
    assert out.returncode == 0, out.stderr
    assert "src/markupsafe/__init__.py:84:7" in out.stdout
    assert len(daemon.backends("basedpyright")) == 1
    # the daemon ran it (lspmux/tool) in its agent session for the root, which stays open
    clients = daemon.status()["clients"]
    assert len(clients) == 2 and any(c["open_documents"] >= 1 for c in clients if c["roots"])

    # the MCP face through the same daemon: shared backends, the daemon's status
    async with mcp_client(root, daemon.env) as mcp:
        text, data = await mcp.call("rename", at="src/markupsafe/__init__.py:64", symbol="soft_str",
                                    new_name="to_text")  # fmt: skip
        assert data["unsaved"] == ["src/markupsafe/__init__.py"] and "Warning" in text
        text, data = await mcp.call("status")
        assert data["daemon"] is True and "through the lspmux daemon" in text
        assert [b["server"] for b in data["backends"]].count("basedpyright") == 1
        message = await mcp.error("rename", at="src/markupsafe/__init__.py:64", symbol="soft_str",
                                  new_name="to_text", apply=True)  # fmt: skip
        assert "unsaved changes" in message and "src/markupsafe/__init__.py" in message
        text, data = await mcp.call("reload")
        assert "restarted basedpyright for" in text and all(r["running"] for r in data["restarted"])
        text, _ = await mcp.call("hover", at="tests/test_escape.py:34", symbol="Markup")
        assert "class Markup" in text
    assert len(daemon.backends("basedpyright")) == 1

    # once the editor saved (buffer == disk), the rename is written
    editor.client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            t.VersionedTextDocumentIdentifier(version=3, uri=uri),
            [t.TextDocumentContentChangeWholeDocument(text=disk)],
        )
    )
    out = run_verb(root, daemon.env, "rename", "src/markupsafe/__init__.py:64", "--symbol",
                   "soft_str", "to_text", "--apply")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "def to_text(" in init.read_text()
