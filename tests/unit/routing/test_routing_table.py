"""The one method table: four directions, every name from lsprotocol (or lspmux's own), every
handler it names exists, and the families of resolvable items are consistent."""

from __future__ import annotations

import pytest
from lsprotocol import types as t

from lspmux.backends import backend as backend_module
from lspmux.routing.table import (
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    DIAGNOSTIC_STATUS,
    FEATURES,
    LOCATE_DESCRIBE,
    LOCATE_RESOLVE,
    LOCATE_RESOLVE_RANGE,
    ROUTES,
    SERVER_NOTIFICATIONS,
    SERVER_REQUESTS,
    TABLES,
    Direction,
    Policy,
    client_declares,
)
from lspmux.session import dispatch, relay, sync

#: Every method constant lsprotocol defines (the values of its upper-case string constants).
LSP_METHODS = {v for k, v in vars(t).items() if k.isupper() and isinstance(v, str) and "/" in v} | {
    t.INITIALIZE,
    t.INITIALIZED,
    t.SHUTDOWN,
    t.EXIT,
}
OWN_METHODS = {LOCATE_RESOLVE, LOCATE_RESOLVE_RANGE, LOCATE_DESCRIBE, DIAGNOSTIC_STATUS}

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


def test_every_named_handler_exists() -> None:
    """A handler name in the table is served by the module of its direction."""
    client_requests = set(dispatch.LOCAL_REQUESTS)
    client_notifications = set(dispatch.LOCAL_NOTIFICATIONS) | set(sync.HANDLERS)
    server_requests = set(relay._REQUEST_HANDLERS) | set(backend_module._ANSWERS)
    server_notifications = set(relay._NOTIFICATION_HANDLERS)
    served = {
        Direction.CLIENT_REQUEST: client_requests,
        Direction.CLIENT_NOTIFICATION: client_notifications,
        Direction.SERVER_REQUEST: server_requests,
        Direction.SERVER_NOTIFICATION: server_notifications,
    }
    missing = [
        (d.value, m, r.handler)
        for d, m, r in ALL
        if r.handler is not None and r.handler not in served[d]
    ]
    assert not missing
    named = {d: {r.handler for _, _, r in [x for x in ALL if x[0] is d]} for d in Direction}
    # …and no handler is left that the table does not name (dead code).
    assert client_requests <= named[Direction.CLIENT_REQUEST]
    assert client_notifications <= named[Direction.CLIENT_NOTIFICATION]
    assert server_requests <= named[Direction.SERVER_REQUEST]
    assert server_notifications <= named[Direction.SERVER_NOTIFICATION]


def test_backend_answers_are_the_answer_policy() -> None:
    answered = {r.handler for r in SERVER_REQUESTS.values() if r.policy is Policy.ANSWER}
    assert answered == set(backend_module._ANSWERS) == relay.BACKEND_ANSWERS


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


def test_local_and_diagnostics_routes_name_a_handler() -> None:
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
