"""Loading and merging configuration files: order, deep merges, origins, file discovery, errors.

Every test runs with HOME and XDG_CONFIG_HOME pointed into tmp_path, so the real user file is
never read. Most tests use a small `defaults` table of their own so that they do not depend on
the shipped one (tests/unit/config/test_defaults.py covers that).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from lspmux.config.loader import (
    DEFAULTS_LABEL,
    ConfigError,
    find_project_file,
    format_config,
    load_config,
)
from lspmux.config.model import Config
from lspmux.config.trust import TrustDB, save, trusted
from lspmux.dirs import user_config_file

DEFAULTS = """
request_timeout = 30.0

[servers.alpha]
command = ["alpha-ls", "--stdio"]
file_types = [".a"]
language_ids = ["alpha"]
root_markers = ["alpha.toml", ".git"]

[servers.alpha.settings]
alpha = { lint = { enabled = true, level = "basic" }, format = true }

[servers.beta]
command = ["beta-ls"]
file_types = [".a", "Betafile"]
role = "linter"
env = { BETA_LOG = "warn" }

[linters.gamma]
command = ["gamma", "--json", "-"]
input = "stdin"
file_types = [".a"]

[linters.gamma.json]
items = "findings"
line = "line"
message = "text"
severity_map = { E = "error" }
"""


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # an empty trust database
    return home


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class Layers:
    """Writes the four kinds of file into tmp_path and loads them in the usual order (the
    project file trusted, unless `trusted` is False)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.defaults = write(tmp_path / "defaults.toml", DEFAULTS)
        self.user = tmp_path / "xdg" / "lspmux" / "config.toml"
        self.project_dir = tmp_path / "project"
        self.project_dir.mkdir()
        self.project = self.project_dir / "lspmux.toml"
        self.extras: list[Path] = []
        self.trusted = True

    def write(self, which: str, text: str) -> Path:
        if which == "user":
            return write(self.user, text)
        if which == "project":
            return write(self.project, text)
        extra = write(self.tmp / f"extra{len(self.extras)}.toml", text)
        self.extras.append(extra)
        return extra

    def load(self) -> Config:
        db = TrustDB()
        if self.trusted and self.project.exists():
            db = trusted(db, self.project_dir, self.project)
        return load_config(
            self.project_dir,
            self.extras,
            user_config=self.user if self.user.exists() else None,
            defaults=self.defaults,
            trust_db=db,
        )


@pytest.fixture
def layers(tmp_path: Path) -> Layers:
    return Layers(tmp_path)


def attr_path(config: Config, dotted: str) -> Any:
    """`servers.alpha.request_timeout` → config.servers["alpha"].request_timeout."""
    section, name, field, *rest = dotted.split(".")
    value = getattr(getattr(config, section)[name], field)
    for key in rest:
        value = value[key]
    return value


# -- merge order -----------------------------------------------------------------------------

MERGE_CASES: list[tuple[str, list[tuple[str, str]], str, Any, str]] = [
    # (id, [(layer, text)...], dotted key, expected value, expected origin layer)
    (
        "user over defaults",
        [("user", "[servers.alpha]\nrequest_timeout = 5")],
        "servers.alpha.request_timeout",
        5.0,
        "user",
    ),
    (
        "project over user",
        [
            ("user", "[servers.alpha]\nrequest_timeout = 5"),
            ("project", "[servers.alpha]\nrequest_timeout = 6"),
        ],
        "servers.alpha.request_timeout",
        6.0,
        "project",
    ),
    (
        "extra over project",
        [
            ("project", "[servers.alpha]\nrequest_timeout = 6"),
            ("extra", "[servers.alpha]\nrequest_timeout = 7"),
        ],
        "servers.alpha.request_timeout",
        7.0,
        "extra",
    ),
    (
        "later extra over earlier extra",
        [
            ("extra", "[servers.alpha]\nrequest_timeout = 7"),
            ("extra", "[servers.alpha]\nrequest_timeout = 8"),
        ],
        "servers.alpha.request_timeout",
        8.0,
        "extra",
    ),
    (
        "a lower layer does not undo a higher one",
        [
            ("user", "[servers.alpha]\ndisabled = true"),
            ("project", "[servers.alpha]\nrequest_timeout = 6"),
        ],
        "servers.alpha.disabled",
        True,
        "user",
    ),
    (
        "lists replace",
        [("user", '[servers.alpha]\nfile_types = [".alpha"]')],
        "servers.alpha.file_types",
        (".alpha",),
        "user",
    ),
    (
        "settings merge: new leaf beside the built-in ones",
        [("project", "[servers.alpha.settings.alpha.lint]\nstrict = true")],
        "servers.alpha.settings",
        {"alpha": {"lint": {"enabled": True, "level": "basic", "strict": True}, "format": True}},
        "project",
    ),
    (
        "settings merge: leaf overridden, siblings kept",
        [("user", '[servers.alpha.settings]\nalpha = { lint = { level = "strict" } }')],
        "servers.alpha.settings",
        {"alpha": {"lint": {"enabled": True, "level": "strict"}, "format": True}},
        "user",
    ),
    (
        "settings merge: a table replaced by a scalar",
        [("user", "[servers.alpha.settings]\nalpha = { lint = false }")],
        "servers.alpha.settings",
        {"alpha": {"lint": False, "format": True}},
        "user",
    ),
    (
        "settings: lists inside replace",
        [("user", '[servers.alpha.settings.alpha]\npaths = ["a"]'), ("project", "")],
        "servers.alpha.settings.alpha.paths",
        ["a"],
        "user",
    ),
    (
        "env merges",
        [("user", '[servers.beta.env]\nBETA_HOME = "/opt/beta"')],
        "servers.beta.env",
        {"BETA_LOG": "warn", "BETA_HOME": "/opt/beta"},
        "user",
    ),
    (
        "initialization_options set where defaults have none",
        [("project", "[servers.alpha.initialization_options]\nfast = true")],
        "servers.alpha.initialization_options",
        {"fast": True},
        "project",
    ),
    (
        "linter json mapping merges",
        [("user", '[linters.gamma.json]\ncode = "rule"\nseverity_map = { W = "warning" }')],
        "linters.gamma.json",
        {
            "items": "findings",
            "line": "line",
            "message": "text",
            "code": "rule",
            "severity_map": {"E": "error", "W": "warning"},
        },
        "user",
    ),
    (
        "global request_timeout reaches servers without their own",
        [("user", "request_timeout = 12")],
        "servers.beta.request_timeout",
        12.0,
        "user",
    ),
    (
        "a server's own request_timeout beats a later global one",
        [("user", "[servers.beta]\nrequest_timeout = 3"), ("project", "request_timeout = 12")],
        "servers.beta.request_timeout",
        3.0,
        "user",
    ),
    (
        "global idle_timeout reaches servers",
        [("project", "idle_timeout = 600")],
        "servers.alpha.idle_timeout",
        600.0,
        "project",
    ),
    (
        "idle_timeout = 0 means never",
        [("user", "idle_timeout = 600"), ("project", "[servers.alpha]\nidle_timeout = 0")],
        "servers.alpha.idle_timeout",
        None,
        "project",
    ),
    (
        "a new server",
        [("project", '[servers.delta]\ncommand = ["delta"]\nfile_types = [".d"]')],
        "servers.delta.command",
        ("delta",),
        "project",
    ),
]


@pytest.mark.parametrize(
    ("layer_texts", "dotted", "expected", "origin"),
    [case[1:] for case in MERGE_CASES],
    ids=[case[0] for case in MERGE_CASES],
)
def test_merge(
    layers: Layers,
    layer_texts: list[tuple[str, str]],
    dotted: str,
    expected: Any,
    origin: str,
) -> None:
    written = [layers.write(which, text) for which, text in layer_texts]
    config = layers.load()
    assert attr_path(config, dotted) == expected
    origin_file = next(
        str(path)
        for (which, _), path in reversed(list(zip(layer_texts, written, strict=True)))
        if which == origin
    )
    assert config.origins[dotted] == origin_file


def test_untouched_values_stay_with_defaults(layers: Layers) -> None:
    layers.write("user", "[servers.alpha]\nrequest_timeout = 5")
    config = layers.load()
    alpha = config.servers["alpha"]
    assert alpha.command == ("alpha-ls", "--stdio")
    assert alpha.root_markers == ("alpha.toml", ".git")
    assert config.origins["servers.alpha.command"] == DEFAULTS_LABEL
    assert config.origins["servers.alpha.settings.alpha.lint.level"] == DEFAULTS_LABEL
    # A field no file sets comes from the model's default.
    assert config.origins["servers.alpha.only_features"] == DEFAULTS_LABEL
    assert alpha.idle_timeout is None
    assert config.origins["servers.alpha.idle_timeout"] == DEFAULTS_LABEL


def test_leaf_origins_follow_deep_merges(layers: Layers) -> None:
    user = layers.write("user", '[servers.alpha.settings]\nalpha = { lint = { level = "x" } }')
    project = layers.write("project", "[servers.alpha.settings.alpha]\nlint = false")
    origins = layers.load().origins
    assert origins["servers.alpha.settings.alpha.lint"] == str(project)
    # Leaves of the table that `lint = false` replaced are gone, not stale.
    assert "servers.alpha.settings.alpha.lint.level" not in origins
    assert "servers.alpha.settings.alpha.lint.enabled" not in origins
    assert origins["servers.alpha.settings.alpha.format"] == DEFAULTS_LABEL
    assert str(user) in layers.load().files


def test_new_entries_come_after_built_in_ones_in_file_order(layers: Layers) -> None:
    layers.write("user", '[servers.zeta]\ncommand = ["zeta"]\n[servers.delta]\ncommand = ["d"]')
    layers.write("project", '[servers.alpha]\ndisabled = true\n[servers.eps]\ncommand = ["e"]')
    config = layers.load()
    assert list(config.servers) == ["alpha", "beta", "zeta", "delta", "eps"]
    assert config.origins["servers.zeta"] == str(layers.user)
    assert config.origins["servers.alpha"] == DEFAULTS_LABEL


def test_disabled_server_is_not_routed(layers: Layers) -> None:
    layers.write("project", "[servers.alpha]\ndisabled = true")
    config = layers.load()
    assert [s.name for s in config.servers_for("/p/x.a")] == ["beta"]


def test_files_lists_what_was_read_in_order(layers: Layers) -> None:
    user = layers.write("user", "")
    project = layers.write("project", "")
    extra = layers.write("extra", "")
    config = layers.load()
    assert config.files == (str(layers.defaults), str(user), str(project), str(extra))


def test_global_values_and_their_origins(layers: Layers) -> None:
    layers.write("user", "request_timeout = 10\nidle_timeout = 300")
    config = layers.load()
    assert config.request_timeout == 10.0
    assert config.idle_timeout == 300.0
    assert config.origins["request_timeout"] == str(layers.user)


def test_a_file_read_again_after_it_changed_gives_its_new_values(tmp_path: Path) -> None:
    # Parsed files are kept by (path, mtime, size): a change of either is read again, and
    # a caller changing what it got changes nothing for the next one.
    user = write(tmp_path / "user.toml", "request_timeout = 10")
    defaults = write(tmp_path / "d.toml", DEFAULTS)
    first = load_config(user_config=user, defaults=defaults)
    assert first.request_timeout == 10.0
    write(user, "request_timeout = 12.5\nidle_timeout = 300")
    os.utime(user, ns=(0, 1_000_000_000))  # another mtime, even on a coarse clock
    again = load_config(user_config=user, defaults=defaults)
    assert (again.request_timeout, again.idle_timeout) == (12.5, 300.0)
    assert load_config(user_config=user, defaults=defaults) == again


# -- finding the files ---------------------------------------------------------------------


def test_user_file_from_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xdg = tmp_path / "xdg-home"
    write(xdg / "lspmux" / "config.toml", "request_timeout = 11")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    assert user_config_file() == xdg / "lspmux" / "config.toml"
    config = load_config(defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert config.request_timeout == 11.0
    assert config.files[-1] == str(xdg / "lspmux" / "config.toml")


def test_user_file_under_home_without_xdg(tmp_path: Path, isolated_home: Path) -> None:
    write(isolated_home / ".config" / "lspmux" / "config.toml", "request_timeout = 13")
    config = load_config(defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert config.request_timeout == 13.0


def test_relative_xdg_config_home_is_ignored(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")
    assert user_config_file() == isolated_home / ".config" / "lspmux" / "config.toml"


def test_user_config_none_skips_the_user_file(tmp_path: Path, isolated_home: Path) -> None:
    write(isolated_home / ".config" / "lspmux" / "config.toml", "request_timeout = 13")
    config = load_config(user_config=None, defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert config.request_timeout == 30.0


def test_missing_default_user_file_is_fine(tmp_path: Path) -> None:
    config = load_config(defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert config.files == (str(tmp_path / "d.toml"),)


def test_shipped_defaults_are_used_when_none_given(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert "basedpyright" in config.servers
    assert config.origins["servers.basedpyright.command"] == DEFAULTS_LABEL


def test_pyproject_tool_table(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    write(
        project / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.lspmux.servers.alpha]\ndisabled = true\n',
    )
    (project / "src").mkdir()
    config = load_config(project / "src", defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert config.servers["alpha"].disabled
    assert config.origins["servers.alpha.disabled"] == str(project / "pyproject.toml")


def test_pyproject_without_tool_table_is_passed_over(tmp_path: Path) -> None:
    write(tmp_path / "lspmux.toml", "request_timeout = 9")
    write(tmp_path / "sub" / "pyproject.toml", '[project]\nname = "x"\n')
    assert find_project_file(tmp_path / "sub") == tmp_path / "lspmux.toml"


def test_lspmux_toml_wins_over_pyproject_in_the_same_folder(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.lspmux]\nrequest_timeout = 1")
    write(tmp_path / "lspmux.toml", "request_timeout = 2")
    assert find_project_file(tmp_path) == tmp_path / "lspmux.toml"


def test_nearest_project_file_wins(tmp_path: Path) -> None:
    write(tmp_path / "lspmux.toml", "request_timeout = 1")
    write(tmp_path / "a" / "pyproject.toml", "[tool.lspmux]\nrequest_timeout = 2")
    (tmp_path / "a" / "b").mkdir()
    assert find_project_file(tmp_path / "a" / "b") == tmp_path / "a" / "pyproject.toml"
    config = load_config(tmp_path / "a" / "b", defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert config.request_timeout == 2.0


def test_project_search_starts_from_a_file_s_folder(tmp_path: Path) -> None:
    write(tmp_path / "lspmux.toml", "")
    source = write(tmp_path / "pkg" / "mod.py", "")
    assert find_project_file(source) == tmp_path / "lspmux.toml"


def test_no_project_file(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    found = find_project_file(tmp_path / "empty")
    # Nothing in tmp_path; anything found must lie above it (outside the test's control).
    assert found is None or not str(found).startswith(str(tmp_path))


def test_extra_pyproject_contributes_its_tool_table(tmp_path: Path) -> None:
    extra = write(tmp_path / "x" / "pyproject.toml", "[tool.lspmux]\nrequest_timeout = 4")
    config = load_config(extra_files=[extra], defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert config.request_timeout == 4.0


# -- errors ----------------------------------------------------------------------------------

ERROR_CASES: list[tuple[str, str, str, list[str]]] = [
    # (id, file text, dotted key, substrings of the message besides file and key)
    ("unknown top-level key", "servrs = {}", "servrs", ['did you mean "servers"', "expected"]),
    (
        "unknown server key",
        "[servers.alpha]\nonly_feature = []",
        "servers.alpha.only_feature",
        ["unknown key", 'did you mean "only_features"', "command"],
    ),
    (
        "command as a string",
        '[servers.alpha]\ncommand = "alpha-ls --stdio"',
        "servers.alpha.command",
        ['a string ("alpha-ls --stdio")', "list of strings"],
    ),
    (
        "empty command",
        "[servers.alpha]\ncommand = []",
        "servers.alpha.command",
        ["empty list", "non-empty list"],
    ),
    (
        "empty argument",
        '[servers.alpha]\ncommand = ["x", ""]',
        "servers.alpha.command[1]",
        ['a string ("")', "non-empty string"],
    ),
    (
        "bad role",
        '[servers.alpha]\nrole = "lint"',
        "servers.alpha.role",
        ['"lint" is not allowed', '"server", "linter"'],
    ),
    (
        "unknown feature",
        '[servers.alpha]\nonly_features = ["hover", "hovr"]',
        "servers.alpha.only_features[1]",
        ['"hovr" is not a feature', 'did you mean "hover"', "callHierarchy, codeAction"],
    ),
    (
        "feature of the wrong type",
        "[servers.alpha]\nexcept_features = [1]",
        "servers.alpha.except_features[0]",
        ["an integer (1)", "one of: callHierarchy"],
    ),
    (
        "boolean timeout",
        "[servers.alpha]\nrequest_timeout = true",
        "servers.alpha.request_timeout",
        ["a boolean (true)", "seconds > 0"],
    ),
    ("zero timeout", "request_timeout = 0", "request_timeout", ["found 0", "seconds > 0"]),
    ("infinite timeout", "request_timeout = inf", "request_timeout", ["seconds > 0"]),
    (
        "idle timeout as text",
        'idle_timeout = "5m"',
        "idle_timeout",
        ['a string ("5m")', "0: never"],
    ),
    (
        "disabled as text",
        '[servers.alpha]\ndisabled = "yes"',
        "servers.alpha.disabled",
        ["true or false"],
    ),
    (
        "settings not a table",
        '[servers.alpha]\nsettings = "x"',
        "servers.alpha.settings",
        ["a string", "a table"],
    ),
    (
        "a date in settings",
        "[servers.alpha.settings]\nsince = 2024-01-01",
        "servers.alpha.settings.since",
        ["a date/time (2024-01-01)", "JSON"],
    ),
    (
        "infinity in settings",
        "[servers.alpha.settings]\nlimit = inf",
        "servers.alpha.settings.limit",
        ["found inf", "finite number"],
    ),
    (
        "env value not a string",
        "[servers.beta.env]\nDEBUG = 1",
        "servers.beta.env.DEBUG",
        ["an integer (1)", "a string"],
    ),
    (
        "glob as a file type",
        '[servers.alpha]\nfile_types = [".a", "*.py"]',
        "servers.alpha.file_types[1]",
        ['"*.py"', 'extension like ".py"'],
    ),
    (
        "servers not a table",
        "servers = 3",
        "servers",
        ["an integer (3)", "a table of servers"],
    ),
    (
        "server entry not a table",
        "[servers]\nalpha = 1",
        "servers.alpha",
        ["an integer (1)", "a table"],
    ),
    (
        "unusable server name",
        '[servers."a b"]\ncommand = ["x"]',
        'servers."a b"',
        ["not a usable name", "letters, digits"],
    ),
    (
        "new server without a command",
        '[servers.alpah]\nfile_types = [".a"]',
        "servers.alpah",
        ["no command", 'did you mean "alpha"', "command = "],
    ),
    (
        "unknown linter format",
        '[linters.gamma]\nformat = "xml"',
        "linters.gamma.format",
        ['"xml" is not allowed', '"json", "regex"'],
    ),
    (
        "unknown input",
        '[linters.gamma]\ninput = "pipe"',
        "linters.gamma.input",
        ['"pipe"', '"stdin", "file"'],
    ),
    (
        "unknown json mapping key",
        '[linters.gamma.json]\nlnie = "l"',
        "linters.gamma.json.lnie",
        ['did you mean "line"', "items, line"],
    ),
    (
        "json path not a string",
        "[linters.gamma.json]\nline = 1",
        "linters.gamma.json.line",
        ["an integer (1)", "dotted field path"],
    ),
    (
        "bad severity in severity_map",
        '[linters.gamma.json]\nseverity_map = { W = "warn" }',
        "linters.gamma.json.severity_map.W",
        ['"warn" is not allowed', 'did you mean "warning"', '"information"'],
    ),
    (
        "bad default_severity",
        '[linters.gamma.json]\ndefault_severity = "fatal"',
        "linters.gamma.json.default_severity",
        ['"fatal" is not allowed', '"error", "warning", "information", "hint"'],
    ),
    (
        "code_url with another placeholder",
        '[linters.gamma.json]\ncode_url = "https://x/{rule}"',
        "linters.gamma.json.code_url",
        ["has another placeholder", "{code}"],
    ),
    (
        "unknown column_unit",
        '[linters.gamma.json]\ncolumn_unit = "utf16"',
        "linters.gamma.json.column_unit",
        ['"utf16" is not allowed', 'did you mean "utf-16"'],
    ),
    (
        "shared settings are checked in options too",
        '[linters.gamma.options]\nseverity_map = { W = "warn" }',
        "linters.gamma.options.severity_map.W",
        ['"warn" is not allowed', '"warning"'],
    ),
    (
        "code_prefix not a string",
        "[linters.gamma.options]\ncode_prefix = 1",
        "linters.gamma.options.code_prefix",
        ["an integer (1)", "a string"],
    ),
    (
        "regex that does not compile",
        "[linters.gamma]\nregex = '(?P<line>\\d+'",
        "linters.gamma.regex",
        ["invalid regular expression", "named groups"],
    ),
    (
        "regex without a message group",
        "[linters.gamma]\nregex = '(?P<line>\\d+)'",
        "linters.gamma.regex",
        ['no group named "message"'],
    ),
    (
        "regex with an unknown group",
        "[linters.gamma]\nregex = '(?P<line>\\d+) (?P<msg>.*)'",
        "linters.gamma.regex",
        ['unknown group "msg"', "groups among: line"],
    ),
    (
        "regex format without a regex",
        '[linters.delta]\ncommand = ["d", "-"]\ninput = "stdin"\nformat = "regex"',
        "linters.delta.format",
        ["no regex is set"],
    ),
    (
        "unknown placeholder",
        '[linters.gamma]\ncommand = ["gamma", "${path}"]',
        "linters.gamma.command[1]",
        ['"${path}" is not a placeholder', "${file}, ${root}, ${filename}"],
    ),
    (
        "exit code out of range",
        "[linters.gamma]\nok_exit_codes = [0, 300]",
        "linters.gamma.ok_exit_codes[1]",
        ["an integer (300)", "0 to 255"],
    ),
    (
        "unknown run_on event",
        '[linters.gamma]\nrun_on = ["type"]',
        "linters.gamma.run_on[0]",
        ['"type" is not allowed', '"open", "save", "change"'],
    ),
    (
        "linter key on a server",
        '[servers.alpha]\nformat = "json"',
        "servers.alpha.format",
        ["unknown key"],
    ),
]


@pytest.mark.parametrize(
    ("text", "key", "fragments"),
    [case[1:] for case in ERROR_CASES],
    ids=[case[0] for case in ERROR_CASES],
)
def test_error_names_file_key_and_expectation(
    layers: Layers, text: str, key: str, fragments: list[str]
) -> None:
    path = layers.write("project", text)
    with pytest.raises(ConfigError) as info:
        layers.load()
    message = str(info.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert info.value.file == str(path)
    assert info.value.key == key
    assert "expected" in message
    for fragment in fragments:
        assert fragment in message, message


def test_error_in_pyproject_names_the_tool_table(tmp_path: Path) -> None:
    pyproject = write(tmp_path / "pyproject.toml", '[tool.lspmux.servers.alpha]\nrole = "x"\n')
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert str(info.value).startswith(f"{pyproject}: tool.lspmux.servers.alpha.role: ")


def test_missing_command_is_blamed_on_the_file_that_added_the_entry(layers: Layers) -> None:
    user = layers.write("user", '[servers.delta]\nfile_types = [".d"]')
    layers.write("project", "[servers.delta]\ndisabled = true")
    with pytest.raises(ConfigError) as info:
        layers.load()
    assert str(info.value).startswith(f"{user}: servers.delta: no command")


def test_linter_settings_that_need_no_error(tmp_path: Path) -> None:
    """The runner appends the file when input = "file" and no argument names it; the json
    parser has default field paths; parser options are free-form beyond the shared ones."""
    defaults = write(
        tmp_path / "d.toml",
        '[linters.eps]\ncommand = ["eps", "--check"]\ninput = "file"\n'
        '[linters.eps.options]\nformat_diagnostic = false\ncolumn_unit = "bytes"\n'
        '[linters.zeta]\ncommand = ["zeta", "${file}"]\nformat = "regex"\n'
        "regex = '^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.+)$'\n",
    )
    config = load_config(user_config=None, defaults=defaults)
    assert config.linters["eps"].json == {}
    assert config.linters["eps"].options == {"format_diagnostic": False, "column_unit": "bytes"}
    assert config.linters["zeta"].regex is not None


def test_every_mapping_setting_is_checked() -> None:
    from lspmux.config.linter_checks import _MAPPING_SETTING_CHECKS, MAPPING_SETTINGS

    assert set(_MAPPING_SETTING_CHECKS) == set(MAPPING_SETTINGS)


def test_toml_syntax_error_names_file_and_line(layers: Layers) -> None:
    path = layers.write("user", 'request_timeout = 3\n[servers.alpha\ncommand = ["x"]\n')
    with pytest.raises(ConfigError) as info:
        layers.load()
    message = str(info.value)
    assert message.startswith(f"{path}: invalid TOML: ")
    assert "line 2" in message


def test_file_that_is_not_utf8(layers: Layers) -> None:
    layers.user.parent.mkdir(parents=True)
    layers.user.write_bytes(b"request_timeout = 3 # \xff\xfe\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(layers.user))}: not UTF-8"):
        layers.load()


def test_missing_explicit_files(tmp_path: Path) -> None:
    defaults = write(tmp_path / "d.toml", DEFAULTS)
    with pytest.raises(ConfigError, match=r"nope\.toml: file not found"):
        load_config(extra_files=[tmp_path / "nope.toml"], defaults=defaults)
    with pytest.raises(ConfigError, match=r"user\.toml: file not found"):
        load_config(user_config=tmp_path / "user.toml", defaults=defaults)


def test_extra_pyproject_without_tool_table(tmp_path: Path) -> None:
    extra = write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    with pytest.raises(ConfigError, match=r"no \[tool\.lspmux\] table"):
        load_config(extra_files=[extra], defaults=write(tmp_path / "d.toml", DEFAULTS))


def test_an_error_in_the_defaults_names_the_defaults_file(tmp_path: Path) -> None:
    broken = write(tmp_path / "d.toml", '[servers.alpha]\ncommand = ["a"]\nrole = 1\n')
    with pytest.raises(ConfigError) as info:
        load_config(defaults=broken)
    assert str(info.value).startswith(f"{broken}: servers.alpha.role: found an integer (1)")


# -- format_config ---------------------------------------------------------------------------


def make_executable(path: Path) -> Path:
    write(path, "#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_format_text_marks_found_missing_disabled_and_origins(
    layers: Layers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    alpha = make_executable(bin_dir / "alpha-ls")
    monkeypatch.setenv("PATH", str(bin_dir))
    user = layers.write(
        "user",
        '[servers.alpha.settings.alpha.lint]\nlevel = "strict"\n[linters.gamma]\ndisabled = true',
    )
    text = format_config(layers.load())
    assert f"[servers.alpha]  # found: {alpha}" in text
    assert "[servers.beta]  # not found: beta-ls" in text
    assert "[linters.gamma]  # disabled (not found: gamma)" in text
    assert f'settings.alpha.lint.level = "strict"  # from {user}' in text
    assert "settings.alpha.lint.enabled = true\n" in text  # from defaults: no note
    assert f"disabled = true  # from {user}" in text
    assert "# available (enabled and installed): 1 of 2 servers, 0 of 1 linters" in text


def test_format_only_available(
    layers: Layers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_executable(tmp_path / "bin" / "beta-ls")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    text = format_config(layers.load(), only_available=True)
    assert "[servers.beta]" in text
    assert "[servers.alpha]" not in text
    assert "[linters.gamma]" not in text


def test_format_finds_project_local_executables_under_root(
    layers: Layers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    local = make_executable(tmp_path / "ws" / "node_modules" / ".bin" / "alpha-ls")
    assert "[servers.alpha]  # not found" in format_config(layers.load())
    # not trusted: a workspace's own executable is not used
    assert "[servers.alpha]  # not found" in format_config(layers.load(), root=tmp_path / "ws")
    save(trusted(TrustDB(), tmp_path / "ws", None))
    text = format_config(layers.load(), root=tmp_path / "ws")
    assert f"[servers.alpha]  # found: {local}" in text


def test_format_text_is_toml_that_loads_back_to_the_same_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")
    project = write(
        tmp_path / "p" / "lspmux.toml",
        'request_timeout = 20\n[servers.ruff]\nexcept_features = ["codeAction"]\n'
        '[servers.ruff.settings]\nlint = { select = ["E", "F"] }\n'
        '[servers."c++ls"]\ncommand = ["my-ls"]\ninitialization_options = {}\n'
        'settings = { "a.b" = { "c d" = 1, empty = {} } }\n',
    )
    config = load_config(project.parent)
    text = format_config(config)
    tomllib.loads(text)  # valid TOML, comments and all
    again = load_config(user_config=None, defaults=write(tmp_path / "again.toml", text))
    assert again.servers == config.servers
    assert again.linters == config.linters
    assert again.request_timeout == config.request_timeout


def test_format_json(layers: Layers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_executable(tmp_path / "bin" / "gamma")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    user = layers.write("user", "[servers.alpha]\nrequest_timeout = 5")
    doc = json.loads(format_config(layers.load(), as_json=True))
    assert doc["files"] == [str(layers.defaults), str(user)]
    assert doc["servers"]["alpha"]["command"] == ["alpha-ls", "--stdio"]
    assert doc["servers"]["alpha"]["request_timeout"] == 5.0
    assert doc["servers"]["alpha"]["available"] is False
    assert doc["servers"]["alpha"]["executable"] is None
    assert doc["linters"]["gamma"]["executable"] == str(tmp_path / "bin" / "gamma")
    assert doc["linters"]["gamma"]["json"]["severity_map"] == {"E": "error"}
    assert doc["origins"]["servers.alpha.request_timeout"] == str(user)
    only = json.loads(format_config(layers.load(), as_json=True, only_available=True))
    assert list(only["servers"]) == []
    assert list(only["linters"]) == ["gamma"]


def test_executable_bit_matters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = write(tmp_path / "bin" / "alpha-ls", "not executable")
    assert not os.access(plain, os.X_OK)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    config = load_config(user_config=None, defaults=write(tmp_path / "d.toml", DEFAULTS))
    assert config.servers["alpha"].resolve_command() is None
