"""Registrations: the one place for `client/registerCapability` and
`client/unregisterCapability`.

Once per server instance (`record`): the backend's record of what it registered, the
capability cache, and the server's one answer; then every session of the server hears of it
(`registered`): its pulls are scheduled again (a pull provider may have been registered), what
the client was told is kept equal to what the backends serve (`session.registrations`,
`announce.ClientRegistrations`), and file watchers are relayed to a client that watches files
(ids remapped) or watched by lspmux itself. A backend that starts, stops or is attached to one
more session brings its client up to date (`backend_event`, `attached`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lspmux.backends import capabilities as caps
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route
from lspmux.session.relay import ServerRelay
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.backends.pool import Pool, Reply

REGISTER = lsp.CLIENT_REGISTER_CAPABILITY
UNREGISTER = lsp.CLIENT_UNREGISTER_CAPABILITY
_WATCHED = lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES


def tell_client(session: SessionState, added: list[Any], gone: list[Any]) -> None:
    """What lspmux itself registers with its client (`announce.ClientRegistrations` keeps it
    equal to what the backends serve): `added` registrations, `gone` unregistrations."""
    conn = session.conn
    if conn is None or conn.closed or session.state != "running":
        return
    if added:
        conn.request(REGISTER, {"registrations": added}, lambda _r: None, timeout=30)
    if gone:
        conn.request(UNREGISTER, {"unregisterations": gone}, lambda _r: None, timeout=30)


def record(pool: Pool, backend: Backend, msg: Message, reply: Reply) -> None:
    """Recorded at the backend and cached, answered once, then told to every session."""
    params = msg.get("params")
    if isinstance(params, dict):
        if msg["method"] == REGISTER:
            backend.register(
                (reg["id"], reg["method"], reg.get("registerOptions"))
                for reg in params.get("registrations") or []
                if isinstance(reg, dict) and "id" in reg and "method" in reg
            )
        else:  # the spec's own misspelling, and the fixed one
            gone = params.get("unregisterations", params.get("unregistrations")) or []
            backend.unregister(str(u.get("id")) for u in gone if isinstance(u, dict))
        caps.store_cached(backend.name, backend.capabilities, backend.registrations.values())
    reply(None)
    pool.tell_every_session(backend, msg)


def registered(
    relay: ServerRelay, route: Route, backend: Backend, msg: Message, reply: Reply
) -> None:
    session = relay.session
    session.puller.schedule_all(backend)
    session.registrations.sync(backend)
    _watched_files(relay, backend, msg)


def attached(relay: ServerRelay, backend: Backend) -> None:
    """This session starts using `backend`, which may have registered things before (it
    was started for `initialize`, or another client of the daemon started it): this
    client hears of them now."""
    if backend.state != "running":
        return  # a later start's registrations arrive as usual
    relay.session.registrations.sync(backend)
    watchers = [
        {"id": reg_id, "method": method, "registerOptions": options}
        for reg_id, (method, options) in backend.registrations.items()
        if method == _WATCHED
    ]
    if watchers:
        _watched_files(relay, backend, {"method": REGISTER, "params": {"registrations": watchers}})


def backend_event(relay: ServerRelay, backend: Backend, event: str) -> None:
    """A started server's registrations reach the client; a stopped one's watchers go."""
    session = relay.session
    if event == "started":
        session.puller.schedule_all(backend)
        session.registrations.sync(backend)
    elif event in ("stopped", "failed") and (gone := session.files.forget(backend)):
        relay.to_client(UNREGISTER, {"unregisterations": gone}, _ignore, timeout=30)


def _watched_files(relay: ServerRelay, backend: Backend, msg: Message) -> None:
    """File watchers a server registers: relayed to a client that watches files (ids
    remapped), else watched by lspmux itself."""
    params = msg.get("params")
    if not isinstance(params, dict):
        return
    files = relay.session.files
    if msg["method"] == REGISTER:
        out = [
            files.register(backend, reg)
            for reg in params.get("registrations") or []
            if isinstance(reg, dict) and reg.get("method") == _WATCHED
        ]
        if relayed := [r for r in out if r is not None]:
            relay.to_client(REGISTER, {"registrations": relayed}, _ignore, timeout=30)
        return
    gone = params.get("unregisterations", params.get("unregistrations")) or []
    out = [
        files.unregister(backend, unreg)
        for unreg in gone
        if isinstance(unreg, dict) and unreg.get("method") == _WATCHED
    ]
    if relayed := [r for r in out if r is not None]:
        relay.to_client(UNREGISTER, {"unregisterations": relayed}, _ignore, timeout=30)


def _ignore(_resp: Any) -> None:
    pass


SERVER_REQUESTS: dict[str, Route] = {
    REGISTER: route(Policy.REGISTER, "sync", handler=registered, instance=record),
    UNREGISTER: route(Policy.REGISTER, "sync", handler=registered, instance=record),
}
