"""Reading folders and manifests for the root rules, cached by modification time.

A `Reader` lists folders and parses manifests (TOML, JSON, text) for one root computation and
keeps the stamp (mtime, size) of everything it looked at, so the caller can reuse its result
while every stamp is unchanged; parsed manifests are cached across computations the same way.
Also the path helpers the rules share: walking upwards, lexical normalisation, and glob
patterns over relative paths (`**` spans components) as cargo and the JS tools use them.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Iterator, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

#: A manifest's content, or None when it is missing or cannot be parsed.
Parsed = dict[str, Any] | None

#: How many results and parsed manifests are kept before the caches start over.
CACHE_LIMIT = 4096


class Reader:
    """The folders and manifests one computation looked at, each with the stamp it had: a
    cached result is good while every stamp is unchanged."""

    def __init__(self) -> None:
        self.stamps: dict[str, tuple[int, int] | None] = {}
        self._listed: dict[str, frozenset[str]] = {}

    def names(self, folder: Path) -> frozenset[str]:
        """The entries of `folder` (empty when it cannot be listed), listed once."""
        key = str(folder)
        names = self._listed.get(key)
        if names is None:
            self.stamps[key] = stamp(key)
            try:
                names = frozenset(os.listdir(key)) if self.stamps[key] is not None else frozenset()
            except OSError:
                names = frozenset()
            self._listed[key] = names
        return names

    def has(self, folder: Path, marker: str) -> bool:
        names = self.names(folder)
        if any(c in marker for c in "*?["):
            return any(fnmatchcase(n, marker) for n in names)
        return marker in names

    def nearest(self, start: Path, markers: Sequence[str], stop: Path | None = None) -> Path | None:
        """The nearest folder from `start` upwards holding one of `markers`, not above `stop`."""
        for folder in upwards(start, stop):
            if any(self.has(folder, m) for m in markers):
                return folder
        return None

    def parsed(self, path: Path, kind: str) -> Parsed:
        """The manifest at `path` parsed as `kind` ("toml", "json", or "text": `{"text": ...}`),
        None when it is missing or broken."""
        key = str(path)
        now = self.stamps[key] = stamp(key)
        if now is None:
            return None
        cached = _PARSED.get((key, kind))
        if cached is not None and cached[0] == now:
            return cached[1]
        try:
            with open(key, "rb") as f:
                value = _PARSERS[kind](f.read())
        except (OSError, ValueError):  # tomllib's and json's errors are ValueErrors
            value = None
        if len(_PARSED) >= CACHE_LIMIT:
            _PARSED.clear()
        _PARSED[(key, kind)] = (now, value)
        return value


def stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _parse_toml(data: bytes) -> Parsed:
    return tomllib.loads(data.decode("utf-8"))


def _parse_json(data: bytes) -> Parsed:
    value = json.loads(data)
    return value if isinstance(value, dict) else None


_PARSERS: dict[str, Callable[[bytes], Parsed]] = {
    "toml": _parse_toml,
    "json": _parse_json,
    "text": lambda data: {"text": data.decode("utf-8", "replace")},
}
_PARSED: dict[tuple[str, str], tuple[tuple[int, int], Parsed]] = {}


def upwards(start: Path, stop: Path | None = None) -> Iterator[Path]:
    yield start
    if start == stop:
        return
    for folder in start.parents:
        yield folder
        if folder == stop:
            return


def inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def normal(path: Path) -> Path:
    """`path` absolute with `.` and `..` resolved lexically (as cargo and go do)."""
    return Path(os.path.normpath(os.path.abspath(path)))


# -- glob patterns over relative paths ----------------------------------------------------------


def _match(parts: Sequence[str], pattern: Sequence[str]) -> bool:
    """Whether the path components `parts` match the glob's components (`**` spans any number
    of components, other wildcards stay inside one)."""
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_match(parts[i:], pattern[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _match(parts[1:], pattern[1:])


def pattern_parts(pattern: str) -> list[str]:
    return [p for p in pattern.replace("\\", "/").split("/") if p and p != "."]


def matches(root: Path, folder: Path, pattern: str) -> bool:
    if not inside(folder, root):
        return False
    parts = folder.relative_to(root).parts
    return _match(parts, pattern_parts(pattern))


def clear_parsed() -> None:
    """Forget every parsed manifest (tests; a cached one is re-checked anyway)."""
    _PARSED.clear()
