"""The local end of `lspmux client --remote`: the editor's LSP carried through the transport.

The relay reads the editor's messages on stdin and the far `lspmux client`'s on the
transport's stdout, maps paths both ways (`mapping.PathMap`), and keeps what a new link needs
to pick up the session: the editor's `initialize` parameters and the current text of every
open document (didChange applied incrementally, in the negotiated position encoding). The
links themselves — spawning, reading, dropping, reconnecting with backoff, the replay — are
`link.Links`, which the relay extends with the message side.

When the link drops, every request in flight is answered with an error (`RequestFailed`);
until a new link is up, requests are answered at once with an error (never left hanging) and
edits only update the kept text, which the new link gets in a `didOpen` of each document.
Server→client request ids are tagged with the link they came on, so an answer the editor gives
late never reaches the wrong server request.

Remote files outside every mapped root are copied (through the same transport, `cat`) into a
mirror directory under the user's cache and shown to the editor there (mirror.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

import orjson

from lspmux.config.checkers import ConfigError
from lspmux.errors import RequestFailed
from lspmux.remote.link import CHUNK, Link, Links
from lspmux.remote.mapping import MapError, PathMap, configured_pairs, under, uri_path
from lspmux.remote.mirror import Mirror, mirror_root
from lspmux.remote.target import Target
from lspmux.session.documents import Documents
from lspmux.text import Encoding
from lspmux.wire.framing import FrameError, FrameParser, encode, frame
from lspmux.wire.stdio import StdioBridge

log = logging.getLogger("lspmux.remote")

ENCODINGS: dict[str, Encoding] = {"utf-8": "utf-8", "utf-16": "utf-16", "utf-32": "utf-32"}


class Relay(Links):
    """The editor's session carried over the links: mapping, kept text, errors while down."""

    def __init__(
        self,
        target: Target,
        client_args: list[str],
        maps: list[tuple[str, str]],
        *,
        write: Any,
        environ: Any = os.environ,
        configured: Callable[[str], list[tuple[str, str]]] = configured_pairs,
    ) -> None:
        super().__init__(target, client_args)
        self.maps = maps
        self.write = write  # bytes -> None, the editor's end
        self.environ = environ
        self.configured = configured  # the editor's root -> the configuration's pairs
        self.pmap: PathMap | None = None
        self.docs = Documents()
        self.initialized = False
        self.pending: dict[Any, str] = {}  # editor request id -> method, on the current link
        self.mirror = Mirror(target)

    # -- the editor's side ---------------------------------------------------------------------

    def to_editor(self, msg: dict[str, Any]) -> None:
        self.write(encode(msg))

    def notify_editor(self, kind: int, text: str) -> None:
        self.to_editor(
            {
                "jsonrpc": "2.0",
                "method": "window/showMessage",
                "params": {"type": kind, "message": f"lspmux: {text}"},
            }
        )

    def from_editor(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method is not None:
            self._track(method, msg.get("params"))
        if method == "initialize" and self.pmap is None:
            self.pmap = self._build_map(msg.get("params") or {})
            log.info("path map: %r", self.pmap)
        if method == "exit":
            self.closing = True
        if "id" in msg and method is None:  # the editor answers a server request
            gen, _, raw = str(msg["id"]).partition(":")
            if self.link is None or gen != f"g{self.link.generation}":
                return  # asked on a link that is gone: nobody waits for it
            msg["id"] = orjson.loads(raw)
            self.link.send(self._remote(msg))
            return
        link = self.up_link()
        if link is None:
            self._while_down(msg)
            return
        if "id" in msg:
            self.pending[msg["id"]] = str(method)
        mapped = self._remote(msg)
        if method == "initialize":
            self.init_params = copy.deepcopy(mapped.get("params"))
        elif method == "initialized":
            self.initialized = True
        link.send(mapped)

    def _remote(self, msg: dict[str, Any]) -> dict[str, Any]:
        return self.pmap.to_remote(msg) if self.pmap is not None else msg

    def _build_map(self, params: dict[str, Any]) -> PathMap:
        """`--map` pairs, then the configuration's `remote_map`, then (the editor's root, the
        --remote path); when no pair holds the root and there is no --remote path, the project
        is at the same path on both sides (only files outside it are mirrored)."""
        root = uri_path(params.get("rootUri") or "") or params.get("rootPath")
        folders = params.get("workspaceFolders") or []
        if not root and folders:
            root = uri_path(folders[0].get("uri") or "")
        root = root or os.getcwd()
        pairs = list(self.maps)
        try:
            pairs += self.configured(root)
        except (ConfigError, MapError) as exc:
            log.warning("%s", exc)
            self.notify_editor(1, f"{exc}; the remote_map of the configuration is not used")
        if self.target.remote_root:
            pairs.append((root, self.target.remote_root))
        elif not any(under(root, local) for local, _ in pairs):
            pairs.append((root, root))
        return PathMap(pairs, fallback=mirror_root(self.target, self.environ))

    def _track(self, method: str, params: Any) -> None:
        """Keep the open documents' text (local URIs) for a replay."""
        if not isinstance(params, dict):
            return
        doc = params.get("textDocument") or {}
        uri = doc.get("uri")
        if not isinstance(uri, str):
            return
        if method == "textDocument/didOpen":
            self.docs.open(uri, doc.get("languageId", ""), doc.get("version", 0), doc["text"])
        elif method == "textDocument/didChange":
            current = self.docs.get(uri)
            if current is not None:
                changes = params.get("contentChanges") or []
                current.update(doc.get("version", current.version), changes, self.docs.encoding)
        elif method == "textDocument/didClose":
            self.docs.close(uri)

    def _while_down(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method == "exit":
            self.finish(0)
            return
        if "id" not in msg:
            return  # a notification: edits are kept in self.docs and replayed
        if method == "shutdown":
            self.to_editor({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            return
        self.to_editor(self._error(msg["id"], "the connection is down; reconnecting"))

    def _error(self, msg_id: Any, why: str) -> dict[str, Any]:
        failed = RequestFailed(f"lspmux: {why} to {self.target.label}; try again in a moment")
        return {"jsonrpc": "2.0", "id": msg_id, "error": failed.to_response_error()}

    # -- the far side --------------------------------------------------------------------------

    def from_remote(self, link: Link, msg: dict[str, Any], body: bytes | None = None) -> None:
        """A message of the far side (`body`: its bytes, forwarded as they are when nothing in
        them needs mapping, so a 2.5 MB answer is not encoded again)."""
        if link is not self.link or self.own_answer(msg):
            return
        msg_id = msg.get("id")
        method = msg.get("method")
        mirrored: set[str] = set()
        if self.pmap is not None and (body is None or self.pmap.may_name_paths(body)):
            msg, body = self.pmap.to_local(msg, mirrored), None
        if method is None:  # a response to the editor
            asked = self.pending.pop(msg_id, None)
            if asked == "initialize" and "result" in msg:
                self._negotiated(msg["result"])
        elif msg_id is not None:  # a server request: tag it with this link
            msg["id"] = f"g{link.generation}:{orjson.dumps(msg_id).decode()}"
            body = None
        if body is not None:
            self.write(frame(body))
        elif mirrored:
            self.spawn(self._deliver_after_copies(sorted(mirrored), msg))
        else:
            self.to_editor(msg)

    def _negotiated(self, result: Any) -> None:
        caps = (result or {}).get("capabilities") or {}
        encoding = caps.get("positionEncoding") or "utf-16"
        if encoding in ENCODINGS:
            self.docs.encoding = ENCODINGS[encoding]
        self.session_up = True

    async def _deliver_after_copies(self, paths: list[str], msg: dict[str, Any]) -> None:
        """`msg` once the far files it names outside every mapped root have local copies."""
        assert self.pmap is not None
        await self.mirror.ensure(self.pmap, paths)
        self.to_editor(msg)

    # -- what the links ask of the session -------------------------------------------------------

    def link_lost(self, code: int) -> None:
        for msg_id in list(self.pending):
            self.to_editor(self._error(msg_id, f"the connection dropped (code {code})"))
        self.pending.clear()

    def replay_messages(self) -> list[dict[str, Any]]:
        """`initialized` (when the editor sent it) and a didOpen of each document's text."""
        out: list[dict[str, Any]] = []
        if self.initialized:
            out.append({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        for doc in self.docs:
            opened = {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": doc.uri, "languageId": doc.language_id,
                                            "version": doc.version, "text": doc.text}},
            }  # fmt: skip
            out.append(self._remote(opened))
        return out


async def _read_editor(relay: Relay, reader: asyncio.StreamReader) -> None:
    parser = FrameParser()
    while True:
        data = await reader.read(CHUNK)
        if not data:
            break
        for body in parser.feed(data):
            if isinstance(body, FrameError):
                log.error("from the editor: %s", body)
                continue
            try:
                msg = orjson.loads(body)
            except orjson.JSONDecodeError:
                log.error("from the editor: not JSON: %.200r", body)
                continue
            if isinstance(msg, dict):
                try:
                    relay.from_editor(msg)
                except Exception:  # one odd message must not end the session
                    log.exception("from the editor: cannot relay %.200r", msg)
    relay.editor_closed()


async def run(target: Target, client_args: list[str], maps: list[tuple[str, str]]) -> int:
    loop = asyncio.get_running_loop()
    stdio = StdioBridge(sys.stdin.buffer, sys.stdout.buffer)  # a file or a tty works too
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdio.reader)
    out: Any
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, stdio.writer)
    relay = Relay(target, client_args, maps, write=out.write)
    await relay.open_link()
    relay.ready = True
    relay.spawn(_read_editor(relay, reader))
    await relay.done.wait()
    if relay.link is not None:  # the editor left without `exit`: give the far side a moment
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(relay.link.proc.wait(), 5)
        with contextlib.suppress(ProcessLookupError):
            relay.link.proc.terminate()
    for _ in range(100):  # what was written reaches the editor before the process ends
        if out.is_closing() or not out.get_write_buffer_size():
            break
        await asyncio.sleep(0.02)
    stdio.close()
    return relay.exit_code
