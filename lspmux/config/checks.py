"""Checking one configuration document: which keys exist, each value's checker, and the
errors for unknown keys ("did you mean …?").

The keys are not listed here: each is a field of `lspmux.config.model`'s `Config`,
`ServerConfig` or `LinterConfig` whose metadata names its checker (`checkers.key`).
`SERVER_KEYS`, `LINTER_KEYS` and `GLOBAL_KEYS` are derived from those fields, as are
`DEEP_MERGED` (merged as nested tables) and `EXECUTABLE_KEYS` / `EXECUTABLE_GLOBALS` (what an
untrusted project file may not set); docs/configuration.md is tested against them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lspmux.config.checkers import (
    CHECK,
    DEEP_MERGE,
    EXECUTABLE,
    Checker,
    ConfigError,
    _describe,
    _hint,
    _server_name,
    _Where,
)
from lspmux.config.model import Config, LinterConfig, ServerConfig

__all__ = [
    "DEEP_MERGED",
    "EXECUTABLE_GLOBALS",
    "EXECUTABLE_KEYS",
    "GLOBAL_KEYS",
    "LINTER_KEYS",
    "SERVER_KEYS",
    "ConfigError",
    "check_document",
]


def _keys(cls: type[Any], flag: str | None = None) -> dict[str, Checker]:
    """The configuration keys of a model class (its fields with a checker), in field order;
    with `flag`, only those whose metadata sets it."""
    return {
        f.name: f.metadata[CHECK]
        for f in dataclasses.fields(cls)
        if CHECK in f.metadata and (flag is None or f.metadata[flag])
    }


#: Every key a `[servers.NAME]` table may hold.
SERVER_KEYS: dict[str, Checker] = _keys(ServerConfig)
#: Every key a `[linters.NAME]` table may hold.
LINTER_KEYS: dict[str, Checker] = _keys(LinterConfig)
#: Top-level keys (besides the `servers` and `linters` tables).
GLOBAL_KEYS: dict[str, Checker] = _keys(Config)

SECTIONS: dict[str, dict[str, Checker]] = {"servers": SERVER_KEYS, "linters": LINTER_KEYS}

#: Keys of a server or linter whose values are merged as nested tables rather than replaced.
DEEP_MERGED: frozenset[str] = frozenset(
    [*_keys(ServerConfig, DEEP_MERGE), *_keys(LinterConfig, DEEP_MERGE)]
)
#: Keys of a server or linter an untrusted project file may not set.
EXECUTABLE_KEYS: frozenset[str] = frozenset(
    [*_keys(ServerConfig, EXECUTABLE), *_keys(LinterConfig, EXECUTABLE)]
)
#: Global keys an untrusted project file may not set.
EXECUTABLE_GLOBALS: frozenset[str] = frozenset(_keys(Config, EXECUTABLE))


@dataclass
class Layer:
    """One file's validated values: global keys, and per server/linter the keys it sets."""

    where: _Where
    label: str
    globals: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {"servers": {}, "linters": {}}
    )


def _check_keys(table: Mapping[str, Any], known: Sequence[str], where: _Where) -> None:
    for key in table:
        if key not in known:
            where.child(key).fail(
                f"unknown key{_hint(key, known)}", "one of: " + ", ".join(sorted(known))
            )


def check_document(doc: Mapping[str, Any], where: _Where, label: str) -> Layer:
    """A parsed file's values, each checked and normalised; ConfigError at the first bad one."""
    layer = Layer(where, label)
    _check_keys(doc, [*GLOBAL_KEYS, *SECTIONS], where)
    for key, check in GLOBAL_KEYS.items():
        if key in doc:
            layer.globals[key] = check(doc[key], where.child(key))
    for section, schema in SECTIONS.items():
        if section not in doc:
            continue
        at = where.child(section)
        entries = doc[section]
        if not isinstance(entries, dict):
            at.fail(f"found {_describe(entries)}", f"a table of {section}, e.g. [{section}.NAME]")
        for name, entry in entries.items():
            entry_at = at.child(name)
            _server_name(name, entry_at)
            if not isinstance(entry, dict):
                entry_at.fail(f"found {_describe(entry)}", f"a table: [{section}.{name}]")
            _check_keys(entry, list(schema), entry_at)
            layer.sections[section][name] = {
                key: schema[key](value, entry_at.child(key)) for key, value in entry.items()
            }
    return layer
