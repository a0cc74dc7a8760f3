"""Positions between the session's encoding and a backend's, where the two differ.

lspmux asks every server for the session's encoding's neighbour UTF-16 and strips encoding
extensions (`backends/client_caps.py`), so most servers answer in UTF-16 and most sessions are
UTF-16: then nothing here runs. A client that cannot take UTF-16 positions gets its own
encoding, and a server that insists on another encoding gets its own too; every message between
the two is converted, both ways, with the texts lspmux keeps (`lspmux/encodings/`): request
params and results, incremental `didChange` ranges (against the text before each change),
published and pulled diagnostics, and the edits and documents of server requests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lspmux.encodings import methods as convert
from lspmux.encodings.lines import Source, TextOf, with_disk
from lspmux.encodings.negotiate import session_encoding
from lspmux.encodings.shapes import ANY_POSITIONS, DID_CHANGE, Shape
from lspmux.session.state import SessionState
from lspmux.text import Encoding
from lspmux.wire.messages import Message

__all__ = [
    "answer_from",
    "changes_to",
    "convert_notification",
    "convert_params",
    "convert_result",
    "from_server",
    "request_to",
    "session_encoding",
]

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend


#: Method → (params shape, result shape), whatever the direction: filled by `routing/table.py`
#: from the routes as it assembles them (the table imports the families, which import this
#: module, so the shapes are handed down rather than looked up).
SHAPES: dict[str, tuple[Shape | None, Shape | None]] = {}

#: A method no route knows: its params and result are walked for anything shaped like a position.
_UNKNOWN = (ANY_POSITIONS, ANY_POSITIONS)


def shapes_of(method: str) -> tuple[Shape | None, Shape | None]:
    """Where `method`'s params and result hold positions: its route's `params_shape` and
    `result_shape` (None: none)."""
    if not SHAPES:  # converting by a guess would be silently wrong
        raise RuntimeError("the method table is not loaded: import lspmux.routing.table first")
    return SHAPES.get(method, _UNKNOWN)


def convert_params(
    method: str, params: Any, src: Encoding, dst: Encoding, text_of: TextOf, **kw: Any
) -> Any:
    """`params` of `method` with its positions from `src` to `dst` (`encodings/methods.py`)."""
    if src == dst:
        return params
    return convert.convert_params(shapes_of(method)[0], params, src, dst, text_of, **kw)


convert_notification = convert_params


def convert_result(
    method: str,
    result: Any,
    src: Encoding,
    dst: Encoding,
    text_of: TextOf,
    request_params: Any = None,
    **kw: Any,
) -> Any:
    """The `result` of `method` with its positions from `src` to `dst`."""
    if src == dst:
        return result
    shape = shapes_of(method)[1]
    return convert.convert_result(shape, result, src, dst, text_of, request_params, **kw)


def text_source(session: SessionState) -> TextOf:
    return with_disk(session.documents.get)


def request_to(session: SessionState, backend: Backend, method: str, params: Any) -> Any:
    return convert_params(
        method, params, session.encoding, backend.position_encoding, text_source(session)
    )


def answer_from(
    session: SessionState, backend: Backend, method: str, request_params: Any
) -> Callable[[Message], Message]:
    """Converts a backend's response to `method` into the session's encoding."""

    def convert(resp: Message) -> Message:
        if "result" not in resp:
            return resp
        result = convert_result(
            method,
            resp["result"],
            backend.position_encoding,
            session.encoding,
            text_source(session),
            request_params,
        )
        return {**resp, "result": result}

    return convert


def from_server(session: SessionState, backend: Backend, method: str, params: Any) -> Any:
    """A server's notification or request params, in the session's encoding."""
    return convert_notification(
        method, params, backend.position_encoding, session.encoding, text_source(session)
    )


def changes_to(
    session: SessionState, backend: Backend, uri: str, changes: list[Any], old_text: Source
) -> list[Any]:
    """A didChange's changes in the backend's encoding, each against the text before it
    (`old_text`: a str, or the document itself before its update, read line by line)."""
    params = {"textDocument": {"uri": uri}, "contentChanges": changes}

    def text_of(u: str) -> Any:
        return old_text if u == uri else text_source(session)(u)

    out = convert.convert_notification(
        DID_CHANGE, params, session.encoding, backend.position_encoding, text_of
    )
    return list(out["contentChanges"])
