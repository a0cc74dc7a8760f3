"""lspmux's own `locate/*` methods: a position or a range found by what is written there (see
docs/locate.md). Locate loads at its first use, not at start."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from lspmux.routing.route import Policy, Route, route
from lspmux.session.exchange import Exchange
from lspmux.session.state import SessionState

LOCATE_RESOLVE = "locate/resolve"
LOCATE_RESOLVE_RANGE = "locate/resolveRange"
LOCATE_DESCRIBE = "locate/describe"


def resolve(session: SessionState, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods

    return methods.resolve(session, ex.params or {})


def resolve_range(session: SessionState, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods

    return methods.resolve_range(session, ex.params or {})


def describe(session: SessionState, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods

    return methods.describe(session, ex.params or {})


REQUESTS: dict[str, Route] = {
    LOCATE_RESOLVE: route(Policy.LOCAL, "locate", handler=resolve),
    LOCATE_RESOLVE_RANGE: route(Policy.LOCAL, "locate", handler=resolve_range),
    LOCATE_DESCRIBE: route(Policy.LOCAL, "locate", handler=describe),
}
