"""Merging configuration layers: later files win, key by key, with each value's origin.

Merging is per server and per linter, key by key: the keys whose model field says
`deep_merge` (`settings`, `initialization_options`, `env`, `json`, `options`, `untrusted`) are
merged as nested tables, every other value (lists included) replaces the earlier one. Every
dotted key remembers the file it came from, for `lspmux config` and for error messages.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lspmux.config.checkers import _join
from lspmux.config.checks import DEEP_MERGED, Layer


def _drop_origins(origins: dict[str, str], key: str) -> None:
    for stale in [k for k in origins if k == key or k.startswith(key + ".")]:
        del origins[stale]


def _record(origins: dict[str, str], key: str, value: Any, label: str) -> None:
    """Say that `value` (and, for a table, every leaf inside it) at `key` came from `label`."""
    origins[key] = label
    if isinstance(value, dict):
        for k, v in value.items():
            _record(origins, _join(key, k), v, label)


def _deep_merge(
    base: dict[str, Any], update: Mapping[str, Any], key: str, label: str, origins: dict[str, str]
) -> dict[str, Any]:
    merged = dict(base)
    origins[key] = label
    for k, v in update.items():
        sub = _join(key, k)
        if isinstance(v, dict) and isinstance(merged.get(k), dict):
            merged[k] = _deep_merge(merged[k], v, sub, label, origins)
        else:
            merged[k] = copy.deepcopy(v)
            _drop_origins(origins, sub)
            _record(origins, sub, v, label)
    return merged


@dataclass
class State:
    """The merge so far: global values, entries in first-definition order, and origins."""

    globals: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {"servers": {}, "linters": {}}
    )
    origins: dict[str, str] = field(default_factory=dict)
    #: The file (for error messages) that first defined each entry, by dotted key.
    defined_in: dict[str, str] = field(default_factory=dict)
    #: The file (for error messages) behind each dotted key's current value.
    files_of: dict[str, str] = field(default_factory=dict)


def merge(state: State, layer: Layer) -> None:
    set_by = layer.where.file
    for key, value in layer.globals.items():
        state.globals[key] = value
        state.origins[key] = layer.label
        state.files_of[key] = set_by
    for section, entries in layer.sections.items():
        for name, values in entries.items():
            prefix = _join(section, name)
            target = state.sections[section].setdefault(name, {})
            if prefix not in state.defined_in:
                state.defined_in[prefix] = layer.where.file
                state.origins[prefix] = layer.label
            for key, value in values.items():
                dotted = _join(prefix, key)
                state.files_of[dotted] = set_by
                if key in DEEP_MERGED and isinstance(target.get(key), dict):
                    target[key] = _deep_merge(
                        target[key], value, dotted, layer.label, state.origins
                    )
                else:
                    target[key] = copy.deepcopy(value)
                    _record(state.origins, dotted, value, layer.label)
