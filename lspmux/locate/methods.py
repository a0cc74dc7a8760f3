"""The LSP method layer of Locate: `locate/resolve`, `locate/resolveRange`, `locate/describe`,
and `locate` inside ordinary requests — over a `LocateHost`, never a session or a backend.

This module reads the request params, finds the document (the host's open text, else the
file on disk, read only inside a workspace root), asks the host for document symbols when a
symbol is involved, runs the pure engine, and shapes the answer: LSP-native positions in the
host's encoding plus a human `label` (`path:line:col`, 1-based, columns in code points).
Errors are `InvalidParams` for a malformed request and `RequestFailed` for a file, symbol or
find that is not there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from lspmux.errors import RequestFailed
from lspmux.locate.describe import describe_offset
from lspmux.locate.engine import Resolution, resolve_spec, starts_of
from lspmux.locate.markers import Want
from lspmux.locate.spec import Target, invalid, target_from_json
from lspmux.locate.syntax import format_locate, parse_locate
from lspmux.text import Encoding, offset_to_position, position_to_offset, to_position
from lspmux.uris import file_path


class LocateHost(Protocol):
    """What Locate needs from the proxy (the Session implements it)."""

    encoding: Encoding

    def workspace_roots(self) -> list[Path]: ...

    def document_text(self, uri: str) -> tuple[str, int | None] | None:
        """(text, version) of an open document, else None (Locate then reads the disk)."""
        ...

    async def document_symbols(
        self, uri: str, text: str, version: int | None
    ) -> list[dict[str, Any]] | None:
        """textDocument/documentSymbol from the file's backends; None when none offers it."""
        ...


@dataclass(frozen=True, slots=True)
class _Doc:
    uri: str
    path: Path | None  # None for a non-file URI
    text: str
    version: int | None
    starts: list[int]


_DISK: dict[str, tuple[int, int, str]] = {}  # path → (mtime_ns, size, text)
_DISK_SIZE = 8


def _read(path: Path) -> str:
    """A file's text as UTF-8 (errors replaced, line breaks kept), cached by mtime and size."""
    st = path.stat()
    key = str(path)
    hit = _DISK.get(key)
    if hit is not None and hit[:2] == (st.st_mtime_ns, st.st_size):
        return hit[2]
    text = path.read_bytes().decode("utf-8", errors="replace")
    if len(_DISK) >= _DISK_SIZE:
        _DISK.pop(next(iter(_DISK)))
    _DISK[key] = (st.st_mtime_ns, st.st_size, text)
    return text


def _roots(host: LocateHost) -> list[Path]:
    return [Path(r).resolve() for r in host.workspace_roots()]


def _root_of(path: Path, roots: list[Path]) -> Path | None:
    real = path.resolve()
    return next((r for r in roots if real.is_relative_to(r)), None)


def _absolute(file_path: str, roots: list[Path]) -> Path | None:
    p = Path(file_path)
    if not p.is_absolute():
        if not roots:
            return None
        p = roots[0] / p
    return Path(os.path.normpath(p))


def _open_text(host: LocateHost, path: Path) -> tuple[str, tuple[str, int | None] | None]:
    """The URI under which `path` is open (if it is) and its (text, version)."""
    for uri in dict.fromkeys([path.as_uri(), path.resolve().as_uri()]):
        doc = host.document_text(uri)
        if doc is not None:
            return uri, doc
    return path.as_uri(), None


def _doc(uri: str, path: Path | None, text: str, version: int | None) -> _Doc:
    return _Doc(uri, path, text, version, starts_of(text))


def _load_path(host: LocateHost, file_path: str) -> _Doc:
    roots = _roots(host)
    path = _absolute(file_path, roots)
    data = {"file_path": file_path, "workspace_roots": [str(r) for r in roots]}
    if path is None:
        raise RequestFailed(
            f"cannot resolve the relative path {file_path!r}: there is no workspace root; "
            "give an absolute path",
            data=data,
        )
    if _root_of(path, roots) is None:
        raise RequestFailed(
            f"{file_path!r} lies outside the workspace ({', '.join(map(str, roots)) or 'none'}); "
            "give a path inside a workspace root",
            data=data,
        )
    uri, doc = _open_text(host, path)
    if doc is not None:
        return _doc(uri, path, doc[0], doc[1])
    if not path.is_file():
        where = f" (relative paths start at {roots[0]})" if roots else ""
        raise RequestFailed(f"file not found: {file_path!r}{where}", data=data)
    return _doc(uri, path, _read(path), None)


def _load_uri(host: LocateHost, uri: str) -> _Doc:
    found = file_path(uri)  # None: a document of another scheme (untitled:, …)
    path = Path(found) if found is not None else None
    doc = host.document_text(uri)
    if doc is not None:
        return _doc(uri, path, doc[0], doc[1])
    roots = _roots(host)
    data = {"uri": uri, "workspace_roots": [str(r) for r in roots]}
    if path is None:
        raise RequestFailed(f"{uri} is not open and is not a file: URI", data=data)
    if _root_of(path, roots) is None:
        raise RequestFailed(
            f"{uri} is not open and lies outside the workspace; open it or give a file inside "
            "a workspace root",
            data=data,
        )
    if not path.is_file():
        raise RequestFailed(f"file not found: {uri}", data=data)
    return _doc(uri, path, _read(path), None)


def _exists(host: LocateHost) -> Callable[[str], bool]:
    roots = _roots(host)

    def exists(file_path: str) -> bool:
        path = _absolute(file_path, roots)
        if path is None or _root_of(path, roots) is None:
            return False
        return _open_text(host, path)[1] is not None or path.is_file()

    return exists


def _target(host: LocateHost, params: Any, fallback_uri: str | None = None) -> tuple[Target, _Doc]:
    if not isinstance(params, Mapping):
        raise invalid("params must be an object with a 'locate' member")
    loc = params.get("locate")
    if isinstance(loc, str):
        target = parse_locate(loc, _exists(host))
    elif isinstance(loc, Mapping):
        target = target_from_json(loc)
    elif loc is None:
        raise invalid("missing 'locate'")
    else:
        raise invalid(f"bad locate {loc!r}: give a string or an object")
    if target.uri is not None:
        return target, _load_uri(host, target.uri)
    if target.file_path is not None:
        return target, _load_path(host, target.file_path)
    if fallback_uri is not None:
        return target, _load_uri(host, fallback_uri)
    raise invalid("locate names no file: give file_path or uri")


def _line_col(doc: _Doc, offset: int) -> str:
    """1-based `line:col`, the column in code points."""
    line, col = offset_to_position(doc.text, doc.starts, offset, "utf-32")
    return f"{line + 1}:{col + 1}"


def _label(host: LocateHost, doc: _Doc, start: int, end: int | None = None) -> str:
    """`path:line:col` (or `path:line:col-line:col` for a range) for humans and the CLI."""
    where = _line_col(doc, start) + (f"-{_line_col(doc, end)}" if end is not None else "")
    return f"{_display_path(host, doc, relative_to_any=True)}:{where}"


def _display_path(host: LocateHost, doc: _Doc, *, relative_to_any: bool) -> str:
    """The path relative to the (first, or any) workspace root it lies in, else absolute;
    the URI itself for a non-file document."""
    if doc.path is None:
        return doc.uri
    roots = _roots(host)
    real = doc.path.resolve()
    for root in roots if relative_to_any else roots[:1]:
        if real.is_relative_to(root):
            return real.relative_to(root).as_posix()
    return str(doc.path)


async def _symbols(host: LocateHost, doc: _Doc) -> list[dict[str, Any]] | None:
    return await host.document_symbols(doc.uri, doc.text, doc.version)


def _request_uri(params: Any) -> str | None:
    td = params.get("textDocument") if isinstance(params, Mapping) else None
    uri = td.get("uri") if isinstance(td, Mapping) else None
    return uri if isinstance(uri, str) else None


async def _resolve(host: LocateHost, params: Any, want: Want) -> tuple[_Doc, Resolution]:
    target, doc = _target(host, params, _request_uri(params))
    symbols = await _symbols(host, doc) if target.spec.scope.kind == "symbol" else None
    res = resolve_spec(doc.text, doc.starts, symbols, target.spec, host.encoding, want=want)
    return doc, res


def _answer(host: LocateHost, doc: _Doc, res: Resolution) -> dict[str, Any]:
    out: dict[str, Any] = {"uri": doc.uri}
    out.update(res.to_lsp(doc.text, doc.starts, host.encoding))
    out["label"] = _label(host, doc, res.start, res.end if res.want == "range" else None)
    return out


async def resolve(host: LocateHost, params: dict[str, Any]) -> dict[str, Any]:
    """locate/resolve: `{"locate": STRING | {...}}` → uri, position, match, scope, label."""
    doc, res = await _resolve(host, params, "position")
    return _answer(host, doc, res)


async def resolve_range(host: LocateHost, params: dict[str, Any]) -> dict[str, Any]:
    """locate/resolveRange: like resolve, with `range` instead of `position`."""
    doc, res = await _resolve(host, params, "range")
    return _answer(host, doc, res)


def _position_param(params: Mapping[str, Any]) -> tuple[str, int, int]:
    td, pos = params.get("textDocument"), params.get("position")
    uri = td.get("uri") if isinstance(td, Mapping) else None
    line = pos.get("line") if isinstance(pos, Mapping) else None
    character = pos.get("character") if isinstance(pos, Mapping) else None
    if not isinstance(uri, str) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (line, character)
    ):
        raise invalid(
            'locate/describe takes {"textDocument": {"uri": URI}, "position": {"line": N, '
            '"character": N}} (0-based, in the session\'s position encoding)'
        )
    assert isinstance(line, int) and isinstance(character, int)
    return uri, line, character


async def describe(host: LocateHost, params: dict[str, Any]) -> dict[str, Any]:
    """locate/describe: textDocument + position → the shortest `locate` string and spec that
    resolve back to it (plus the position they resolve to, and its label)."""
    uri, line, character = _position_param(params)
    doc = _load_uri(host, uri)
    offset = position_to_offset(doc.text, doc.starts, line, character, host.encoding)
    symbols = await _symbols(host, doc)
    desc = describe_offset(doc.text, doc.starts, symbols, offset, host.encoding)
    spec: dict[str, Any] = {}
    if doc.path is not None and _root_of(doc.path, _roots(host)) is not None:
        file = _display_path(host, doc, relative_to_any=False)
        spec["file_path"] = file
    else:
        file = str(doc.path) if doc.path is not None else doc.uri
        spec["uri"] = doc.uri
    spec.update(desc.spec.to_json())
    return {
        "locate": format_locate(file, desc.spec),
        "spec": spec,
        "position": to_position(doc.text, doc.starts, desc.offset, host.encoding),
        "exact": desc.exact,
        "label": _label(host, doc, desc.offset),
    }


async def rewrite_params(
    host: LocateHost, params: dict[str, Any], *, wants: Literal["position", "range"]
) -> dict[str, Any]:
    """Params of an ordinary request that carry `locate` instead of textDocument + position
    (or range) → the same params with those filled in and `locate` removed. A `locate` object
    without a file applies to the request's `textDocument`."""
    if "locate" not in params:
        return params
    if wants in params:
        raise invalid(f"give either locate or {wants}, not both")
    td = params.get("textDocument")
    doc, res = await _resolve(host, params, wants)
    out = {k: v for k, v in params.items() if k != "locate"}
    out["textDocument"] = {**(td if isinstance(td, Mapping) else {}), "uri": doc.uri}
    lsp = res.to_lsp(doc.text, doc.starts, host.encoding)
    out[wants] = lsp[wants]
    return out
