"""A client request's params as far as lspmux reads them: what is wrong with them, if anything.

Used by the general path (`dispatch`) and the fast lane (`fast`) alike.
"""

from __future__ import annotations

from typing import Any

from lspmux.routing.route import Route


def _is_position(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and type(value.get("line")) is int
        and type(value.get("character")) is int
    )


def params_problem(route: Route | None, params: Any, *, notification: bool = False) -> str | None:
    """What is wrong with a request's params as far as lspmux reads them, or None. A request
    with `locate` has its position or range filled in later, and is checked again then."""
    if params is None:
        if route is not None and (route.position or route.range or route.document):
            return "params are missing"
        return None
    if not isinstance(params, dict):
        return None if route is None else "params must be an object"
    td = params.get("textDocument", _MISSING)
    if td is not _MISSING and not (isinstance(td, dict) and isinstance(td.get("uri"), str)):
        return "textDocument must be an object with a string uri"
    if route is None or "locate" in params:
        return None
    if route.document and td is _MISSING:
        return "textDocument is missing"
    if route.position and not (td is not _MISSING and _is_position(params.get("position"))):
        return "expected textDocument and a position {line, character} of integers"
    if route.range:
        rng = params.get("range")
        if not (
            td is not _MISSING
            and isinstance(rng, dict)
            and _is_position(rng.get("start"))
            and _is_position(rng.get("end"))
        ):
            return "expected textDocument and a range {start, end} of positions"
    return None


_MISSING = object()
