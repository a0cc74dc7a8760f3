"""What one backend's server holds of each document, and the only code that tells it.

A server holds one text per document. Several holders (the sessions of the daemon's clients,
Locate's borrowed files) may have the same document open, each with its own text and versions;
the server's copy is always the text of one of them. So no text is kept here: a
`BackendDocument` records, per holder, its latest version, and which holders' text the server
holds right now (`current`: holder → version). "Does the server hold holder H's current text"
is then a dictionary lookup (`holds`), never a comparison of texts; when the text itself is
needed (a full-text change, a re-sync, the replay after a crash) it is read from the holder
(`DocumentHolder.document_text`).

Reference counting: the server sees `didOpen` when the first holder opens a document and
`didClose` when the last one closes it. A holder's change goes to the server incrementally when
the server holds that holder's previous text, as the holder's whole text otherwise (another
holder changed it meanwhile); servers that only take full text always get the whole text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeGuard

log = logging.getLogger("lspmux.backend")

Send = Callable[[str, Any], None]


class DocumentHolder(Protocol):
    """Whoever has a document open on a backend (a session, Locate)."""

    def document_text(self, uri: str) -> tuple[str, int | None] | None:
        """The holder's current (text, version) of `uri`; None when it has no such document."""
        ...


class DocumentServer(Protocol):
    """What `BackendDocuments` needs of its backend."""

    capabilities: dict[str, Any]

    @property
    def label(self) -> str: ...

    @property
    def connected(self) -> bool:
        """Whether notifications reach a running server now (else they are dropped, and the
        documents are replayed when it starts)."""
        ...

    def notify(self, method: str, params: Any) -> None: ...

    def notify_raw(self, body: bytes | bytearray) -> None: ...


class HeldText:
    """A holder whose text never changes: a file opened on a backend for one question."""

    __slots__ = ("text", "version")

    def __init__(self, text: str, version: int | None = 0) -> None:
        self.text = text
        self.version = version

    def document_text(self, uri: str) -> tuple[str, int | None] | None:
        return self.text, self.version


class BackendDocument:
    __slots__ = ("current", "holders", "language_id", "version")

    def __init__(self, language_id: str) -> None:
        self.language_id = language_id
        self.version = 0  # the version the server sees; always increasing
        #: holder → that holder's own latest version
        self.holders: dict[object, int | None] = {}
        #: holder → the version of that holder's text the server holds now
        self.current: dict[object, int | None] = {}


class BackendDocuments:
    """The documents one backend's server has open (by URI)."""

    def __init__(self, server: DocumentServer) -> None:
        self.server = server
        self._docs: dict[str, BackendDocument] = {}

    # -- questions --------------------------------------------------------------------------------

    def get(self, uri: str) -> BackendDocument | None:
        return self._docs.get(uri)

    def __contains__(self, uri: object) -> bool:
        return uri in self._docs

    def __len__(self) -> int:
        return len(self._docs)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._docs))

    def holds(self, holder: object, uri: str) -> bool:
        """Whether the server holds `holder`'s current text of `uri`. O(1)."""
        doc = self._docs.get(uri)
        if doc is None or holder not in doc.current:
            return False
        return doc.current[holder] == doc.holders.get(holder)

    def holder_version(self, uri: str, holder: object, server_version: int | None) -> int | None:
        """The holder's version matching a version this server reported, or None when stale."""
        doc = self._docs.get(uri)
        if doc is None:
            return None
        if server_version is not None and server_version < doc.version:
            return None
        return doc.holders.get(holder)

    # -- what holders do --------------------------------------------------------------------------

    def open(
        self,
        holder: DocumentHolder,
        uri: str,
        language_id: str,
        version: int | None,
        text: str,
        raw: bytes | bytearray | None = None,
    ) -> None:
        """`holder` opened `uri`. `raw`: its didOpen message as it came (`textDocument` with
        exactly `uri`, `languageId`, `version` and `text`), which the server is sent as it is
        when it is the first to open the document: the server's numbering of versions then
        starts at the holder's."""
        doc = self._docs.get(uri)
        if doc is None:
            doc = self._docs[uri] = BackendDocument(language_id)
            doc.holders[holder] = doc.current[holder] = version
            doc.version = 1
            if raw is not None and _plain_version(version) and self.server.connected:
                doc.version = version
                self.server.notify_raw(raw)
                return
            self._send_open(self.server.notify, uri, doc, text)
            return
        doc.holders[holder] = version
        doc.current.pop(holder, None)  # a reopen: its old text is gone
        for other in doc.current:  # the same text as the server's: nothing to send
            got = _text_of(other, uri)
            if got is not None and got[0] == text:
                doc.current[holder] = version
                return
            break
        self._send_full(uri, doc, holder, text)

    def change(
        self,
        holder: DocumentHolder,
        uri: str,
        version: int | None,
        changes: list[dict[str, Any]],
    ) -> None:
        """`holder` changed its text (to `version`, by `changes`)."""
        doc = self._docs.get(uri)
        if doc is None:
            return
        incremental = self.holds(holder, uri)  # the server has this holder's previous text
        doc.holders[holder] = version
        if not incremental or self._sync_kind() != 2:
            self._send_full(uri, doc, holder)
            return
        doc.version += 1
        doc.current = {holder: version}
        self.server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": doc.version}, "contentChanges": changes},
        )

    def ensure_holds(self, holder: DocumentHolder, uri: str) -> bool:
        """Give the server `holder`'s current text of `uri` unless it holds it already; True
        when the text had to be sent (a shared document another holder changed last)."""
        doc = self._docs.get(uri)
        if doc is None or holder not in doc.holders or self.holds(holder, uri):
            return False
        return self._send_full(uri, doc, holder)

    def save(self, uri: str, text: str | None, holder: DocumentHolder | None = None) -> None:
        """didSave, with the text when the server asks for it (`text`, else the holder's)."""
        if uri not in self._docs:
            return
        params: dict[str, Any] = {"textDocument": {"uri": uri}}
        sync = self.server.capabilities.get("textDocumentSync")
        save = sync.get("save") if isinstance(sync, dict) else None
        if isinstance(save, dict) and save.get("includeText"):
            got = (text, None) if text is not None or holder is None else _text_of(holder, uri)
            if got is not None and got[0] is not None:
                params["text"] = got[0]
        if save or sync is None or isinstance(sync, int):
            self.server.notify("textDocument/didSave", params)

    def close(self, holder: object, uri: str) -> bool:
        """Drop `holder`'s reference; the server sees didClose when the last one goes.
        True when the document is closed on the server."""
        doc = self._docs.get(uri)
        if doc is None:
            return False
        doc.holders.pop(holder, None)
        doc.current.pop(holder, None)
        if doc.holders:
            return False
        del self._docs[uri]
        self.server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return True

    # -- after a (re)start ------------------------------------------------------------------------

    def replay(self, send: Send) -> int:
        """didOpen every document again (a new server process), each with the text of a holder
        it is current for (else of any holder); how many were sent."""
        sent = 0
        for uri, doc in self._docs.items():
            for holder in [*doc.current, *doc.holders]:
                got = _text_of(holder, uri)
                if got is not None:
                    break
            else:
                log.warning("%s: no holder can give the text of %s", self.server.label, uri)
                continue
            if holder not in doc.current:
                doc.current = {holder: doc.holders.get(holder)}
            doc.version += 1
            self._send_open(send, uri, doc, got[0])
            sent += 1
        return sent

    # -- sending ----------------------------------------------------------------------------------

    def _sync_kind(self) -> Any:
        sync = self.server.capabilities.get("textDocumentSync")
        return sync.get("change", 1) if isinstance(sync, dict) else sync

    @staticmethod
    def _send_open(send: Send, uri: str, doc: BackendDocument, text: str) -> None:
        send(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": doc.language_id,
                    "version": doc.version,
                    "text": text,
                }
            },
        )

    def _send_full(
        self, uri: str, doc: BackendDocument, holder: object, text: str | None = None
    ) -> bool:
        """Send `holder`'s whole text (read from it unless given); False when it has none.
        A server not running gets nothing now: the replay gives it this holder's text."""
        if not self.server.connected:
            doc.version += 1
            doc.current = {holder: doc.holders.get(holder)}
            return True
        if text is None:
            got = _text_of(holder, uri)
            if got is None:
                log.warning("%s: %s has no text for %s", self.server.label, holder, uri)
                return False
            text = got[0]
        doc.version += 1
        doc.current = {holder: doc.holders.get(holder)}
        self.server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": doc.version},
                "contentChanges": [{"text": text}],
            },
        )
        return True


def _plain_version(version: object) -> TypeGuard[int]:
    return type(version) is int and version >= 0


def _text_of(holder: object, uri: str) -> tuple[str, int | None] | None:
    document_text = getattr(holder, "document_text", None)
    return document_text(uri) if document_text is not None else None
