"""A JSON Schema of `lspmux.toml`, generated from the configuration model (`lspmux config
--schema`): TOML editors (taplo, Even Better TOML) complete and check keys with it.

The keys are those the loader accepts (`checks.SERVER_KEYS`, `LINTER_KEYS`, `GLOBAL_KEYS`),
their types come from the fields of `ServerConfig`, `LinterConfig` and `Config`, the
allowed words from the same tuples the checks use, and each key's description from its row in
docs/configuration.md (shipped with the package). The checks stay the authority: the schema
says less than they do (no file-type or regex syntax), never something else. A copy lives in
config/lspmux.schema.json (a test keeps it equal to this).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from lspmux.config.checkers import CLIENT_SETTABLE, PROJECT_CHECK_FORMATS
from lspmux.config.checks import GLOBAL_KEYS, LINTER_KEYS, SERVER_KEYS
from lspmux.config.linter_checks import COLUMN_UNITS, LINTER_FORMATS, RUN_ON
from lspmux.config.model import Config, LinterConfig, ServerConfig
from lspmux.workspace.roots import ROOT_RULES

DOC = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
SCHEMA_ID = "https://json-schema.org/draft/2020-12/schema"

_STRINGS = {"type": "array", "items": {"type": "string"}}
#: A field's annotation (as the dataclass keeps it, a string) → its JSON Schema.
_BY_TYPE: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "str | None": {"type": "string"},
    "float": {"type": "number"},
    "float | None": {"type": "number"},
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
    "tuple[str, ...]": _STRINGS,
    "tuple[str, ...] | None": _STRINGS,
    "tuple[int, ...]": {"type": "array", "items": {"type": "integer"}},
    "Mapping[str, str]": {"type": "object", "additionalProperties": {"type": "string"}},
    "Mapping[str, Any]": {"type": "object"},
    "Mapping[str, Any] | None": {"type": "object"},
}
#: Keys whose values are words from a list, or that take more than their field's type.
_SPECIAL: dict[str, dict[str, Any]] = {
    "role": {"enum": ["server", "linter"]},
    "root_rule": {"enum": list(ROOT_RULES)},
    "project_check_format": {"enum": list(PROJECT_CHECK_FORMATS)},
    "format": {"enum": list(LINTER_FORMATS)},
    "input": {"enum": ["stdin", "file"]},
    "run_on": {"type": "array", "items": {"enum": list(RUN_ON)}},
    "client_may_set": {"type": "array", "items": {"enum": list(CLIENT_SETTABLE)}},
    "package": {"anyOf": [{"type": "string"}, _STRINGS]},
    "instance_timeout": {"anyOf": [{"type": "number", "minimum": 0}, {"const": False}]},
    # the Rust lspmux's ["127.0.0.1", 27631] or a socket path, or unix:PATH / tcp:HOST:PORT
    "listen": {"type": ["string", "array"]},
    "connect": {"type": ["string", "array"]},
    "max_message_size": {"type": "integer", "minimum": 1024},
}
_UNITS = {"column_unit": {"enum": list(COLUMN_UNITS)}}


def _field_types(cls: type) -> dict[str, str]:
    return {f.name: str(f.type) for f in dataclasses.fields(cls)}


def _descriptions(doc: str) -> dict[str, dict[str, str]]:
    """Key → description, per section ("global", "servers", "linters") of the doc's tables."""
    found: dict[str, dict[str, str]] = {"global": {}, "servers": {}, "linters": {}}
    section = None
    for line in doc.splitlines():
        if line.startswith("## "):
            section = (
                "global"
                if line.startswith("## Global keys")
                else "servers"
                if line.startswith("## Server keys")
                else "linters"
                if line.startswith("## Linter keys")
                else None
            )
        elif section and (row := re.match(r"^\| `([a-z_]+)` \| (.*?) \| (.*?) \| (.*) \|$", line)):
            found[section].setdefault(row[1], re.sub(r"\[([^]]+)\]\([^)]+\)", r"\1", row[4]))
    return found


def _properties(
    keys: dict[str, Any], types: dict[str, str], described: dict[str, str]
) -> dict[str, Any]:
    props = {}
    for key in keys:
        schema = dict(_SPECIAL.get(key) or _BY_TYPE.get(types.get(key, ""), {}))
        if key in described:
            schema["description"] = described[key]
        props[key] = schema
    return props


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a configuration file."""
    try:
        described = _descriptions(DOC.read_text(encoding="utf-8"))
    except OSError:  # an install without the docs: the schema without descriptions
        described = {"global": {}, "servers": {}, "linters": {}}
    server = {
        "type": "object",
        "additionalProperties": False,
        "properties": _properties(SERVER_KEYS, _field_types(ServerConfig), described["servers"]),
    }
    linter_props = _properties(LINTER_KEYS, _field_types(LinterConfig), described["linters"])
    linter_props["json"]["properties"] = _UNITS
    linter = {"type": "object", "additionalProperties": False, "properties": linter_props}
    top = _properties(GLOBAL_KEYS, _field_types(Config), described["global"])
    top["servers"] = {"type": "object", "additionalProperties": server}
    top["linters"] = {"type": "object", "additionalProperties": linter}
    return {
        "$schema": SCHEMA_ID,
        "title": "lspmux configuration (lspmux.toml, ~/.config/lspmux/config.toml)",
        "type": "object",
        "additionalProperties": False,
        "properties": top,
    }
