"""Document synchronisation: the client's didOpen/didChange/didSave/didClose, mirrored into the
session's documents and passed to the backends of each file.

The session's `Documents` are what the client has in its buffers; each backend of a file gets
the open, every change (incrementally when the server holds the client's previous text, in
full otherwise: see backends/documents.py), saves and the close. After each event the
diagnostics pulls and linter runs for the file are scheduled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from lspmux.diagnostics.pull import DEBOUNCE
from lspmux.session import positions
from lspmux.session.host import SessionHost

log = logging.getLogger("lspmux.session")


#: A didOpen whose text is at least this long is relayed to a server as the client's bytes
#: (when they say what lspmux would): encoding 10 MB of text again costs tens of milliseconds.
RELAY_OPEN = 64 * 1024


def did_open(session: SessionHost, params: dict[str, Any]) -> None:
    td = params["textDocument"]
    uri, lang, version, text = td["uri"], td.get("languageId", ""), td.get("version", 0), td["text"]
    session.documents.open(uri, lang, version, text)
    session.store.set_version(uri, version)
    session.forget_backends_of(uri)
    raw = None
    if len(text) >= RELAY_OPEN and set(td) == {"uri", "languageId", "version", "text"}:
        raw = session.body_of(params)
    for backend in session.backends_for(uri, lang):
        backend.open_document(session, uri, lang, version, text, raw)
        if backend.state not in ("running", "starting", "failed"):
            session.spawn(backend.ensure_running())
        session.puller.schedule(backend, uri)
    session.linting.opened(uri, lang)


def did_change(session: SessionHost, params: dict[str, Any]) -> None:
    td = params["textDocument"]
    uri, version = td["uri"], td.get("version")
    doc = session.documents.get(uri)
    if doc is None:
        log.warning("%s: didChange for %s, which is not open; ignored", session.client_id, uri)
        return
    changes = params.get("contentChanges") or []
    backends = session.backends_for(uri)
    # A server in another encoding gets the changes converted, against the text before them:
    # the document itself, read line by line, before it is updated in place.
    theirs = {
        id(b): positions.changes_to(session, b, uri, changes, doc)
        for b in backends
        if b.position_encoding != session.encoding
    }
    doc.update(version if version is not None else doc.version + 1, changes, session.encoding)
    session.store.set_version(uri, doc.version)
    for backend in backends:
        backend.change_document(session, uri, doc.version, theirs.get(id(backend), changes))
        session.puller.schedule(backend, uri, delay=DEBOUNCE)
    session.linting.changed(uri)


def did_save(session: SessionHost, params: dict[str, Any]) -> None:
    uri = params["textDocument"]["uri"]
    text = params.get("text")  # else read from the session when a server wants it
    for backend in session.backends_for(uri):
        backend.save_document(uri, text, session)
        session.puller.schedule(backend, uri)
    session.linting.saved(uri)


def did_close(session: SessionHost, params: dict[str, Any]) -> None:
    uri = params["textDocument"]["uri"]
    session.documents.close(uri)
    for backend in session.backends_for(uri):
        backend.close_document(session, uri)
    session.store.forget(uri)
    session.semantic.forget(uri)
    session.clear(uri)
    session.puller.forget(uri)
    session.linting.closed(uri)
    session.forget_backends_of(uri)


#: The handlers the table's `did_*` names stand for.
HANDLERS: dict[str, Callable[[SessionHost, dict[str, Any]], None]] = {
    "did_open": did_open,
    "did_change": did_change,
    "did_save": did_save,
    "did_close": did_close,
}
