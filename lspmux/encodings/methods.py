"""Converting whole messages between position encodings, by the shape of each side.

Which shape a method's params and result have (see `shapes.py`) is a fact of its route: each
family declares `params_shape` / `result_shape` on the routes it owns (`lspmux/session/families`,
assembled by `routing/table.py`), and `session/positions.py` looks them up. The entry points run
a shape with the document the positions refer to; a shape of None means "holds no positions":

- `convert_params(shape, params, src, dst, text_of, uri=None)`: a request's params, in either
  direction (client→backend requests; backend→client requests such as `workspace/applyEdit`).
- `convert_notification(shape, params, ...)`: the same for notifications (`didChange`, whose
  incremental ranges are converted change by change against the text *before* the
  notification — so call it before applying the change to the documents you keep —, and
  `publishDiagnostics`).
- `convert_result(shape, result, src, dst, text_of, request_params, uri=None)`: a response,
  whose bare positions (a Hover's range) are in the request's document.

The document of bare positions is `uri` when given, else the params' `textDocument.uri` (or the
hierarchy `item.uri`). Resolve requests (`completionItem/resolve`, `codeAction/resolve`,
`inlayHint/resolve`, ...) carry no document: pass `uri=` the document the item came from, or
their bare positions are left as they are (and logged).

A method no route knows is walked generically (`shapes.ANY_POSITIONS`): every dict shaped like
a Position is converted in the document named by the nearest enclosing
`uri`/`textDocument`/`targetUri`, else the request's. Chosen over leaving them untouched because
an unconverted position is always wrong when the encodings differ, while a look-alike that is not
a position is rare. `workspace/executeCommand` arguments are opaque and never converted.
"""

from __future__ import annotations

from typing import Any

from lspmux.encodings.lines import Converter, TextOf
from lspmux.encodings.shapes import Shape, context_uri
from lspmux.text import Encoding


def convert_params(
    shape: Shape | None,
    params: Any,
    src: Encoding,
    dst: Encoding,
    text_of: TextOf,
    *,
    uri: str | None = None,
) -> Any:
    """`params` of a request (or notification) of this `shape` with its positions from `src`
    to `dst`."""
    if src == dst or shape is None or params is None:
        return params
    return shape(Converter(src, dst, text_of), params, uri or context_uri(params))


convert_notification = convert_params


def convert_result(
    shape: Shape | None,
    result: Any,
    src: Encoding,
    dst: Encoding,
    text_of: TextOf,
    request_params: Any = None,
    *,
    uri: str | None = None,
) -> Any:
    """The `result` of this `shape` with its positions from `src` to `dst`; bare positions are
    in the document of `request_params` (or `uri`)."""
    if src == dst or shape is None or result is None:
        return result
    return shape(Converter(src, dst, text_of), result, uri or context_uri(request_params))
