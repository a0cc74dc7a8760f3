"""What a route is: the policy, the feature, the capability and the handler of one method.

Pure data, below `backends/`: a backend asks a `Route` whether it is eligible (`capability`,
`needs_option`), and never the assembled table (`routing/table.py`, which ranks with the
session layer because the families' handlers are session code).

A route holds its handler as a function, not a name. The handler's signature depends on the
direction and the policy (see `lspmux/session/families/__init__.py`):

- client request, `local`/`diagnostics`: `handler(session, ex)` → the answer, or an awaitable
  of it; `first`/`merge`/`origin` with a handler: `handler(ex, route, backends)` forwards it
  itself (semantic tokens, code actions, executeCommand);
- client notification: `handler(session, params)`;
- server request: `handler(relay, route, backend, msg, reply)` in each session that hears of it, and
  `instance(pool, backend, msg, reply)` once per server instance (who answers, who hears);
- server notification: `handler(relay, backend, msg)`, and `instance(pool, backend, msg)`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lspmux.routing import merge


class Direction(enum.Enum):
    CLIENT_REQUEST = "client → server requests"
    CLIENT_NOTIFICATION = "client → server notifications"
    SERVER_REQUEST = "server → client requests"
    SERVER_NOTIFICATION = "server → client notifications"


class Policy(enum.Enum):
    """How a method is handled; the values are the words `docs/routing.md` uses."""

    # client → server
    FIRST = "first"  # the first eligible backend's answer
    MERGE = "merge"  # every eligible backend; results concatenated, de-duplicated, tagged
    ORIGIN = "origin"  # back to the backend that produced the item or command
    BROADCAST = "broadcast"  # notification to every backend concerned
    DIAGNOSTICS = "diagnostics"  # answered from the merged diagnostics store
    LOCAL = "local"  # answered or handled by lspmux itself
    # server → client
    ANSWER = "answer"  # answered by lspmux from the server's configuration
    REGISTER = "register"  # recorded per backend, then passed on as each client can take it
    PROGRESS = "progress"  # progress tokens renamed per client
    REFRESH = "refresh"  # relayed to clients that declared support, else answered null
    RELAY = "relay"  # to the client concerned, ids remapped; its answer goes back
    STORE = "store"  # into the diagnostics store; the client sees the merged union
    CANCEL = "cancel"  # a server cancelling its own request: rewritten to the client's id


Handler = Callable[..., Any]
#: A shape of `encodings/shapes.py`: (converter, value, uri) → the value, its positions converted
#: (typed loosely here: the encodings rank above this module).
Shape = Callable[[Any, Any, "str | None"], Any]


@dataclass(frozen=True, slots=True)
class Route:
    policy: Policy
    feature: str
    #: Key in ServerCapabilities (None: always eligible): given by the table as it assembles
    #: the routes, from `routing/capabilities.capability_of` — the one place it is declared.
    capability: str | None = None
    position: bool = False  # params carry textDocument + position (Locate can fill them)
    range: bool = False  # params carry textDocument + range (Locate can fill them)
    merger: Callable[[merge.Results], Any] | None = None  # MERGE: how answers combine
    family: str | None = None  # items come back through ORIGIN methods of this family
    handler: Handler | None = None  # the function that serves it (see the module docstring)
    client_capability: str | None = None  # dotted client capability needed to pass it on
    resolved_by: str | None = None  # a resolve method: whose `resolveProvider` says it resolves
    #: The option of `capability` a server must set to serve it (`renameProvider.prepareProvider`).
    needs_option: str | None = None
    #: A server request no client can take now: what the server is told (None: null).
    declined: Any = None
    #: A server→client message: what is done once per server instance, in the pool.
    instance: Handler | None = None
    #: A client notification whose params must carry a `textDocument` (document sync).
    document: bool = False
    #: A server notification dropped while its client is behind (logs, telemetry).
    chatter: bool = False
    #: Where its params and its result hold positions (`encodings/shapes.py`), converted when a
    #: backend's position encoding differs from the session's; None: they hold none.
    params_shape: Shape | None = None
    result_shape: Shape | None = None
    #: How its answer is fitted to a client that declared less than a shared server was told:
    #: a kind of `routing/adapt.py` ("completion", "hover", "definition", …); None: as it is.
    fit: str | None = None


def route(
    policy: Policy,
    feature: str,
    *,
    position: bool = False,
    range: bool = False,
    merger: Callable[[merge.Results], Any] | None = None,
    family: str | None = None,
    handler: Handler | None = None,
    client_capability: str | None = None,
    resolved_by: str | None = None,
    needs_option: str | None = None,
    declined: Any = None,
    instance: Handler | None = None,
    document: bool = False,
    chatter: bool = False,
    params_shape: Shape | None = None,
    result_shape: Shape | None = None,
    fit: str | None = None,
) -> Route:
    """A `Route`; a merged one without a merger concatenates. Its capability is not given
    here: the table sets it from `routing/capabilities.py`."""
    if policy is Policy.MERGE and merger is None:
        merger = merge.concat
    return Route(
        policy,
        feature,
        None,
        position,
        range,
        merger,
        family,
        handler,
        client_capability,
        resolved_by,
        needs_option,
        declined,
        instance,
        document,
        chatter,
        params_shape,
        result_shape,
        fit,
    )


def client_declares(capabilities: Any, dotted: str | None) -> bool:
    """Whether the client's capabilities have `dotted` (e.g. "window.workDoneProgress") true."""
    if dotted is None:
        return True
    node = capabilities
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return False
        node = node.get(part)
    return bool(node)
