"""One method, one place: the modules that dispatch (the client's dispatcher, forwarding, the
exchange, the pool, the table and the route) name no LSP method — what a method does is its
family's (`lspmux/session/families/*`), reached through its route."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lspmux.routing import methods

PACKAGE = Path(__file__).resolve().parents[3] / "lspmux"
DISPATCHERS = [
    "session/dispatch.py",
    "session/forward.py",
    "session/exchange.py",
    "backends/pool.py",
    "routing/table.py",
    "routing/route.py",
]
NAMES = {v for k, v in vars(methods).items() if k.isupper() and isinstance(v, str)}


@pytest.mark.parametrize("path", DISPATCHERS)
def test_a_dispatcher_names_no_method(path: str) -> None:
    tree = ast.parse((PACKAGE / path).read_text(encoding="utf-8"))
    spelled = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES
    ]
    imports_names = [
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (
            node.module == "lspmux.routing.methods"
            or (node.module == "lspmux.routing" and any(a.name == "methods" for a in node.names))
        )
    ]
    assert not spelled and not imports_names, (path, spelled, imports_names)


def test_the_check_sees_a_spelled_method() -> None:
    """The check would catch a dispatcher that branched on a method name."""
    tree = ast.parse('if method == "textDocument/hover": pass')
    assert any(isinstance(n, ast.Constant) and n.value in NAMES for n in ast.walk(tree))


def test_the_providers_capability_keys_agree_with_the_routes() -> None:
    """`backends/provided.PROVIDERS` still keeps a method's capability key beside its route's
    (backends may not import the table): the two must say the same."""
    from lspmux.backends.provided import BY_METHOD
    from lspmux.routing.table import CLIENT_REQUESTS

    differ = {
        m: (BY_METHOD[m], r.capability)
        for m, r in CLIENT_REQUESTS.items()
        if m in BY_METHOD and r.capability != BY_METHOD[m]
    }
    assert not differ


def test_a_handler_of_the_client_takes_the_concrete_session_state() -> None:
    """Handlers given the session (`local`/`diagnostics` requests, notifications) take the
    concrete `SessionState`, so mypy checks every member they use — no Protocol stands in."""
    import inspect

    from lspmux.routing.table import CLIENT_NOTIFICATIONS, CLIENT_REQUESTS, Policy

    given_session = [
        r.handler
        for table in (CLIENT_REQUESTS, CLIENT_NOTIFICATIONS)
        for r in table.values()
        if r.handler is not None
        and r.policy in (Policy.LOCAL, Policy.DIAGNOSTICS, Policy.BROADCAST)
    ]
    assert given_session
    first = {
        f"{h.__module__}.{h.__qualname__}": next(iter(inspect.signature(h).parameters.values()))
        for h in given_session
    }
    wrong = {name: p.annotation for name, p in first.items() if p.annotation != "SessionState"}
    assert not wrong
