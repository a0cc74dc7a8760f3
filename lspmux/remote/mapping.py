"""Path mapping between the local side (the editor) and the remote side (the servers).

Pure functions over parsed JSON (and `configured_pairs`, which reads the `remote_map` key of the
configuration). A `PathMap` holds ordered (local prefix, remote prefix) pairs — from `--map`,
the configuration, the `--remote` path — and the longest matching prefix wins, in each
direction. What is rewritten, generically over any
message (so that every field the LSP defines, and those of `locate/*` and the agent tools, is
covered without a list to keep up to date):

- every string value that is a `file://` URI under a mapped prefix (rootUri, workspaceFolders,
  textDocument.uri, Location/LocationLink, documentChanges and file operations,
  relatedInformation, RelativePattern.baseUri, code-action and command arguments, ...);
- every dict key that is such a URI (the `changes` of a WorkspaceEdit);
- every string value that is an absolute path under a mapped prefix (rootPath, absolute glob
  patterns of watched-file registrations, paths in command arguments).

Document text is never touched: the values of `text`, `newText` and `insertText` pass as they
are, as do strings that merely contain a path (hover markdown).

Remote files outside every mapped prefix (a crate under ~/.cargo/registry, a stub of the
remote Python) map to a local mirror directory (`fallback`): remote `/usr/lib/x.pyi` becomes
`<fallback>/usr/lib/x.pyi`, which the relay fills with a copy read through the transport, and
the mirror's paths map back to the remote ones when the editor asks about them.

A far message whose bytes hold neither `file:` nor a remote prefix (as JSON may spell it) needs
no rewriting (`may_name_paths`), and the relay forwards its bytes as they are: the far side is
an lspmux daemon, whose encoder escapes neither `/` nor non-ASCII text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote

FILE_SCHEME = "file://"
#: Keys whose values are document text, never rewritten.
CONTENT_KEYS = frozenset({"text", "newText", "insertText"})


class MapError(ValueError):
    """A mapping given on the command line that cannot be used."""


def normalize(prefix: str) -> str:
    """An absolute prefix without a trailing slash (`/` stays `/`)."""
    if not prefix.startswith("/"):
        raise MapError(f"{prefix!r} is not an absolute path; mappings join absolute paths")
    cleaned = os.path.normpath(prefix)
    return "/" if cleaned in ("/", "//") else cleaned


def parse_map(spec: str) -> tuple[str, str]:
    """`LOCAL=REMOTE` (as given to `--map`) as a normalized pair."""
    local, eq, remote = spec.partition("=")
    if not eq or not local or not remote:
        raise MapError(f"--map {spec!r}: write it as LOCAL=REMOTE, two absolute paths")
    return normalize(local), normalize(remote)


def configured_pairs(root: str) -> list[tuple[str, str]]:
    """The `remote_map` pairs of the configuration (user file, and the project file of `root`
    when trusted). Raises ConfigError (or MapError) naming the file and the key."""
    from pathlib import Path

    from lspmux.config.loader import load_config

    config = load_config(Path(root) if os.path.isdir(root) else None)
    where = config.origins.get("remote_map", "the configuration")
    pairs = []
    for spec in config.remote_map:
        try:
            pairs.append(parse_map(spec))
        except MapError as exc:
            raise MapError(f"{where}: remote_map: {exc}") from exc
    return pairs


def under(path: str, prefix: str) -> bool:
    return prefix == "/" or path == prefix or path.startswith(prefix + "/")


def _swap(path: str, old: str, new: str) -> str:
    rest = path[len(old) :] if old != "/" else path[1:]
    if not rest:
        return new
    rest = rest.lstrip("/")
    return new + rest if new.endswith("/") else f"{new}/{rest}"


def uri_path(uri: str) -> str | None:
    """The path of a `file://` URI (None for another scheme or a host part)."""
    if not uri.startswith(FILE_SCHEME):
        return None
    rest = uri[len(FILE_SCHEME) :]
    if not rest.startswith("/"):  # file://host/... : not a path of this machine
        return None
    return unquote(rest.split("#", 1)[0].split("?", 1)[0])


def path_uri(path: str) -> str:
    return FILE_SCHEME + quote(path, safe="/:@!$&'()*+,;=-._~")


class PathMap:
    """Ordered (local, remote) prefix pairs, and where remote files outside them are mirrored."""

    def __init__(self, pairs: Iterable[tuple[str, str]], fallback: str | None = None) -> None:
        self.pairs = [(normalize(a), normalize(b)) for a, b in pairs]
        self.fallback = normalize(fallback) if fallback else None
        # longest first; a stable sort keeps the given order among equal lengths
        self._to_remote = sorted(self.pairs, key=lambda p: -len(p[0]))
        self._to_local = sorted(self.pairs, key=lambda p: -len(p[1]))
        spellings = {b"file:"}
        for _, remote in self.pairs:
            plain = json.dumps(remote, ensure_ascii=False)[1:-1]
            ascii_only = json.dumps(remote)[1:-1]
            for text in (plain, ascii_only):
                spellings |= {text.encode(), text.replace("/", "\\/").encode()}
        self._patterns = sorted(spellings, key=len, reverse=True)

    def __repr__(self) -> str:
        return f"PathMap({self.pairs!r}, fallback={self.fallback!r})"

    # -- one path --------------------------------------------------------------------------

    def remote_path(self, path: str) -> str | None:
        """The remote path of a local one, or None when no pair (nor the mirror) holds it."""
        for local, remote in self._to_remote:
            if under(path, local):
                return _swap(path, local, remote)
        if self.fallback and self.fallback != "/" and under(path, self.fallback):
            return _swap(path, self.fallback, "/")
        return None

    def local_path(self, path: str, *, mirror: bool = False) -> str | None:
        """The local path of a remote one; with `mirror`, a path outside every pair becomes
        one in the mirror directory (when there is one). None: left as it is."""
        for local, remote in self._to_local:
            if under(path, remote):
                return _swap(path, remote, local)
        if mirror and self.fallback:  # normalized: a `..` never leads out of the mirror
            return _swap(os.path.normpath(path), "/", self.fallback)
        return None

    # -- whole messages ----------------------------------------------------------------------

    def may_name_paths(self, body: bytes) -> bool:
        """Whether a far message's bytes may hold something `to_local` rewrites: a file URI,
        or a remote prefix as JSON may spell it (`/`, `\\/`, `\\u00e9`). False is certain."""
        return any(pattern in body for pattern in self._patterns)

    def to_remote(self, value: Any) -> Any:
        """`value` (a parsed message, or any part of one) with local paths made remote."""
        return _walk(value, self._string_to_remote)

    def to_local(self, value: Any, mirrored: set[str] | None = None) -> Any:
        """`value` with remote paths made local; each remote path sent to the mirror is added
        to `mirrored` (the relay copies those files)."""

        def one(s: str) -> str | None:
            return self._string_to_local(s, mirrored)

        return _walk(value, one)

    def _string_to_remote(self, s: str) -> str | None:
        path = uri_path(s)
        if path is not None:
            mapped = self.remote_path(path)
            return None if mapped is None else path_uri(mapped)
        if s.startswith("/") and "\n" not in s:
            return self.remote_path(s)
        return None

    def _string_to_local(self, s: str, mirrored: set[str] | None) -> str | None:
        path = uri_path(s)
        if path is not None:
            mapped = self.local_path(path, mirror=True)
            if mapped is None:
                return None
            if mirrored is not None and self.local_path(path) is None:
                mirrored.add(path)
            return path_uri(mapped)
        if s.startswith("/") and "\n" not in s:
            return self.local_path(s)  # bare paths only under pairs: a "/" may be anything
        return None


def _walk(value: Any, rewrite: Any) -> Any:
    if isinstance(value, str):
        mapped = rewrite(value)
        return value if mapped is None else mapped
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, (str, list, dict)):
                value[i] = _walk(item, rewrite)
        return value
    if isinstance(value, dict):
        renamed = False
        for key, item in value.items():
            if key in CONTENT_KEYS and isinstance(item, str):
                continue
            if isinstance(item, (str, list, dict)):
                value[key] = _walk(item, rewrite)
            if key.startswith(FILE_SCHEME):
                renamed = True
        if renamed:
            out = {}
            for key, item in value.items():
                mapped = rewrite(key) if key.startswith(FILE_SCHEME) else None
                out[key if mapped is None else mapped] = item
            return out
        return value
    return value
