"""LSP glob patterns and the file-watcher registrations of each backend, pure.

A backend asks to hear about files with `client/registerCapability` for
`workspace/didChangeWatchedFiles`; each registration holds `FileSystemWatcher`s: a glob pattern
(a string, or a `RelativePattern` `{baseUri, pattern}`) and a `WatchKind` bitmask (Create=1,
Change=2, Delete=4; 7 when absent). This module compiles the LSP glob syntax (`*`, `**`, `?`,
`{a,b}` nested, `[abc]`, `[!a]`/`[^a]`) to regular expressions, matches paths against watchers,
and keeps the registrations per backend so that one set of file events becomes, per backend,
the ready `workspace/didChangeWatchedFiles` params that backend asked for. The file watcher
(`watch.py`) and the relay to a client that watches itself (`relay.py`) both route through
`Registrations.route`.

Matching rules: a `RelativePattern` matches paths under its base, relative to it. A string
pattern matches the absolute path, or the path relative to one of the workspace roots (so
`**/ruff.toml` and `src/*.py` both work as editors make them work).
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

from lspmux.uris import NotAFileURI, file_path, path_to_uri, uri_to_path

K = TypeVar("K")
log = logging.getLogger(__name__)


class WatchKind(enum.IntFlag):
    """The kinds of event a watcher asks for (LSP `WatchKind`)."""

    CREATE = 1
    CHANGE = 2
    DELETE = 4
    ALL = 7


class FileChangeType(enum.IntEnum):
    """The `type` of a `FileEvent` (LSP `FileChangeType`)."""

    CREATED = 1
    CHANGED = 2
    DELETED = 3


_KIND_OF: dict[int, WatchKind] = {
    FileChangeType.CREATED: WatchKind.CREATE,
    FileChangeType.CHANGED: WatchKind.CHANGE,
    FileChangeType.DELETED: WatchKind.DELETE,
}


class GlobError(ValueError):
    """A glob pattern that cannot be compiled (an unclosed `{` or `[`)."""


def _translate(pattern: str, i: int, in_brace: bool) -> tuple[str, int]:
    """Regex for `pattern[i:]` up to the end (or, inside braces, the closing `}` or a `,`);
    returns the regex and the index where it stopped."""
    out: list[str] = []
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if in_brace and c in ",}":
            return "".join(out), i
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                at_start = i == 0 or pattern[i - 1] == "/"
                if at_start and pattern.startswith("/", j):
                    out.append("(?:[^/]*/)*")  # `**/`: any number of whole segments
                    i = j + 1
                    continue
                if at_start and j == n:
                    out.append(".*")  # trailing `**`: everything below
                    i = j
                    continue
                out.append("[^/]*")  # `**` inside a segment is a `*`
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if j < 0:
                raise GlobError(f"glob {pattern!r}: '[' at {i} is never closed")
            body = pattern[i + 1 : j]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            for special in "\\^[]":
                body = body.replace(special, "\\" + special)
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = j
        elif c == "{":
            alternatives: list[str] = []
            j = i + 1
            while True:
                alt, j = _translate(pattern, j, True)
                alternatives.append(alt)
                if j >= n:
                    raise GlobError(f"glob {pattern!r}: '{{' at {i} is never closed")
                if pattern[j] == "}":
                    break
                j += 1  # past the ','
            out.append("(?:" + "|".join(alternatives) + ")")
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out), i


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The compiled regex of an LSP glob pattern (matches a whole '/'-separated path)."""
    body, _ = _translate(pattern, 0, False)
    return re.compile(body + r"\Z", re.DOTALL)


def glob_match(pattern: str, path: str) -> bool:
    """Does `path` ('/'-separated) match the LSP glob `pattern` as a whole?"""
    return compile_glob(pattern).match(path) is not None


def _relative(path: str, base: str) -> str | None:
    if base == "/":
        return path.lstrip("/")
    if path.startswith(base + "/"):
        return path[len(base) + 1 :]
    return None


@dataclass(frozen=True)
class Watcher:
    """One `FileSystemWatcher`: a glob, the base it is relative to (None: a string pattern)
    and the kinds of event wanted."""

    pattern: str
    base: str | None = None
    kind: WatchKind = WatchKind.ALL

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Watcher:
        """From a `FileSystemWatcher` dict; `baseUri` may be a URI or a `WorkspaceFolder`."""
        glob = raw.get("globPattern")
        kind = WatchKind(int(raw.get("kind") or WatchKind.ALL) & WatchKind.ALL)
        if isinstance(glob, str):
            compile_glob(glob)
            return cls(glob, None, kind)
        if isinstance(glob, Mapping) and isinstance(glob.get("pattern"), str):
            base = glob.get("baseUri")
            if isinstance(base, Mapping):
                base = base.get("uri")
            if not isinstance(base, str):
                raise GlobError(f"RelativePattern {dict(glob)!r}: baseUri is not a URI")
            compile_glob(glob["pattern"])
            try:
                return cls(glob["pattern"], uri_to_path(base), kind)
            except NotAFileURI as exc:
                raise GlobError(f"RelativePattern {dict(glob)!r}: {exc}") from None
        raise GlobError(
            f"FileSystemWatcher {dict(raw)!r}: globPattern is neither a string nor a RelativePattern"
        )

    def matches(self, path: str, roots: Sequence[str] = ()) -> bool:
        """Does the absolute `path` match (kinds aside)?"""
        if self.base is not None:
            rel = _relative(path, self.base)
            return rel is not None and glob_match(self.pattern, rel)
        if glob_match(self.pattern, path):
            return True
        for root in roots:
            rel = _relative(path, root)
            if rel is not None and glob_match(self.pattern, rel):
                return True
        return False

    def wants(self, path: str, change: int, roots: Sequence[str] = ()) -> bool:
        """Does this watcher ask for a `change` (FileChangeType) of `path`?"""
        return bool(self.kind & _KIND_OF.get(change, 0)) and self.matches(path, roots)


def parse_watchers(
    register_options: Mapping[str, Any] | None, owner: object = "?"
) -> list[Watcher]:
    """The watchers of `DidChangeWatchedFilesRegistrationOptions`; a watcher that cannot be
    understood is logged (naming `owner`, the backend) and skipped, the others kept."""
    raw = (register_options or {}).get("watchers") or []
    out = []
    for w in raw if isinstance(raw, list) else []:
        try:
            out.append(Watcher.parse(w if isinstance(w, Mapping) else {"globPattern": w}))
        except (GlobError, ValueError) as exc:
            log.warning("%s: file watcher %r skipped: %s", owner, w, exc)
    return out


def file_events(events: Iterable[tuple[str, int]]) -> list[dict[str, Any]]:
    """`FileEvent`s for (path, change type) pairs, one per path (the last wins), sorted."""
    latest: dict[str, int] = {}
    for path, change in events:
        latest[path] = int(change)
    return [{"uri": path_to_uri(p), "type": latest[p]} for p in sorted(latest)]


def events_of(params: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(path, FileChangeType) pairs of `didChangeWatchedFiles` params (the inverse of
    `file_events`); malformed entries are skipped."""
    return [
        (path, int(c["type"]))
        for c in params.get("changes") or []
        if isinstance(c, Mapping) and "uri" in c and "type" in c
        for path in [file_path(str(c["uri"]))]
        if path is not None
    ]


class Registrations(Generic[K]):
    """Watched-file registrations per backend (any hashable key), by registration id."""

    def __init__(self) -> None:
        self._by_backend: dict[K, dict[str, list[Watcher]]] = {}

    def register(
        self, backend: K, registration_id: str, register_options: Mapping[str, Any] | None
    ) -> list[Watcher]:
        """Record (or replace) one registration (bad watchers in it are logged and skipped)."""
        watchers = parse_watchers(register_options, backend)
        self._by_backend.setdefault(backend, {})[registration_id] = watchers
        return watchers

    def unregister(self, backend: K, registration_id: str) -> bool:
        regs = self._by_backend.get(backend)
        if regs is None or registration_id not in regs:
            return False
        del regs[registration_id]
        if not regs:
            del self._by_backend[backend]
        return True

    def forget(self, backend: K) -> list[str]:
        """Drop every registration of a backend (it stopped); returns their ids."""
        return list(self._by_backend.pop(backend, {}))

    def watchers(self, backend: K | None = None) -> list[Watcher]:
        if backend is not None:
            return [w for ws in self._by_backend.get(backend, {}).values() for w in ws]
        return [w for regs in self._by_backend.values() for ws in regs.values() for w in ws]

    def backends(self) -> list[K]:
        return list(self._by_backend)

    def __bool__(self) -> bool:
        return bool(self._by_backend)

    def names(self, name: str) -> bool:
        """Does any registered pattern spell `name` (e.g. 'node_modules')?"""
        return any(name in w.pattern for w in self.watchers())

    def route(
        self, events: Iterable[tuple[str, int]], roots: Sequence[str] = ()
    ) -> dict[K, dict[str, Any]]:
        """Per backend, the `workspace/didChangeWatchedFiles` params of the events (absolute
        path, FileChangeType) its watchers ask for; backends that want none are left out."""
        events = list(events)
        out: dict[K, dict[str, Any]] = {}
        for backend in self._by_backend:
            watchers = self.watchers(backend)
            wanted = [(p, c) for p, c in events if any(w.wants(p, c, roots) for w in watchers)]
            if wanted:
                out[backend] = {"changes": file_events(wanted)}
        return out
