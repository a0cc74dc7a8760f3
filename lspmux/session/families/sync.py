"""Document synchronisation: the client's didOpen/didChange/didSave/didClose, mirrored into the
session's documents and passed to the backends of each file; and the workspace's notifications
(configuration, watched files, workspace folders, file operations), passed to the backends
concerned.

The session's `Documents` are what the client has in its buffers; each backend of a file gets
the open, every change (incrementally when the server holds the client's previous text, in
full otherwise: see backends/documents.py), saves and the close. After each event the
diagnostics pulls and linter runs for the file are scheduled.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import lspmux.encodings.shapes as s
from lspmux.errors import InvalidParams
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route
from lspmux.session import positions
from lspmux.session.families.diagnostics import DEBOUNCE
from lspmux.session.state import SessionState
from lspmux.uris import file_path

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

log = logging.getLogger("lspmux.session")


#: A didOpen whose text is at least this long is relayed to a server as the client's bytes
#: (when they say what lspmux would): encoding 10 MB of text again costs tens of milliseconds.
RELAY_OPEN = 64 * 1024


def did_open(session: SessionState, params: dict[str, Any]) -> None:
    td = params["textDocument"]
    if not isinstance(td.get("text"), str):
        raise InvalidParams("textDocument.text must be a string")
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


def did_change(session: SessionState, params: dict[str, Any]) -> None:
    td = params["textDocument"]
    if not isinstance(params.get("contentChanges"), list):
        raise InvalidParams("contentChanges must be a list")
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


def did_save(session: SessionState, params: dict[str, Any]) -> None:
    uri = params["textDocument"]["uri"]
    text = params.get("text")  # else read from the session when a server wants it
    for backend in session.backends_for(uri):
        backend.save_document(uri, text, session)
        session.puller.schedule(backend, uri)
    session.linting.saved(uri)


def did_close(session: SessionState, params: dict[str, Any]) -> None:
    uri = params["textDocument"]["uri"]
    session.documents.close(uri)
    for backend in session.backends_for(uri):
        backend.close_document(session, uri)
    session.store.forget(uri)
    session.semantic.forget(uri)
    session.publishing.clear(uri)
    session.puller.forget(uri)
    session.linting.closed(uri)
    session.forget_backends_of(uri)


def did_change_configuration(session: SessionState, params: dict[str, Any]) -> None:
    """The client's `workspace/didChangeConfiguration` reaches the servers whose settings
    follow this client (it is their first client); a shared server that follows another
    client keeps that client's settings (as it keeps its initializationOptions)."""
    for backend in session.backends:
        if session.pool.first_client(backend) is session:
            backend.client_settings_changed(params)
        else:
            log.debug(
                "%s: didChangeConfiguration not passed to %s: it follows another client",
                session.client_id,
                backend.label,
            )


def did_change_watched_files(session: SessionState, params: dict[str, Any]) -> None:
    """The client's file events, to each backend whose watchers asked for them."""
    for backend, own in session.files.from_client(params).items():
        backend.notify(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, own)


def send_file_events(backend: Backend, params: dict[str, Any]) -> None:
    """File events lspmux watched itself for a server (see `workspace/files.py`)."""
    backend.notify(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, params)


def _folder_uris(folders: Any) -> list[str]:
    if not isinstance(folders, list):
        return []
    return [f["uri"] for f in folders if isinstance(f, dict) and isinstance(f.get("uri"), str)]


def did_change_workspace_folders(session: SessionState, params: dict[str, Any]) -> None:
    """The client's workspace folders kept current (they bound the roots of the files opened
    next, and the file watcher's reach), and the change passed on to every backend."""
    event = params.get("event")
    event = event if isinstance(event, dict) else {}
    removed = set(_folder_uris(event.get("removed")))
    added = _folder_uris(event.get("added"))
    kept = [r for r in session.roots if r.as_uri() not in removed]
    folders = [Path(p) for p in map(file_path, added) if p is not None]
    session.roots = kept + [p for p in folders if p not in kept]
    for uri in added:
        session.files.add_root(uri)
    for backend in list(session.backends):
        backend.notify(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, params)


B = Policy.BROADCAST

NOTIFICATIONS: dict[str, Route] = {
    lsp.TEXT_DOCUMENT_DID_OPEN: route(B, "sync", handler=did_open, document=True),
    lsp.TEXT_DOCUMENT_DID_CHANGE: route(
        B, "sync", handler=did_change, document=True, params_shape=s.DID_CHANGE
    ),
    lsp.TEXT_DOCUMENT_DID_SAVE: route(B, "sync", handler=did_save, document=True),
    lsp.TEXT_DOCUMENT_DID_CLOSE: route(B, "sync", handler=did_close, document=True),
    lsp.TEXT_DOCUMENT_WILL_SAVE: route(B, "sync"),
    lsp.WORKSPACE_DID_CHANGE_CONFIGURATION: route(B, "sync", handler=did_change_configuration),
    lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES: route(B, "sync", handler=did_change_watched_files),
    lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: route(
        B, "sync", handler=did_change_workspace_folders
    ),
    lsp.WORKSPACE_DID_CREATE_FILES: route(B, "sync"),
    lsp.WORKSPACE_DID_RENAME_FILES: route(B, "sync"),
    lsp.WORKSPACE_DID_DELETE_FILES: route(B, "sync"),
    lsp.SET_TRACE: route(B, "sync"),
}
