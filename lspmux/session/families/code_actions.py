"""Code actions and commands: `textDocument/codeAction` asks every eligible server with only
the diagnostics that server produced, `codeAction/resolve` goes back to the action's server,
`workspace/executeCommand` to the server that advertised the command, and the
`workspace/applyEdit` a command makes goes to the client whose command it is
(`relays.to_one`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import lspmux.encodings.shapes as s
from lspmux.routing import merge
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route
from lspmux.session.exchange import Exchange
from lspmux.session.families.relays import to_one
from lspmux.session.forward import by_policy, to_origin
from lspmux.session.relay import relay_request
from lspmux.session.state import SessionState

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

log = logging.getLogger("lspmux.session")

#: The method whose work makes a server send `workspace/applyEdit` (see `relays.to_one`).
EXECUTE_COMMAND = lsp.WORKSPACE_EXECUTE_COMMAND


def code_action(ex: Exchange, route: Route, eligible: list[Backend]) -> None:
    session: SessionState = ex.session
    ex.per_backend = _own_diagnostics(session, ex.params, eligible)
    by_policy(ex, route, eligible)


def _own_diagnostics(
    session: SessionState, params: Any, eligible: list[Backend]
) -> dict[str, Any] | None:
    """Per backend, the code action params with only the diagnostics that backend produced (as
    it published them, with their `data`); linters' diagnostics go to no backend."""
    if not isinstance(params, dict):
        return None
    context = params.get("context")
    td = params.get("textDocument")
    uri = td.get("uri") if isinstance(td, dict) else None
    if not isinstance(context, dict) or not isinstance(uri, str):
        return None
    diagnostics = context.get("diagnostics")
    if not isinstance(diagnostics, list) or not diagnostics:
        return None
    names = list(dict.fromkeys(b.name for b in eligible))
    split = session.store.attribute(uri, diagnostics, sources=names)
    out: dict[str, Any] = {}
    for name in names:
        own = split.get(name, [])
        out[name] = {**params, "context": {**context, "diagnostics": own}}
        log.debug(
            "%s: codeAction for %s gets %d of %d diagnostics (codes %s)",
            name,
            uri,
            len(own),
            len(diagnostics),
            sorted({str(d.get("code")) for d in own}),
        )
    return out


def execute_command(ex: Exchange, route: Route, backends: list[Backend]) -> None:
    """To the server that advertises the command (statically or as registered), else to the
    one whose code action was last listed."""
    session: SessionState = ex.session
    params = ex.params if isinstance(ex.params, dict) else {}
    command = params.get("command")
    target: Backend | None = None
    for backend in backends:
        provider = backend.capabilities.get("executeCommandProvider") or {}
        if command in (provider.get("commands") or []) or any(
            m == EXECUTE_COMMAND and command in ((o or {}).get("commands") or [])
            for m, o in backend.registrations.values()
        ):
            target = backend
            break
    if target is None and route.family is not None:
        target = session.backend_by_origin(session.last_origin.get(route.family))
    to_origin(ex, route, target, ex.params, None)


REQUESTS: dict[str, Route] = {
    lsp.TEXT_DOCUMENT_CODE_ACTION: route(
        Policy.MERGE,
        "codeAction",
        range=True,
        merger=merge.code_actions,
        family="codeAction",
        handler=code_action,
        params_shape=s.keyed(range=s.RANGE, context=s.keyed(diagnostics=s.DIAGNOSTICS)),
        result_shape=s.each(s.CODE_ACTION),
    ),
    lsp.CODE_ACTION_RESOLVE: route(
        Policy.ORIGIN,
        "codeAction",
        family="codeAction",
        resolved_by="codeActionProvider",
        params_shape=s.CODE_ACTION,
        result_shape=s.CODE_ACTION,
    ),
    EXECUTE_COMMAND: route(
        Policy.ORIGIN,
        "executeCommand",
        family="codeAction",
        handler=execute_command,
    ),
}

SERVER_REQUESTS: dict[str, Route] = {
    lsp.WORKSPACE_APPLY_EDIT: route(
        Policy.RELAY,
        "sync",
        handler=relay_request,
        instance=to_one,
        client_capability="workspace.applyEdit",
        declined={"applied": False, "failureReason": "no client can apply it now"},
        params_shape=s.keyed(edit=s.WORKSPACE_EDIT),
    ),
}
