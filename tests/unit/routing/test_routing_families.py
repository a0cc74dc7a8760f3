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


def _table_methods(name: str) -> set[str]:
    """Every method a family routes in one direction (lspmux's own `locate/*` among them)."""
    from lspmux.routing import table

    return {m for family in table.FAMILIES for m in getattr(family, name, {})} | {
        m for family in table.FAMILIES for m in getattr(family, f"SERVER_{name}", {})
    }


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


def test_a_route_s_capability_is_the_one_the_backends_read() -> None:
    """One declaration: every client route's capability key is `routing/capabilities`'s, the
    map `backends/provided.py` turns registrations into capabilities with — and every provider
    registers under a method the table routes (semanticTokens registers under its family's
    name), so a provider spelled wrong there cannot go unnoticed."""
    from lspmux.routing.capabilities import PROVIDERS, capability_of
    from lspmux.routing.table import CLIENT_NOTIFICATIONS, CLIENT_REQUESTS

    routes = {**CLIENT_REQUESTS, **CLIENT_NOTIFICATIONS}
    assert {m: r.capability for m, r in routes.items()} == {m: capability_of(m) for m in routes}
    unrouted = [m for m, _, _ in PROVIDERS if m not in routes]
    assert unrouted == ["textDocument/semanticTokens"]


def test_a_family_that_declares_a_capability_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table will not take a route that carries its own capability key."""
    import dataclasses
    import types

    from lspmux.routing import table
    from lspmux.routing.route import Policy, route

    family = types.ModuleType("lspmux.session.families.rogue")
    hover = dataclasses.replace(route(Policy.FIRST, "hover"), capability="hoverProvider")
    setattr(family, "REQUESTS", {"textDocument/hover": hover})  # noqa: B010
    monkeypatch.setattr(table, "FAMILIES", (family,))
    with pytest.raises(RuntimeError, match=r"routing/capabilities\.py"):
        table._assemble("REQUESTS", client=True)


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


#: Modules outside the families and the table that still spell method names (a constant of
#: `routing/methods.py` or a literal such as "textDocument/hover"), and why. The list only
#: shrinks: a module that stops spelling them must leave it, a new one fails.
SPELL_METHODS = {
    # pure data below the table, which the backends read too
    "routing/capabilities.py": "the one method → capability map issue 18 asks for (and options)",
    # the daemon's own opening protocol: one-shot requests answered before any session exists
    "daemon/opening.py": "which one-shot method a connection's first message asks (status…)",
    "daemon/server.py": "answers the one-shot lspmux/status for every instance and client",
    # lspmux/status, named once below its family (session/families/status.py) and the places
    # that take or ask it without a route: a proxy's status socket, `lspmux status`
    "serving.py": "what both ways of serving answer: lspmux/status, for the family and socket",
    # a backend speaks LSP to its server process itself, below the sessions and their families
    "backends/lifecycle.py": "a server's own start and stop: its settings after initialized",
    "backends/documents.py": "the documents a server holds: opened, changed, replayed on restart",
    "backends/loading.py": "a server's own start: the $/progress end that says it loaded",
    # below the routes altogether
    "wire/requests.py": "the base protocol's $/cancelRequest, sent when a request times out",
    "workspace/relay.py": "a leaf: which registrations are file watchers, the ones it relays",
}

#: Packages and modules that are LSP clients of an lspmux (or of a server), not its routing:
#: they ask for methods by name as an editor does.
CLIENTS = (
    "agent/",
    "remote/",
    "headless.py",
    "probe.py",
    "locate/command.py",
    "diagnostics/report.py",
)

#: Method names as literals: those with a "/" (the lifecycle's `initialize`, `shutdown`, `exit`
#: are also the words for a session's states, so a literal of them proves nothing).
_ROUTED = NAMES | {m for table in ("REQUESTS", "NOTIFICATIONS") for m in _table_methods(table)}


def _imports_methods(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and (
            node.module == "lspmux.routing.methods"
            or (node.module == "lspmux.routing" and any(a.name == "methods" for a in node.names))
        )
        for node in ast.walk(tree)
    )


def _spelled(tree: ast.AST) -> list[str]:
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "/" in node.value
        and node.value in _ROUTED
    ]


def _spells_methods(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    if "methods" not in text and not any(name in text for name in _ROUTED if "/" in name):
        return False  # nothing to find: not worth parsing
    tree = ast.parse(text)
    return _imports_methods(tree) or bool(_spelled(tree))


def test_method_names_are_spelled_by_their_families_only() -> None:
    """A message lspmux sends itself is sent by the family that owns its method (say, the
    trust notice: `session.tell` → `families/relays.tell_client`), not spelled where it is sent."""
    spelling = {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.parent.name != "families"
        and p.relative_to(PACKAGE).as_posix() not in ("routing/table.py", "routing/methods.py")
        and not p.relative_to(PACKAGE).as_posix().startswith(CLIENTS)
        and _spells_methods(p)
    }
    assert spelling - SPELL_METHODS.keys() == set(), "a new module spells method names"
    assert SPELL_METHODS.keys() - spelling == set(), "no longer spells them: drop it from the list"


def test_the_ratchet_sees_a_literal_and_a_constant() -> None:
    """Both spellings count: a literal method name, and the constants module imported."""
    assert _spelled(ast.parse('notify("textDocument/didSave", p)')) == ["textDocument/didSave"]
    assert _spelled(ast.parse('state = "shutdown"')) == []
    assert _imports_methods(ast.parse("from lspmux.routing import methods as lsp"))
