"""Loading the configuration: finding the files, parsing and validating TOML, merging layers.

The effective `Config` is built from, in order (later wins):

1. the shipped defaults (`lspmux/config/defaults.toml`, the built-in server and linter table);
2. the user file, `$XDG_CONFIG_HOME/lspmux/config.toml` (default `~/.config/lspmux/config.toml`);
3. the project file: the nearest `lspmux.toml`, or `pyproject.toml` with a `[tool.lspmux]`
   table, from the project folder upward;
4. each `--config` file, in the order given.

Merging is per server and per linter, key by key (`lspmux.config.merge`). Validation is
strict: a wrong key, type or value raises `ConfigError` naming the file, the dotted key, what
was found and what was expected (`lspmux.config.checks`, with the checkers each key's model
field names). `format_config` (`lspmux.config.render`) renders the result for `lspmux config`.
The model itself lives in `lspmux.config.model`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NoReturn

from lspmux import dirs
from lspmux.config import trust
from lspmux.config.checkers import ConfigError, _describe, _hint, _join, _Where
from lspmux.config.checks import (
    GLOBAL_KEYS,
    LINTER_KEYS,
    SERVER_KEYS,
    Layer,
    check_document,
)
from lspmux.config.choice import choose
from lspmux.config.merge import State, merge
from lspmux.config.model import (
    DEFAULTS_LABEL,
    Config,
    LinterConfig,
    ServerConfig,
)
from lspmux.config.render import format_config
from lspmux.config.resolve import resolve_command
from lspmux.config.restricted import Unresolved, restricted
from lspmux.config.untrusted import notice, restrict, untrusted_executables

__all__ = [
    "DEFAULTS_LABEL",
    "DEFAULTS_PATH",
    "GLOBAL_KEYS",
    "LINTER_KEYS",
    "PROJECT_FILE",
    "SERVER_KEYS",
    "ConfigError",
    "find_project_file",
    "format_config",
    "load_config",
]

log = logging.getLogger("lspmux.config")

#: The built-in table shipped with the package.
DEFAULTS_PATH: Path = Path(__file__).resolve().parent / "defaults.toml"
#: The project file's name (searched from the project folder upward).
PROJECT_FILE = "lspmux.toml"
PYPROJECT_FILE = "pyproject.toml"


# -- reading files --------------------------------------------------------------------------


#: Parsed files by (path, mtime, size): `lspmux proxy` loads its configuration at start and
#: again for the client's root, and the shipped defaults alone take ~20 ms to parse.
_PARSED: dict[tuple[Path, int, int], dict[str, Any]] = {}


def _copy(value: Any) -> Any:
    """A copy of parsed TOML: tables and arrays copied, the rest (str, numbers, dates) shared."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _read_toml(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """The parsed file (from `data` when the caller already read its bytes)."""
    try:
        if data is None:
            st = path.stat()
            key = (path, st.st_mtime_ns, st.st_size)
            if key not in _PARSED:
                doc = tomllib.loads(path.read_bytes().decode("utf-8"))
                for stale in [k for k in _PARSED if k[0] == path]:  # one version per file
                    del _PARSED[stale]
                _PARSED[key] = doc
            return _copy(_PARSED[key])  # the caller's to change
        return tomllib.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason})", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}", file=str(path)) from None


def _tool_table(doc: Mapping[str, Any], path: Path) -> dict[str, Any] | None:
    """The `[tool.lspmux]` table of a parsed pyproject.toml, or None when it has none."""
    tool = doc.get("tool")
    if not isinstance(tool, dict) or "lspmux" not in tool:
        return None
    table = tool["lspmux"]
    if not isinstance(table, dict):
        _Where(str(path), "tool.lspmux").fail(f"found {_describe(table)}", "a table")
    return table


def _read_layer(path: Path, label: str, data: bytes | None = None) -> Layer:
    doc = _read_toml(path, data)
    if path.name == PYPROJECT_FILE:
        table = _tool_table(doc, path)
        if table is None:
            raise ConfigError(
                f"{path}: no [tool.lspmux] table; expected lspmux settings under [tool.lspmux]",
                file=str(path),
            )
        return check_document(table, _Where(str(path), "tool.lspmux"), label)
    return check_document(doc, _Where(str(path)), label)


def find_project_file(start: str | Path) -> Path | None:
    """The nearest `lspmux.toml`, or `pyproject.toml` holding `[tool.lspmux]`, from `start`
    (a folder, or a file whose folder is used) upward; None when there is none.

    In one folder `lspmux.toml` wins over `pyproject.toml`; a `pyproject.toml` without a
    `[tool.lspmux]` table does not stop the search.
    """
    here = Path(start).absolute()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            return candidate
        pyproject = folder / PYPROJECT_FILE
        if pyproject.is_file() and _tool_table(_read_toml(pyproject), pyproject) is not None:
            return pyproject
    return None


# -- building the model ----------------------------------------------------------------------


def _fail_entry(state: State, prefix: str, key: str | None, found: str, expected: str) -> NoReturn:
    dotted = _join(prefix, key) if key else prefix
    file = state.files_of.get(dotted) or state.defined_in[prefix]
    _Where(file, dotted).fail(found, expected)


def _require_command(state: State, section: str, name: str, values: Mapping[str, Any]) -> None:
    if "command" in values:
        return
    prefix = _join(section, name)
    known = [n for n in state.sections[section] if "command" in state.sections[section][n]]
    _fail_entry(
        state,
        prefix,
        None,
        f"no command, and no built-in entry is named {json.dumps(name)}{_hint(name, known)}",
        f'a new entry to set command, e.g. command = ["{name}"]',
    )


def _check_linter(state: State, name: str, values: Mapping[str, Any]) -> None:
    """What a single file cannot show: a regex format needs a regex from some file."""
    if values.get("format", "json") == "regex" and "regex" not in values:
        _fail_entry(
            state,
            _join("linters", name),
            "format",
            'format = "regex" but no regex is set',
            "regex = a pattern with (?P<line>...) and (?P<message>...) groups",
        )


def _fill_origins(
    origins: dict[str, str], prefix: str, cls: type[Any], values: Mapping[str, Any]
) -> None:
    """Origins for fields no file set: the model's default ("defaults")."""
    for f in dataclasses.fields(cls):
        if f.name != "name" and f.name not in values:
            origins.setdefault(_join(prefix, f.name), DEFAULTS_LABEL)


def _build(state: State, files: Sequence[str]) -> Config:
    origins = state.origins
    globals_ = dict(state.globals)
    if "idle_timeout" in globals_:
        globals_["idle_timeout"] = globals_["idle_timeout"] or None  # 0 means never
    defaults = Config(**globals_)  # the global values, with the model's defaults filled in
    request_timeout, idle_timeout = defaults.request_timeout, defaults.idle_timeout
    for key in GLOBAL_KEYS:
        origins.setdefault(key, DEFAULTS_LABEL)

    servers: dict[str, ServerConfig] = {}
    for name, values in state.sections["servers"].items():
        _require_command(state, "servers", name, values)
        prefix = _join("servers", name)
        kwargs = dict(values)
        if "request_timeout" not in kwargs:
            kwargs["request_timeout"] = request_timeout
            origins[_join(prefix, "request_timeout")] = origins["request_timeout"]
        if "idle_timeout" in kwargs:
            kwargs["idle_timeout"] = kwargs["idle_timeout"] or None
        else:
            kwargs["idle_timeout"] = idle_timeout
            origins[_join(prefix, "idle_timeout")] = origins["idle_timeout"]
        _fill_origins(origins, prefix, ServerConfig, kwargs)
        servers[name] = ServerConfig(name=name, **kwargs)

    linters: dict[str, LinterConfig] = {}
    for name, values in state.sections["linters"].items():
        _require_command(state, "linters", name, values)
        _check_linter(state, name, values)
        _fill_origins(origins, _join("linters", name), LinterConfig, values)
        linters[name] = LinterConfig(name=name, **values)

    return dataclasses.replace(
        defaults, servers=servers, linters=linters, origins=dict(origins), files=tuple(files)
    )


def load_config(
    project_dir: Path | None = None,
    extra_files: Sequence[Path] = (),
    *,
    user_config: Path | Literal["default"] | None = "default",
    defaults: Path | None = None,
    trust_db: trust.TrustDB | None = None,
    warn: bool = True,
    installed: Callable[[ServerConfig], bool] | None = None,
) -> Config:
    """Read, validate and merge the configuration files into the effective `Config`.

    `project_dir`: where the project file search starts (None: no project file).
    `extra_files`: `--config` files, merged last in the order given; each must exist (a
    `pyproject.toml` among them contributes its `[tool.lspmux]` table).
    `user_config`: "default" for the XDG location (skipped when absent), a path (which must
    exist), or None for no user file. `defaults`: a table to use instead of the shipped one.
    `trust_db`: the trust database (default: the user's); an untrusted project file
    contributes only what cannot change what runs (see `lspmux.config.untrusted`).
    `warn`: log what an untrusted project file lost (off for `lspmux trust`'s own preview).
    `installed`: whether a server's executable is found, for the choice of one server per role
    and family (`lspmux.config.choice`); default: looked up as the server would be started
    (lspmux's prefix, PATH, then the trusted workspace's bins).
    Raises `ConfigError` for a missing explicit file, bad TOML or an invalid value.
    """
    sources: list[tuple[Path, str]] = [(defaults or DEFAULTS_PATH, DEFAULTS_LABEL)]
    if user_config == "default":
        path = dirs.user_config_file()
        if path.is_file():
            sources.append((path, str(path)))
    elif user_config is not None:
        sources.append((user_config, str(user_config)))
    project = find_project_file(project_dir) if project_dir is not None else None
    if project is not None:
        sources.append((project, str(project)))
    sources.extend((Path(extra), str(extra)) for extra in extra_files)

    state = State()
    project_trusted: bool | None = None
    ignored: tuple[str, ...] = ()
    for path, label in sources:
        if path != project:
            merge(state, _read_layer(path, label))
            continue
        data = _read_bytes(path)  # hashed and parsed from the same bytes
        layer = _read_layer(path, label, data)
        project_trusted = (trust_db or trust.load()).file_trusted(path, data)
        if not project_trusted:
            layer.globals, layer.sections, ignored = restrict(
                layer.globals, layer.sections, state.sections
            )
            if warn and ignored and trust.once("file", str(path), trust.digest(data)):
                log.warning(
                    "%s is not trusted: ignored %s; run `lspmux trust %s` to use them",
                    path,
                    ", ".join(ignored),
                    project_dir,
                )
        merge(state, layer)
    config = _build(state, [str(path) for path, _ in sources])
    if project_dir is None:
        return _chosen(config, installed or _found(None, trusted=False))
    db = trust_db or trust.load()
    workspace_trusted = db.dir_trusted(project_dir)
    if not workspace_trusted:  # restricted mode (`lspmux.config.restricted`)
        config = dataclasses.replace(config, servers=_restricted(config.servers, project_dir))
    config = _chosen(config, installed or _found(project_dir, trusted=workspace_trusted))
    config = dataclasses.replace(
        config,
        workspace_trusted=workspace_trusted,
        project_file=str(project) if project is not None else None,
        project_trusted=project_trusted,
        untrusted_keys=ignored,
        untrusted_executables=untrusted_executables(config, project_dir, db),
        project_dir=str(project_dir),
    )
    return dataclasses.replace(config, trust_notice=notice(config))


def _restricted(servers: Mapping[str, ServerConfig], root: Path) -> dict[str, ServerConfig]:
    """The servers as they run in the untrusted workspace `root`: each in its restricted mode.
    One that has no restricted mode it could run in here is left as it is: the pool refuses
    to start it (`ServerConfig.for_root`), and says why."""
    out = dict(servers)
    for name, server in servers.items():
        if server.untrusted.get("disabled"):
            out[name] = dataclasses.replace(server, disabled=True)
        elif server.untrusted:
            with contextlib.suppress(Unresolved):
                out[name] = restricted(server, root)
    return out


def _found(root: Path | None, *, trusted: bool) -> Callable[[ServerConfig], bool]:
    def found(server: ServerConfig) -> bool:
        return resolve_command(server.command, root, project_bins=trusted) is not None

    return found


def _chosen(config: Config, installed: Callable[[ServerConfig], bool]) -> Config:
    """`config` with the servers the default choice leaves out disabled (one per role and
    family; a server a file turned on by name, `disabled = false`, stays)."""
    turned_on = {
        name
        for name in config.servers
        if config.origins.get(_join(_join("servers", name), "disabled"), DEFAULTS_LABEL)
        != DEFAULTS_LABEL
    }
    left_out = choose(config.servers.values(), installed, turned_on)
    if not left_out:
        return config
    servers = {
        name: dataclasses.replace(s, disabled=True) if name in left_out else s
        for name, s in config.servers.items()
    }
    return dataclasses.replace(config, servers=servers, not_chosen=left_out)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}", file=str(path)) from None
