"""Forwarding one client request to its backends and answering it exactly once.

The policies of `lspmux.routing.table`: FIRST tries eligible backends in configuration order
until one answers with something (an error or a null moves on to the next); MERGE asks every
eligible backend and merges what came back (a failing backend contributes nothing); ORIGIN sends
resolve/execute requests back to the backend that produced the item or advertised the command.
A single-target answer that needs no rewriting is relayed as raw bytes with only its id changed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lspmux.backends.capabilities import resolve_provider
from lspmux.backends.provided import effective
from lspmux.errors import (
    ContentModified,
    JsonRpcError,
    MethodNotFound,
    RequestCancelled,
    RequestFailed,
)
from lspmux.routing import merge
from lspmux.routing.route import Policy, Route
from lspmux.session import positions
from lspmux.session.exchange import Exchange
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message, decode, result_is_null

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

log = logging.getLogger("lspmux.session")


def dispatch(
    ex: Exchange, route: Route | None, backends: list[Backend], *, retried: bool = False
) -> None:
    """Route a request to `backends` (already running) by its route's policy."""
    session: SessionState = ex.session
    method = ex.method
    if route is not None and must_fit(session, route):
        ex.fit_for, ex.fit_kind = session.client_capabilities, route.fit or ""
    if route is None:
        if not backends:  # unknown to lspmux, and no server here to know it
            ex.reply_error(
                MethodNotFound(
                    f"lspmux does not know {method}, and no server runs for this request to "
                    "take it (none is configured, or installed, for its file)"
                )
            )
            return
        first(ex, backends, allow_null_fallthrough=False)
        return
    if route.policy is Policy.ORIGIN:
        (route.handler or origin)(ex, route, backends)
        return
    eligible = serving(method, route, backends)
    if not eligible:
        if _just_started(backends) and not retried:  # its registrations may be on their way
            asyncio.get_running_loop().call_later(REGISTRATION_WAIT, _retry, ex, route, backends)
            return
        ex.reply_error(_nobody(method, backends))
        return
    if session.pool.shared:  # a shared server may hold another client's text of the file
        hold_requesters_text(session, ex.params, eligible)
    (route.handler or by_policy)(ex, route, eligible)


def by_policy(ex: Exchange, route: Route, eligible: list[Backend]) -> None:
    """FIRST or MERGE over the eligible backends (at least one)."""
    session: SessionState = ex.session
    policy = route.policy
    if policy not in ONE_OR_ALL:
        ex.reply_error(MethodNotFound(f"lspmux cannot route {ex.method} (policy {policy.value})"))
    elif len(eligible) == 1:
        family = single_target(session, route, ex.params, eligible[0])
        first(ex, eligible, allow_null_fallthrough=False, on_answer=_remembering(session, family))
    elif policy is Policy.FIRST:
        first(ex, eligible, on_answer=_remembering(session, route.family))
    else:
        merge_all(ex, eligible, route.merger or merge.concat)


ONE_OR_ALL = (Policy.FIRST, Policy.MERGE)  # the policies `single_target` readies requests of


def must_fit(session: SessionState, route: Route) -> bool:
    """Whether answers of `route` are fitted for this client (a shared server was told more
    than it declared; see routing/adapt.py)."""
    fit = route.fit
    if fit is None or not session.pool.shared:
        return False
    return session.fitted(fit)


def serving(method: str, route: Route, backends: list[Backend]) -> list[Backend]:
    """The backends of `backends` that serve `method` (its eligible backends), in order."""
    return [b for b in backends if b.supports(method, route)]


def single_target(session: SessionState, route: Route, params: Any, target: Backend) -> str | None:
    """Ready a FIRST or MERGE request that goes to `target` alone (`by_policy`'s one eligible
    backend, the fast lane's): a shared `target` holds this client's text; a MERGE of one has
    its origin now. The family whose last origin the answer sets (FIRST), else None."""
    if session.pool.shared:
        hold_requesters_text(session, params, [target])
    family = route.family
    if family is not None and route.policy is Policy.MERGE:
        session.last_origin[family] = session.origin_of(target)
        return None
    return family


#: How often a request a server answers with ContentModified is asked again.
MODIFIED_RETRIES = 2

#: A server registers capabilities right after `initialized`; a request that no backend serves
#: yet, sent just after a backend of its file started, is tried once more after this long.
REGISTRATION_WAIT = 0.3
_JUST_STARTED = 2.0


def _retry(ex: Exchange, route: Route, backends: list[Backend]) -> None:
    if not ex.answered:
        dispatch(ex, route, backends, retried=True)


def _just_started(backends: list[Backend]) -> bool:
    now = time.monotonic()
    return any(b.started_at is not None and now - b.started_at < _JUST_STARTED for b in backends)


def hold_requesters_text(session: SessionState, params: Any, backends: list[Backend]) -> None:
    """Make shared servers hold this client's text of the request's document before it goes
    to them: positions are read on the text the client sees (another may have edited it)."""
    td = params.get("textDocument") if isinstance(params, dict) else None
    uri = td.get("uri") if isinstance(td, dict) else None
    if not isinstance(uri, str) or uri not in session.documents:
        return
    for backend in backends:
        backend.documents.ensure_holds(session, uri)  # O(1) when it holds it already


def _nobody(method: str, backends: list[Backend]) -> JsonRpcError:
    if not backends:
        return RequestFailed(
            f"no language server is configured and installed for this file ({method}); "
            "see `lspmux config` for the servers lspmux found"
        )
    names = ", ".join(b.name for b in backends)
    return MethodNotFound(f"none of this file's servers ({names}) offers {method}")


def _remembering(session: SessionState, family: str | None) -> Callable[[Backend], None] | None:
    """What a FIRST answer of `family` does: remember which backend answered (for resolve)."""
    if family is None:
        return None

    def remember(backend: Backend) -> None:
        session.last_origin[family] = session.origin_of(backend)

    return remember


def first_after(ex: Exchange, backend: Backend, family: str | None, resp: Message) -> None:
    """The fast lane's request `ex`, sent to `backend` alone, got `resp` (anything but a plain
    sniffed result): the FIRST policy handles it as if it had sent the request itself."""
    policy = _First(ex, [backend], True, _remembering(ex.session, family))
    policy.backend = backend
    policy.on_msg(resp)


def first(
    ex: Exchange,
    candidates: list[Backend],
    *,
    allow_null_fallthrough: bool = True,
    on_answer: Callable[[Backend], None] | None = None,
) -> None:
    """Ask candidates in order; the first non-error (and, unless disallowed, non-null) answer
    wins. Raw relay when possible."""
    _First(ex, candidates, allow_null_fallthrough, on_answer).attempt(0)


class _First:
    """The state of one first-eligible exchange. A class, not nested closures: closures that
    call themselves leave a reference cycle per request for the cyclic collector, which cost
    about half the proxy's CPU under pipelined load (docs/benchmarks.md)."""

    __slots__ = (
        "allow_null",
        "backend",
        "candidates",
        "ex",
        "i",
        "last_error",
        "on_answer",
        "retries",
    )

    def __init__(
        self,
        ex: Exchange,
        candidates: list[Backend],
        allow_null: bool,
        on_answer: Callable[[Backend], None] | None,
    ) -> None:
        self.ex = ex
        self.candidates = candidates
        self.allow_null = allow_null
        self.on_answer = on_answer
        self.last_error: dict[str, Any] | None = None
        self.i = 0
        self.retries = 0
        self.backend: Backend | None = None

    def attempt(self, i: int) -> None:
        ex = self.ex
        if ex.answered:
            return
        if i >= len(self.candidates):
            if self.last_error is not None:
                ex.reply_error(self.last_error)
            else:
                ex.reply(None)
            return
        self.i = i
        backend = self.backend = self.candidates[i]
        send(ex, backend, ex.method, ex.params_for(backend), self.on_msg, raw=self.on_raw)

    def _more(self) -> bool:
        return self.allow_null and self.i + 1 < len(self.candidates)

    def on_raw(self, body: bytes, offset: int) -> None:
        if body.startswith(b'"error"', offset) or (self._more() and result_is_null(body, offset)):
            self.on_msg(decode(body))
            return
        if self.on_answer is not None and self.backend is not None:
            self.on_answer(self.backend)
        self.ex.reply_raw(body, offset)

    def on_msg(self, resp: Message) -> None:
        ex, backend = self.ex, self.backend
        assert backend is not None
        if "error" in resp:
            err = dict(resp["error"] or {})
            if err.get("code") == RequestCancelled.CODE:  # pass through as is
                ex.reply_error(err)
                return
            if err.get("code") == ContentModified.CODE and self.retries < MODIFIED_RETRIES:
                # ContentModified: the server's text changed under the request (on a shared
                # server, another client's edit or a re-sync): ask again, on this client's text.
                self.retries += 1
                session: SessionState = ex.session
                if session.pool.shared:
                    hold_requesters_text(session, ex.params, [backend])
                self.attempt(self.i)
                return
            err["message"] = f"{backend.name}: {err.get('message', 'error')}"
            self.last_error = err
            log.info("%s: %s failed: %s", backend.label, ex.method, err["message"])
            self.attempt(self.i + 1)
            return
        value = resp.get("result")
        if value is None and self._more():
            self.attempt(self.i + 1)
            return
        if self.on_answer is not None:
            self.on_answer(backend)
        ex.reply(value)


def merge_all(
    ex: Exchange, eligible: list[Backend], merger: Callable[[merge.Results], Any]
) -> None:
    results: list[tuple[int, Any]] = []
    errors: list[dict[str, Any]] = []
    remaining = [len(eligible)]
    session: SessionState = ex.session

    def collect(backend: Backend) -> Callable[[Message], None]:
        def on_msg(resp: Message) -> None:
            if "error" in resp:
                err = resp["error"] or {}
                errors.append({**err, "message": f"{backend.name}: {err.get('message')}"})
                log.info("%s: %s failed: %s", backend.label, ex.method, err.get("message"))
            else:
                results.append((session.origin_of(backend), resp.get("result")))
            remaining[0] -= 1
            if remaining[0] == 0:
                if not results and errors:
                    ex.reply_error(errors[0])
                    return
                order = {session.origin_of(b): n for n, b in enumerate(eligible)}
                results.sort(key=lambda r: order.get(r[0], 0))
                try:
                    ex.reply(merger(results))
                except Exception as exc:  # a malformed answer must not lose the request
                    log.exception("merging %s failed", ex.method)
                    ex.reply_error(RequestFailed(f"lspmux could not merge {ex.method}: {exc}"))

        return on_msg

    for backend in eligible:
        send(ex, backend, ex.method, ex.params_for(backend), collect(backend))


def origin(ex: Exchange, route: Route, backends: list[Backend]) -> None:
    """resolve: back to the backend whose item it is (its origin tag, else the last backend
    that answered the route's family)."""
    session: SessionState = ex.session
    params = ex.params if isinstance(ex.params, dict) else {}
    origin_id, original = merge.untag(params)
    if origin_id is not None:
        to_origin(ex, route, session.backend_by_origin(origin_id), original, origin_id)
        return
    last = session.last_origin.get(route.family) if route.family is not None else None
    to_origin(ex, route, session.backend_by_origin(last), ex.params, None)


def to_origin(
    ex: Exchange, route: Route, target: Backend | None, send_params: Any, retag: int | None
) -> None:
    """Send `ex` to the backend an item came from (`retag`: its origin tag, put back on the
    answer); an error that says what to do when nobody is known to have produced it."""
    if target is None:
        ex.reply_error(
            RequestFailed(
                f"lspmux does not know which server produced this item ({ex.method}); "
                "request it again (completion, code action…) before resolving it"
            )
        )
        return
    if retag is not None and route.resolved_by and not _resolves(target, route.resolved_by):
        ex.reply(ex.params)  # nothing to resolve there: the item is complete as it is
        return
    backend = target

    def on_msg(resp: Message) -> None:
        if answered_error(ex, backend, resp):
            return
        value = resp.get("result")
        if retag is not None and isinstance(value, dict):
            value = merge.tag(value, retag)
        ex.reply(value)

    send(ex, backend, ex.method, send_params, on_msg, raw=ex.reply_raw if retag is None else None)


def answered_error(ex: Exchange, backend: Backend, resp: Message) -> bool:
    """An error from `backend` is `ex`'s answer, with the server's name in its message."""
    if "error" not in resp:
        return False
    err = dict(resp["error"] or {})
    err["message"] = f"{backend.name}: {err.get('message', 'error')}"
    ex.reply_error(err)
    return True


def _resolves(backend: Backend, capability: str) -> bool:
    """Whether `backend` resolves the items of `capability` (statically or as registered)."""
    served = effective(backend.capabilities, backend.registrations.values())
    return resolve_provider(served, capability)


def send(
    ex: Exchange,
    backend: Backend,
    method: str,
    params: Any,
    on_msg: Callable[[Message], None],
    *,
    raw: Callable[[bytes, int], None] | None = None,
) -> None:
    """One request of `ex` to `backend`; positions converted when the backend speaks another
    encoding than the session (then the answer is read, never relayed raw)."""
    session: SessionState = ex.session
    if backend.position_encoding != session.encoding:
        convert = positions.answer_from(session, backend, method, params)
        params = positions.request_to(session, backend, method, params)
        handle = on_msg

        def on_msg(resp: Message) -> None:
            handle(convert(resp))

        raw = None
    ex.sent(backend, backend.request(method, params, on_msg, raw=raw))


async def ensure_running(backends: list[Backend]) -> list[Backend]:
    """Start what is not running; the backends that are up."""
    if all(b.state == "running" for b in backends):
        return backends
    ok = await asyncio.gather(*(b.ensure_running() for b in backends))
    return [b for b, up in zip(backends, ok, strict=True) if up]
