"""Rendering the effective configuration for `lspmux config`: readable TOML (valid, loadable
again) with the origin of every value set outside the defaults, or JSON."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lspmux.config.checkers import _join, _key_part
from lspmux.config.choice import chosen_over
from lspmux.config.model import DEFAULTS_LABEL, Config, LinterConfig, ServerConfig

# -- rendering (`lspmux config`) ---------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        inner = ", ".join(f"{_key_part(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    return json.dumps(str(value))


def _leaves(prefix: str, value: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(dotted key, value) for every leaf of a nested table; an empty table is a leaf."""
    out: list[tuple[str, Any]] = []
    for k, v in value.items():
        key = _join(prefix, str(k))
        if isinstance(v, Mapping) and v:
            out.extend(_leaves(key, v))
        else:
            out.append((key, v))
    return out


_ALWAYS_SHOWN = ("command", "file_types", "format")


#: Instances holding every field's default, to tell which values a file changed.
_MODEL_DEFAULTS: dict[type[Any], ServerConfig | LinterConfig] = {
    ServerConfig: ServerConfig(name="", command=()),
    LinterConfig: LinterConfig(name="", command=()),
}


def _entry_lines(
    entry: ServerConfig | LinterConfig,
    prefix: str,
    origins: Mapping[str, str],
    notes: Mapping[str, str] | None = None,
) -> list[str]:
    """The entry's values; `notes`: a comment for a key no file set (key → note)."""
    lines: list[str] = []

    def emit(key: str, value: Any, dotted: str) -> None:
        origin = origins.get(dotted, DEFAULTS_LABEL)
        note = f"  # from {origin}" if origin != DEFAULTS_LABEL else ""
        if not note and notes and key in notes:
            note = f"  # {notes[key]}"
        lines.append(f"{key} = {_toml_value(value)}{note}")

    for f in dataclasses.fields(entry):
        if f.name == "name":
            continue
        value = getattr(entry, f.name)
        dotted = _join(prefix, f.name)
        if value is None:
            continue
        default = getattr(_MODEL_DEFAULTS[type(entry)], f.name)
        changed = value != default or origins.get(dotted, DEFAULTS_LABEL) != DEFAULTS_LABEL
        if isinstance(value, Mapping) and value:
            for key, leaf in _leaves(f.name, value):
                emit(key, leaf, f"{prefix}.{key}")
            continue
        if f.name in _ALWAYS_SHOWN or changed:
            emit(f.name, value, dotted)
    return lines


#: Global keys of the daemon and its clients (the Rust lspmux's keys and lspmux's own), in the
#: order `lspmux config` shows them.
DAEMON_KEYS = (
    "instance_timeout",
    "gc_interval",
    "listen",
    "connect",
    "log_filters",
    "pass_environment",
    "allowed_servers",
    "max_message_size",
)

#: What an unset (None) daemon key means, shown as a comment.
_UNSET = {
    "instance_timeout": ("false", "never: instances without clients keep running"),
    "listen": (None, "the private Unix socket (lspmux server --help)"),
    "connect": (None, "the private Unix socket"),
    "log_filters": (
        None,
        "warning on stderr, info in --log-file, unless --log-level, LSPMUX_LOG or RUST_LOG say "
        "otherwise",
    ),
    "allowed_servers": (None, "the configured servers' commands and their resolved paths"),
}


def _daemon_lines(config: Config) -> list[str]:
    """The daemon's and its clients' global keys, each with its origin (or what unset means);
    an unset key is a comment, so the output still loads as TOML."""
    lines: list[str] = []
    for key in DAEMON_KEYS:
        value = getattr(config, key)
        origin = config.origins.get(key, DEFAULTS_LABEL)
        note = f"  # from {origin}" if origin != DEFAULTS_LABEL else ""
        if value is None:
            written, meaning = _UNSET[key]
            if written is None:
                lines.append(f"# {key}: {meaning}")
                continue
            lines.append(f"{key} = {written}{note or '  # ' + meaning}")
        else:
            lines.append(f"{key} = {_toml_value(value)}{note}")
    return lines


def _status(
    entry: ServerConfig | LinterConfig, root: str | Path | None, config: Config
) -> tuple[bool, str]:
    """(available, a comment saying why) for one server or linter; for a server of a family,
    which one the default choice took and why (`lspmux.config.choice`)."""
    resolved = entry.resolve_command(root)
    found = f"found: {resolved[0]}" if resolved else f"not found: {entry.command[0]}"
    choices = config.not_chosen if isinstance(entry, ServerConfig) else {}
    if entry.name in choices:
        return False, f"{choices[entry.name].reason} ({found})"
    if entry.disabled:
        return False, f"disabled ({found})"
    over = chosen_over(choices.values(), entry.name)
    if over and isinstance(entry, ServerConfig):
        found += f"; chosen for the {entry.family} {entry.role} role over {', '.join(over)}"
    return resolved is not None, found


def _as_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    return value


def format_config(
    config: Config,
    *,
    only_available: bool = False,
    as_json: bool = False,
    root: str | Path | None = None,
) -> str:
    """The effective configuration as `lspmux config` prints it.

    Text: TOML-like, one table per server and linter with a comment saying whether its
    executable was found (looked up on PATH, then in `root`'s project folders), its command and
    file types, and every other value that differs from the model's default; a value set
    outside the shipped defaults ends with `# from <file>`. `as_json`: one JSON document with
    every field, `executable` and `available` per entry, and the origins.
    `only_available`: only servers and linters that are enabled and installed.
    """
    sections: dict[str, Mapping[str, ServerConfig | LinterConfig]] = {
        "servers": config.servers,
        "linters": config.linters,
    }
    if as_json:
        doc: dict[str, Any] = {
            "files": list(config.files),
            "request_timeout": config.request_timeout,
            "idle_timeout": config.idle_timeout,
            **{key: _as_json(getattr(config, key)) for key in DAEMON_KEYS},
        }
        for section, entries in sections.items():
            out: dict[str, Any] = {}
            for name, entry in entries.items():
                available, _ = _status(entry, root, config)
                if only_available and not available:
                    continue
                resolved = entry.resolve_command(root)
                fields = {f.name: getattr(entry, f.name) for f in dataclasses.fields(entry)}
                fields.pop("name")
                out[name] = {
                    **_as_json(fields),
                    "executable": resolved[0] if resolved else None,
                    "available": available,
                }
                if section == "servers":
                    choice = config.not_chosen.get(name)
                    out[name]["not_used"] = choice.reason if choice else None
            doc[section] = out
        doc["project_file"] = config.project_file
        doc["project_trusted"] = config.project_trusted
        doc["untrusted_keys"] = list(config.untrusted_keys)
        doc["origins"] = dict(config.origins)
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    lines = ["# lspmux: the effective configuration", "# files read, later ones win:"]
    for i, path in enumerate(config.files):
        lines.append(f"#   {path}" + ("  (built-in defaults)" if i == 0 else ""))
    if config.project_trusted is False and config.untrusted_keys:
        lines.append(
            f"# {config.project_file} is not trusted; ignored: {', '.join(config.untrusted_keys)}"
            f" (`lspmux trust {config.project_dir}` to use them)"
        )
    origin = config.origins.get("request_timeout", DEFAULTS_LABEL)
    note = f"  # from {origin}" if origin != DEFAULTS_LABEL else ""
    lines.append(f"request_timeout = {_toml_value(config.request_timeout)}{note}")
    if config.idle_timeout is None:
        lines.append("idle_timeout = 0  # never: idle servers keep running")
    else:
        origin = config.origins.get("idle_timeout", DEFAULTS_LABEL)
        note = f"  # from {origin}" if origin != DEFAULTS_LABEL else ""
        lines.append(f"idle_timeout = {_toml_value(config.idle_timeout)}{note}")

    lines.extend(_daemon_lines(config))

    counts: list[str] = []
    for section, entries in sections.items():
        available_count = 0
        for name, entry in entries.items():
            available, status = _status(entry, root, config)
            available_count += available
            if only_available and not available:
                continue
            prefix = _join(section, name)
            lines.append("")
            lines.append(f"[{prefix}]  # {status}")
            choice = config.not_chosen.get(name) if section == "servers" else None
            notes = {"disabled": f"the default choice: {choice.chosen}"} if choice else None
            lines.extend(_entry_lines(entry, prefix, config.origins, notes))
        counts.append(f"{available_count} of {len(entries)} {section}")
    lines.append("")
    lines.append("# available (enabled and installed): " + ", ".join(counts))
    return "\n".join(lines) + "\n"
