"""The relay's state while no link carries the editor's messages: kept text, immediate errors,
the path map it derives; the links themselves are tested end to end (tests/e2e/test_remote*)."""

from __future__ import annotations

from typing import Any

import orjson

from lspmux.errors import RequestFailed
from lspmux.remote.relay import Relay
from lspmux.remote.target import parse_exec, parse_ssh_url
from lspmux.wire.framing import FrameParser


class Editor:
    """What the relay wrote to the editor, parsed."""

    def __init__(self) -> None:
        self.parser = FrameParser()
        self.got: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        for body in self.parser.feed(data):
            assert isinstance(body, (bytes, bytearray))
            self.got.append(orjson.loads(body))


def relay(
    url: str = "ssh://box/srv/p", maps: list[tuple[str, str]] | None = None
) -> tuple[Relay, Editor]:
    editor = Editor()
    target = parse_ssh_url(url, environ={}) if url.startswith("ssh:") else parse_exec(url)
    r = Relay(target, [], maps or [], write=editor.write, environ={"XDG_CACHE_HOME": "/c"},
              configured=lambda root: [])  # fmt: skip
    return r, editor


def test_the_map_comes_from_the_editors_root_and_the_remote_path() -> None:
    r, _ = relay()
    pm = r._build_map({"rootUri": "file:///home/me/p", "rootPath": "/ignored"})
    assert pm.pairs == [("/home/me/p", "/srv/p")]
    assert pm.fallback == "/c/lspmux/remote/box"
    pm = r._build_map({"workspaceFolders": [{"uri": "file:///w/x", "name": "x"}]})
    assert pm.pairs == [("/w/x", "/srv/p")]


def test_without_a_remote_path_or_map_the_paths_are_the_same() -> None:
    r, _ = relay("docker exec -i c")
    assert r._build_map({"rootUri": "file:///w"}).pairs == [("/w", "/w")]
    r, _ = relay("docker exec -i c", maps=[("/l", "/r")])
    assert r._build_map({"rootUri": "file:///l/sub"}).pairs == [("/l", "/r")]
    # a --map elsewhere (or a user-wide remote_map for other projects) leaves this root as it is
    assert r._build_map({"rootUri": "file:///w"}).pairs == [("/l", "/r"), ("/w", "/w")]


def test_while_down_requests_fail_at_once_and_edits_are_kept() -> None:
    r, editor = relay()
    uri = "file:///home/me/p/a.py"
    r.from_editor({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": {"uri": uri, "languageId": "python",
                                               "version": 1, "text": "ab\ncd\n"}}})  # fmt: skip
    change = {"range": {"start": {"line": 1, "character": 1}, "end": {"line": 1, "character": 2}},
              "text": "X😀"}  # fmt: skip
    r.from_editor({"jsonrpc": "2.0", "method": "textDocument/didChange",
                   "params": {"textDocument": {"uri": uri, "version": 2},
                              "contentChanges": [change]}})  # fmt: skip
    doc = r.docs.get(uri)
    assert doc is not None and doc.text == "ab\ncX😀\n" and doc.version == 2
    r.from_editor({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {}})
    assert editor.got[-1]["id"] == 7
    assert editor.got[-1]["error"]["code"] == RequestFailed.CODE
    assert "reconnecting" in editor.got[-1]["error"]["message"]
    r.from_editor({"jsonrpc": "2.0", "id": 8, "method": "shutdown"})
    assert editor.got[-1] == {"jsonrpc": "2.0", "id": 8, "result": None}
    # an answer to a server request of a link that is gone goes nowhere
    r.from_editor({"jsonrpc": "2.0", "id": "g1:3", "result": None})
    assert len(editor.got) == 2
    r.from_editor({"jsonrpc": "2.0", "method": "textDocument/didClose",
                   "params": {"textDocument": {"uri": uri}}})  # fmt: skip
    assert r.docs.get(uri) is None
    r.from_editor({"jsonrpc": "2.0", "method": "exit"})
    assert r.done.is_set() and r.exit_code == 0
