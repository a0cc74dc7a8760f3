"""The Rust lspmux's configuration file is accepted and read with the same meaning.

`RUST_README_EXAMPLE` is the example configuration of the Rust tool's README (ra-multiplex,
whose file the successor lspmux reads under `~/.config/lspmux/config.toml`), verbatim: every
key at its default, with the comments. It must load as the user file, and each key must land
on the model with the meaning the Rust tool gives it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lspmux.config.loader import ConfigError, format_config, load_config
from lspmux.config.model import Config
from lspmux.log_filters import parse as parse_log_filters

RUST_README_EXAMPLE = """\
# this is an example configuration file for ra-multiplex
#
# all configuration options here are set to their default value they'll have if
# they're not present in the file or if the config file is missing completely.

# time in seconds after which a rust-analyzer server instance with no clients
# connected will get killed to save system memory.
#
# you can set this option to `false` for infinite timeout
instance_timeout = 300 # after 5 minutes

# time in seconds how long to wait between the gc task checks for disconnected
# clients and possibly starts a timeout task. the value must be at least 1.
gc_interval = 10 # every 10 seconds

# ip address and port on which ra-multiplex-server listens
# or unix socket path on *nix operating systems
#
# the default "127.0.0.1" only allows connections from localhost which is
# preferred since the protocol doesn't worry about security.
# ra-multiplex server expects the filesystem structure and contents to be the
# same on its machine as on ra-multiplex's machine. if you want to run the
# server on a different computer it's theoretically possible but at least for
# now you're on your own.
#
# ports below 1024 will typically require root privileges and should be
# avoided, the default was picked at random, this only needs to change if
# another application happens to collide with ra-multiplex.
listen = ["127.0.0.1", 27631] # localhost & some random unprivileged port
# listen = "/var/run/ra-mux/ra-mux.sock" # unix socket

# ip address and port to which ra-multiplex will connect to
# or unix socket path on *nix operating systems
#
# this should usually just match the value of `listen`
connect = ["127.0.0.1", 27631] # same as `listen`
# connect = "/var/run/ra-mux/ra-mux.sock" # same as `listen`

# default log filters
#
# RUST_LOG env variable overrides this option, both use the same syntax which
# is documented in the `env_logger` documentation here:
# <https://docs.rs/env_logger/0.9.0/env_logger/index.html#enabling-logging>
log_filters = "info"

# environment variable names passed from `ra-multiplex client` to the server
#
# By default no variables are passed and all servers are spawned in
# the same environment as the `ra-multiplex server` is.
# When a name like "LD_LIBRARY_PATH" is specified, the proxy reads the variable
# value from its environment and passes the variable with the value set in the
# proxy environment to the server, which then passes it further to the server
# executable.
#
# If "PATH" is specified here then the PATH from the client environment is
# going to be used for looking up a relative `--server-path`.
# Example: pass_environment = ["PATH", "LD_LIBRARY_PATH"]
pass_environment = []
"""


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return home


def user_file(home: Path, text: str) -> Path:
    path = home / ".config" / "lspmux" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_user(home: Path, text: str) -> Config:
    user_file(home, text)
    return load_config(None)


def test_the_rust_readme_example_loads_from_the_shared_path(isolated_home: Path) -> None:
    path = user_file(isolated_home, RUST_README_EXAMPLE)
    config = load_config(None)
    assert str(path) in config.files
    assert config.instance_timeout == 300.0
    assert config.gc_interval == 10.0
    assert config.listen == "tcp:127.0.0.1:27631"
    assert config.connect == "tcp:127.0.0.1:27631"
    assert config.log_filters == "info"
    assert config.pass_environment == ()
    assert config.origins["gc_interval"] == str(path)
    # the servers of the built-in table are all still there
    assert "rust-analyzer" in config.servers


def test_without_the_keys_the_rust_defaults_hold_where_lspmux_uses_them() -> None:
    config = load_config(None, user_config=None)
    assert config.instance_timeout == 300.0
    assert config.gc_interval == 10.0
    assert config.pass_environment == ("*",)  # the Rust lspmux's default: every variable
    # lspmux's own default address: a private Unix socket (docs/sharing.md says why)
    assert config.listen is None and config.connect is None
    assert config.log_filters is None


def test_instance_timeout_false_means_never(isolated_home: Path) -> None:
    assert load_user(isolated_home, "instance_timeout = false\n").instance_timeout is None
    assert load_user(isolated_home, "instance_timeout = 0\n").instance_timeout == 0.0
    assert load_user(isolated_home, "instance_timeout = 2.5\n").instance_timeout == 2.5


def test_socket_paths_and_lspmux_addresses(isolated_home: Path) -> None:
    config = load_user(
        isolated_home, 'listen = "/var/run/ra-mux/ra-mux.sock"\nconnect = "tcp:[::1]:4000"\n'
    )
    assert config.listen == "unix:/var/run/ra-mux/ra-mux.sock"
    assert config.connect == "tcp:[::1]:4000"
    home_socket = load_user(isolated_home, 'listen = "~/mux.sock"\n').listen
    assert home_socket == f"unix:{isolated_home}/mux.sock"


def test_pass_environment_takes_names_and_globs(isolated_home: Path) -> None:
    config = load_user(isolated_home, 'pass_environment = ["PATH", "CARGO_*", "*"]\n')
    assert config.pass_environment == ("PATH", "CARGO_*", "*")


@pytest.mark.parametrize(
    ("text", "key", "says"),
    [
        ("instance_timeout = true\n", "instance_timeout", "or false (never)"),
        ('instance_timeout = "5m"\n', "instance_timeout", 'found a string ("5m")'),
        ("instance_timeout = -1\n", "instance_timeout", "found -1"),
        ("gc_interval = 0\n", "gc_interval", "a number of seconds > 0"),
        ("gc_interval = false\n", "gc_interval", "found a boolean"),
        ('listen = ["127.0.0.1"]\n', "listen", "[HOST, PORT] pair"),
        ('listen = ["127.0.0.1", 70000]\n', "listen", "port from 1 to 65535"),
        ('connect = "relative.sock"\n', "connect", "must be absolute"),
        ("connect = 27631\n", "connect", '["127.0.0.1", 27631] (TCP)'),
        ('log_filters = "lspmux=loud"\n', "log_filters", "'loud' is not a level"),
        ("log_filters = 3\n", "log_filters", 'a tracing filter like "info"'),
        ('pass_environment = "PATH"\n', "pass_environment", "a list of variable names"),
        ('pass_environment = ["A=B"]\n', "pass_environment[0]", "environment variable name"),
    ],
)
def test_bad_values_name_the_file_the_key_and_what_is_expected(
    isolated_home: Path, text: str, key: str, says: str
) -> None:
    path = user_file(isolated_home, text)
    with pytest.raises(ConfigError) as err:
        load_config(None)
    message = str(err.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert says in message, message


def test_an_untrusted_project_file_cannot_set_the_environment_or_the_address(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "lspmux.toml").write_text(
        'pass_environment = ["SECRET_*"]\nconnect = "/tmp/x.sock"\ngc_interval = 3\n'
    )
    config = load_config(project, user_config=None)
    assert config.pass_environment == ("*",) and config.connect is None
    assert config.gc_interval == 3.0  # harmless keys still apply
    assert set(config.untrusted_keys) == {"pass_environment", "connect"}


def test_lspmux_config_shows_the_daemon_keys(isolated_home: Path) -> None:
    path = user_file(isolated_home, "instance_timeout = false\nlisten = ['127.0.0.1', 27631]\n")
    text = format_config(load_config(None))
    assert "instance_timeout = false  # from " + str(path) in text
    assert f'listen = "tcp:127.0.0.1:27631"  # from {path}' in text
    assert "gc_interval = 10.0" in text
    assert 'pass_environment = ["*"]' in text


@pytest.mark.parametrize(
    ("spec", "levels"),
    [
        ("info", {"lspmux": "info"}),
        ("warn", {"lspmux": "warning"}),
        ("trace", {"lspmux": "debug"}),
        ("off", {"lspmux": "off"}),
        ("lspmux=debug,warn", {"lspmux": "debug"}),  # the target's directive wins
        ("warn,lspmux=error", {"lspmux": "error"}),
        ("ra_multiplex::daemon=trace", {"lspmux.daemon": "debug"}),
        ("tokio=warn", {}),  # names no logger of lspmux
        ("lspmux", {"lspmux": "debug"}),  # a bare target: everything in it
        ("lspmux[conn{id=1}]=info", {"lspmux": "info"}),
        ("", {}),
    ],
)
def test_tracing_filters_map_onto_lspmux_loggers(spec: str, levels: dict[str, str]) -> None:
    assert parse_log_filters(spec) == levels
