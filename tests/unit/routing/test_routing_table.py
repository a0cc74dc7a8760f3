"""The one method table: four directions, every name from lsprotocol (or lspmux's own), every
route holds its handler as a function of its family, and the families of resolvable items are
consistent."""

from __future__ import annotations

import pytest
from lsprotocol import types as t

from lspmux.routing.table import (
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    FAMILIES,
    FEATURES,
    ROUTES,
    SERVER_NOTIFICATIONS,
    SERVER_REQUESTS,
    TABLES,
    Direction,
    Policy,
    client_declares,
)
from lspmux.session.families import relays
from lspmux.session.families.diagnostics import DIAGNOSTIC_STATUS
from lspmux.session.families.locate import LOCATE_DESCRIBE, LOCATE_RESOLVE, LOCATE_RESOLVE_RANGE
from lspmux.session.families.status import STATUS

#: Every method constant lsprotocol defines (the values of its upper-case string constants).
LSP_METHODS = {v for k, v in vars(t).items() if k.isupper() and isinstance(v, str) and "/" in v} | {
    t.INITIALIZE,
    t.INITIALIZED,
    t.SHUTDOWN,
    t.EXIT,
}
OWN_METHODS = {LOCATE_RESOLVE, LOCATE_RESOLVE_RANGE, LOCATE_DESCRIBE, DIAGNOSTIC_STATUS, STATUS}

#: Requests and notifications, by lsprotocol's own table.
REQUESTS = {m for m, types in t.METHOD_TO_TYPES.items() if types[1] is not None}
NOTIFICATIONS = {m for m, types in t.METHOD_TO_TYPES.items() if types[1] is None}

ALL = [(d, m, r) for d, table in TABLES.items() for m, r in table.items()]


@pytest.mark.parametrize(("direction", "method"), [(d, m) for d, m, _ in ALL])
def test_every_method_is_an_lsp_constant_or_lspmux_own(direction: Direction, method: str) -> None:
    assert method in LSP_METHODS | OWN_METHODS


@pytest.mark.parametrize("method", sorted(CLIENT_REQUESTS))
def test_client_requests_are_requests(method: str) -> None:
    assert method in REQUESTS or method in OWN_METHODS


@pytest.mark.parametrize("method", sorted(CLIENT_NOTIFICATIONS))
def test_client_notifications_are_notifications(method: str) -> None:
    assert method in NOTIFICATIONS


@pytest.mark.parametrize("method", sorted(SERVER_REQUESTS))
def test_server_requests_are_requests(method: str) -> None:
    assert method in REQUESTS


@pytest.mark.parametrize("method", sorted(SERVER_NOTIFICATIONS))
def test_server_notifications_are_notifications(method: str) -> None:
    assert method in NOTIFICATIONS


def test_every_lsp_server_to_client_method_is_in_the_table() -> None:
    """What a server may send is decided by the table, not by chance (3.17's list)."""
    server_requests = {
        t.WORKSPACE_CONFIGURATION,
        t.WORKSPACE_WORKSPACE_FOLDERS,
        t.CLIENT_REGISTER_CAPABILITY,
        t.CLIENT_UNREGISTER_CAPABILITY,
        t.WINDOW_WORK_DONE_PROGRESS_CREATE,
        t.WORKSPACE_APPLY_EDIT,
        t.WINDOW_SHOW_MESSAGE_REQUEST,
        t.WINDOW_SHOW_DOCUMENT,
        t.WORKSPACE_DIAGNOSTIC_REFRESH,
        t.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
        t.WORKSPACE_INLAY_HINT_REFRESH,
        t.WORKSPACE_INLINE_VALUE_REFRESH,
        t.WORKSPACE_CODE_LENS_REFRESH,
    }
    assert server_requests <= set(SERVER_REQUESTS)
    assert {
        t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        t.PROGRESS,
        t.WINDOW_LOG_MESSAGE,
        t.WINDOW_SHOW_MESSAGE,
        t.TELEMETRY_EVENT,
        t.CANCEL_REQUEST,
        t.LOG_TRACE,
    } <= set(SERVER_NOTIFICATIONS)


def test_every_handler_is_a_function_of_a_family() -> None:
    """A route holds its handler (and its per-instance step) as a function, not a name, and
    that function lives in a family module or in the session's shared helpers."""
    homes = {f.__name__ for f in FAMILIES} | {
        "lspmux.session.relay",
        "lspmux.session.forward",
        "lspmux.backends.pool",
    }
    for _d, method, route in ALL:
        for fn in (route.handler, route.instance):
            if fn is not None:
                assert callable(fn), method
                assert fn.__module__ in homes, (method, fn.__module__)


def test_each_method_is_declared_by_one_family() -> None:
    for direction, name in (
        (Direction.CLIENT_REQUEST, "REQUESTS"),
        (Direction.CLIENT_NOTIFICATION, "NOTIFICATIONS"),
        (Direction.SERVER_REQUEST, "SERVER_REQUESTS"),
        (Direction.SERVER_NOTIFICATION, "SERVER_NOTIFICATIONS"),
    ):
        declared = [m for f in FAMILIES for m in getattr(f, name, {})]
        assert len(declared) == len(set(declared)) == len(TABLES[direction])


def test_answered_server_requests_have_a_per_instance_answer() -> None:
    """What lspmux answers itself (`answer`, `register`, `progress`, `refresh`) is answered once
    per server instance, in the pool; a relayed request goes to the one client concerned."""
    for method, route in SERVER_REQUESTS.items():
        assert route.instance is not None, method
        if route.policy is Policy.RELAY:
            assert route.instance is relays.to_one, method


@pytest.mark.parametrize("direction", list(Direction))
def test_policies_belong_to_their_direction(direction: Direction) -> None:
    allowed = {
        Direction.CLIENT_REQUEST: {
            Policy.FIRST,
            Policy.MERGE,
            Policy.ORIGIN,
            Policy.DIAGNOSTICS,
            Policy.LOCAL,
        },
        Direction.CLIENT_NOTIFICATION: {Policy.BROADCAST, Policy.LOCAL},
        Direction.SERVER_REQUEST: {
            Policy.ANSWER,
            Policy.REGISTER,
            Policy.PROGRESS,
            Policy.REFRESH,
            Policy.RELAY,
        },
        Direction.SERVER_NOTIFICATION: {
            Policy.STORE,
            Policy.PROGRESS,
            Policy.RELAY,
            Policy.CANCEL,
        },
    }[direction]
    assert {r.policy for r in TABLES[direction].values()} <= allowed


def test_local_and_diagnostics_routes_hold_a_handler() -> None:
    for _d, method, route in ALL:
        if route.policy in (Policy.LOCAL, Policy.DIAGNOSTICS):
            assert route.handler is not None, method


def test_merged_routes_name_a_merger_and_others_do_not() -> None:
    for _d, method, route in ALL:
        assert (route.merger is not None) == (route.policy is Policy.MERGE), method


@pytest.mark.parametrize(
    "method", sorted(m for m, r in CLIENT_REQUESTS.items() if r.policy is Policy.ORIGIN)
)
def test_origin_methods_name_a_family_some_method_produces(method: str) -> None:
    family = CLIENT_REQUESTS[method].family
    producers = {
        r.family for r in CLIENT_REQUESTS.values() if r.policy in (Policy.FIRST, Policy.MERGE)
    }
    assert family is not None and family in producers


def test_features_exclude_sync_and_lspmux_own() -> None:
    assert "sync" not in FEATURES
    assert "lifecycle" not in FEATURES and "locate" not in FEATURES
    assert {r.feature for r in ROUTES.values()} == FEATURES | {"sync"}


@pytest.mark.parametrize("method", sorted(m for m, r in ROUTES.items() if r.position or r.range))
def test_positional_methods_are_requests_on_a_document(method: str) -> None:
    assert method in REQUESTS
    assert not (ROUTES[method].position and ROUTES[method].range)


def test_refresh_requests_name_the_client_capability_they_need() -> None:
    for method, route in SERVER_REQUESTS.items():
        if route.policy is Policy.REFRESH:
            assert route.client_capability is not None, method
            assert route.client_capability.endswith("refreshSupport")


@pytest.mark.parametrize(
    ("capabilities", "dotted", "expected"),
    [
        ({"window": {"workDoneProgress": True}}, "window.workDoneProgress", True),
        ({"window": {"workDoneProgress": False}}, "window.workDoneProgress", False),
        ({"window": {}}, "window.workDoneProgress", False),
        ({"window": "junk"}, "window.workDoneProgress", False),
        ({}, None, True),
    ],
)
def test_client_declares(capabilities: dict, dotted: str | None, expected: bool) -> None:
    assert client_declares(capabilities, dotted) is expected
