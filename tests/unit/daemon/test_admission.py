"""What a daemon client may ask for (lspmux.daemon.admission): only configured servers, and
their arguments, environment and working directory only where `client_may_set` allows."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from lspmux.config.loader import load_config
from lspmux.config.model import Config
from lspmux.daemon.admission import AllowList, client_request
from lspmux.errors import InvalidRequest, RequestFailed

HINT = "~/.config/lspmux/config.toml"


def config(tmp_path: Path, text: str = "") -> Config:
    extra = []
    if text:
        path = tmp_path / "c.toml"
        path.write_text(text)
        extra.append(path)
    return load_config(None, extra, user_config=None)


def ask(cfg: Config, **options: object) -> object:
    return client_request(options, cfg, AllowList(cfg), HINT)


def test_a_client_names_a_configured_server_with_its_configured_arguments(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    asked = ask(cfg, server="clangd", args=[], env={}, cwd=str(tmp_path))
    assert asked.server == "clangd" and asked.args == () and asked.env == {}
    assert asked.cwd is None and asked.ignored == ("cwd",)  # ignored, not used as the root
    same = ask(cfg, server="basedpyright-langserver", args=["--stdio"])
    assert same.args == ("--stdio",)  # what the configuration says anyway


@pytest.mark.parametrize(
    ("options", "what"),
    [
        ({"args": ["format", "/etc"]}, "args"),  # ruff format <any folder>
        ({"env": {"NODE_OPTIONS": "--require evil.js"}}, "env"),
        ({"env": {"PYTHONPATH": "/tmp/evil"}}, "env"),
        ({"args": ["x"], "env": {"A": "1"}}, "args and env"),
    ],
)
def test_arguments_and_environment_are_refused_unless_allowed(
    tmp_path: Path, options: dict[str, object], what: str
) -> None:
    cfg = config(tmp_path)
    with pytest.raises(RequestFailed) as info:
        ask(cfg, server="ruff", **options)
    message = info.value.message
    assert f"set the {what} of 'ruff'" in message
    assert "client_may_set" in message and "[servers.ruff]" in message and HINT in message


def test_client_may_set_allows_what_it_names(tmp_path: Path) -> None:
    cfg = config(tmp_path, '[servers.ruff]\nclient_may_set = ["args", "env", "cwd"]\n')
    asked = ask(cfg, server="ruff", args=["server", "--preview"], env={"RUFF_X": "1"}, cwd="/w")
    assert asked.args == ("server", "--preview") and asked.env == {"RUFF_X": "1"}
    assert asked.cwd == "/w" and asked.ignored == ()
    only_args = config(tmp_path, '[servers.ruff]\nclient_may_set = ["args"]\n')
    with pytest.raises(RequestFailed, match="set the env"):
        ask(only_args, server="ruff", args=["x"], env={"A": "1"})


def test_a_server_allowed_only_by_allowed_servers_takes_nothing_from_the_client(
    tmp_path: Path,
) -> None:
    sh = shutil.which("sh")
    assert sh is not None
    cfg = config(tmp_path, 'allowed_servers = ["sh"]\n')
    assert ask(cfg, server="sh").server == "sh"
    with pytest.raises(RequestFailed, match="client_may_set"):
        ask(cfg, server="sh", args=["-c", "echo owned"])


def test_unconfigured_servers_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RequestFailed, match="allowed_servers"):
        ask(config(tmp_path), server=sys.executable)


@pytest.mark.parametrize(
    "options",
    [{"server": ""}, {"server": 3}, {"args": "x"}, {"env": {"A": 1}}, {"cwd": ["x"]}],
)
def test_malformed_options_are_invalid(tmp_path: Path, options: dict[str, object]) -> None:
    with pytest.raises(InvalidRequest):
        ask(config(tmp_path), **({"server": "clangd"} | options))


def test_routing_by_file_type_uses_nothing_a_client_sends(tmp_path: Path) -> None:
    asked = ask(config(tmp_path), args=["x"], env={"A": "1"}, cwd="/w")
    assert asked.server is None and asked.cwd is None
    assert asked.ignored == ("args", "env", "cwd")
