"""The dispatch table: method names come from lsprotocol, features are consistent."""

from __future__ import annotations

import pytest
from lsprotocol import types as t

from lspmux.routing.table import FEATURES, LOCAL_METHODS, ROUTES, Policy, route_for

#: Every method constant lsprotocol defines (the values of its upper-case string constants).
LSP_METHODS = {v for k, v in vars(t).items() if k.isupper() and isinstance(v, str) and "/" in v} | {
    t.INITIALIZE,
    t.INITIALIZED,
    t.SHUTDOWN,
    t.EXIT,
}

#: Requests and notifications, by lsprotocol's own table: method → (message, response, params,
#: registration options); a notification has no response type.
REQUESTS = {m for m, types in t.METHOD_TO_TYPES.items() if types[1] is not None}
NOTIFICATIONS = {m for m, types in t.METHOD_TO_TYPES.items() if types[1] is None}


@pytest.mark.parametrize("method", sorted(ROUTES))
def test_every_route_is_an_lsp_method_constant(method: str) -> None:
    assert method in LSP_METHODS


def test_features_exclude_sync_and_cover_every_other_route() -> None:
    assert "sync" not in FEATURES
    assert {r.feature for r in ROUTES.values()} == FEATURES | {"sync"}


@pytest.mark.parametrize("method", sorted(m for m, r in ROUTES.items() if r.position or r.range))
def test_position_and_range_routes_are_requests(method: str) -> None:
    assert method in REQUESTS
    assert method not in NOTIFICATIONS
    assert not (ROUTES[method].position and ROUTES[method].range)


@pytest.mark.parametrize(
    "method", sorted(m for m, r in ROUTES.items() if r.policy is Policy.BROADCAST)
)
def test_broadcast_routes_are_notifications_of_the_sync_feature(method: str) -> None:
    assert method in NOTIFICATIONS
    assert ROUTES[method].feature == "sync"


@pytest.mark.parametrize(
    "method", sorted(m for m, r in ROUTES.items() if r.policy is not Policy.BROADCAST)
)
def test_other_routes_are_requests(method: str) -> None:
    assert method in REQUESTS


@pytest.mark.parametrize(
    "method", sorted(m for m, r in ROUTES.items() if r.policy is Policy.ORIGIN)
)
def test_origin_routes_share_their_producers_feature(method: str) -> None:
    producers = {r.feature for r in ROUTES.values() if r.policy is not Policy.ORIGIN}
    assert ROUTES[method].feature in producers | {"executeCommand"}


def test_local_methods_are_not_routed() -> None:
    assert not LOCAL_METHODS & set(ROUTES)


def test_policies_have_the_words_the_docs_use() -> None:
    assert {p.value for p in Policy} == {
        "first",
        "merge",
        "origin",
        "broadcast",
        "diagnostics",
        "local",
    }


def test_route_for() -> None:
    assert route_for(t.TEXT_DOCUMENT_HOVER) is ROUTES[t.TEXT_DOCUMENT_HOVER]
    assert route_for("rust-analyzer/expandMacro") is None
