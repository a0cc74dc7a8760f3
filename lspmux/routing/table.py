"""The one method table: every method lspmux knows, in all four directions, and who serves it.

Like ruff_server's `server/api.rs`, this is the dispatcher's table: it assembles the routes the
method families declare (`lspmux/session/families/*`, each with direct references to its
handler functions) into four dictionaries, one per direction, and checks at import that no
method is declared twice. It therefore ranks with the session layer (it imports the families);
what lower layers need of a route they get from the `Route` object (`routing/route.py`).

- `CLIENT_REQUESTS`: what the client asks. Routed to backends (`first`, `merge`, `origin`) or
  answered by lspmux itself (`local`, `diagnostics`).
- `CLIENT_NOTIFICATIONS`: what the client tells. Handled by lspmux (`local`), and/or sent to
  every backend concerned (`broadcast`).
- `SERVER_REQUESTS`: what a backend asks. Answered by lspmux from the server's own
  configuration, with the instance's first client's answer under it (`answer`), recorded and
  passed on (`register`), given a token of lspmux's (`progress`), passed on only to a client
  that declared support (`refresh`), or relayed to a client with the ids remapped (`relay`).
- `SERVER_NOTIFICATIONS`: what a backend tells. Merged into the diagnostics store (`store`),
  renamed (`progress`, `cancel`), or relayed to the clients concerned (`relay`).

`ServerDispatch` is what the pool is given (injected by the session, `backends/pool.py` does
not import this table) to route a server's messages: each route's `instance` step once per
server instance, then its `handler` in each session that hears of it.

A method no table knows keeps the behaviour lspmux always had: a client request goes to the
first backend of its file that answers it, a client notification to every backend of its file,
a server request to one client and a server notification to every client of the server.
`docs/routing.md` is generated from these tables and checked against them.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from lspmux.routing.capabilities import capability_of
from lspmux.routing.features import FEATURES as route_features
from lspmux.routing.route import Direction, Policy, Route, client_declares
from lspmux.session import positions
from lspmux.session.families import (
    code_actions,
    diagnostics,
    forwarded,
    lifecycle,
    locate,
    progress,
    registrations,
    relays,
    semantic_tokens,
    server_answers,
    status,
    sync,
)
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.backends.pool import Pool, Reply

__all__ = ["Direction", "Policy", "Route", "client_declares"]

FAMILIES = (
    lifecycle,
    sync,
    diagnostics,
    code_actions,
    semantic_tokens,
    locate,
    registrations,
    server_answers,
    progress,
    status,
    relays,
    forwarded,
)


def _assemble(name: str, *, client: bool = False) -> dict[str, Route]:
    """One direction's table from every family that declares routes for it; a method declared
    twice is an error at import (one method, one place). A client method's route gets its
    capability key from `routing/capabilities.py`, where the backends read it too."""
    out: dict[str, Route] = {}
    for family in FAMILIES:
        routes: dict[str, Route] = getattr(family, name, {})
        for method, r in routes.items():
            if method in out:
                raise RuntimeError(f"{method} is declared twice ({name}, {family.__name__})")
            if r.capability is not None:
                raise RuntimeError(
                    f"{method} ({family.__name__}) declares its capability: "
                    "routing/capabilities.py is where capability keys are declared"
                )
            if client:
                r = dataclasses.replace(r, capability=capability_of(method))
            out[method] = r
    return out


#: Client → server requests.
CLIENT_REQUESTS: dict[str, Route] = _assemble("REQUESTS", client=True)
#: Client → server notifications.
CLIENT_NOTIFICATIONS: dict[str, Route] = _assemble("NOTIFICATIONS", client=True)
#: Server → client requests.
SERVER_REQUESTS: dict[str, Route] = _assemble("SERVER_REQUESTS")
#: Server → client notifications.
SERVER_NOTIFICATIONS: dict[str, Route] = _assemble("SERVER_NOTIFICATIONS")

TABLES: dict[Direction, dict[str, Route]] = {
    Direction.CLIENT_REQUEST: CLIENT_REQUESTS,
    Direction.CLIENT_NOTIFICATION: CLIENT_NOTIFICATIONS,
    Direction.SERVER_REQUEST: SERVER_REQUESTS,
    Direction.SERVER_NOTIFICATION: SERVER_NOTIFICATIONS,
}


def _shapes() -> dict[str, tuple[Any, Any]]:
    """Where each method's params and result hold positions, whatever its direction (a
    method routed in two directions, such as `$/progress`, must say the same in both)."""
    out: dict[str, tuple[Any, Any]] = {}
    for table in TABLES.values():
        for method, r in table.items():
            shapes = (r.params_shape, r.result_shape)
            if out.setdefault(method, shapes) != shapes:
                raise RuntimeError(f"{method}: its routes disagree on where its positions are")
    return out


# Method → (params shape, result shape) (`encodings/shapes.py`), handed to
# `session/positions.py`, which converts positions by them and keeps the one copy.
positions.SHAPES.update(_shapes())

#: Client → server methods that backends serve (requests and notifications), by method:
#: what `only_features` / `except_features` and the capability checks apply to.
ROUTES: dict[str, Route] = {
    m: r
    for table in (CLIENT_REQUESTS, CLIENT_NOTIFICATIONS)
    for m, r in table.items()
    if r.policy is not Policy.LOCAL and r.feature not in ("lifecycle", "locate")
}

#: Every feature name a user may write in `only_features` / `except_features`: the routes'
#: (`routing/features.FEATURES` spells them for the config checks, below this table).
#: "sync" (document synchronisation) is not switchable: a backend always sees its documents.
FEATURES: frozenset[str] = frozenset(r.feature for r in ROUTES.values()) - {"sync"}
if route_features != FEATURES:
    raise RuntimeError(
        "routing/features.py FEATURES differs from the routes' features: "
        f"add {sorted(FEATURES - route_features)}, remove {sorted(route_features - FEATURES)}"
    )


class ServerDispatch:
    """What the pool does with a server's messages (`Pool.dispatch`): the route's `instance`
    step once per server instance (by default: a request to the one session concerned, a
    notification to every session of the server), which hands it to the sessions that hear of
    it (`Session.backend_request` / `backend_notification` → the route's `handler`)."""

    def request(self, pool: Pool, backend: Backend, msg: Message, reply: Reply) -> None:
        r = SERVER_REQUESTS.get(msg["method"])
        (r.instance if r is not None and r.instance is not None else relays.to_one)(
            pool, backend, msg, reply
        )

    def notification(self, pool: Pool, backend: Backend, msg: Message) -> None:
        r = SERVER_NOTIFICATIONS.get(msg["method"])
        if r is not None and r.instance is not None:
            r.instance(pool, backend, msg)
        else:
            pool.tell(pool.sessions_of(backend), backend, msg)


SERVER_DISPATCH = ServerDispatch()


def describe(value: Any) -> str:
    """A handler's name for docs/routing.md: `module.function`."""
    module = getattr(value, "__module__", "") or ""
    return f"{module.rsplit('.', 1)[-1]}.{getattr(value, '__qualname__', repr(value))}"
