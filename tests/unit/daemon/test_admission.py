"""What a daemon client may ask for (lspmux.daemon.admission): any server of its own user's
choosing, found on the client's PATH, refused only when a workspace the user has not trusted
ships it; its environment filtered by `pass_environment`; and, with `allowed_servers` set, the
stricter rule (only those servers, arguments and environment only where `client_may_set`
allows)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from lspmux.config import trust
from lspmux.config.loader import load_config
from lspmux.config.model import Config
from lspmux.daemon.admission import (
    AllowList,
    client_request,
    one_server_config,
    passed_environment,
    with_environment,
    workspace_folders,
)
from lspmux.errors import InvalidRequest, RequestFailed

HINT = "~/.config/lspmux/config.toml"


def config(tmp_path: Path, text: str = "") -> Config:
    extra = []
    if text:
        path = tmp_path / "c.toml"
        path.write_text(text)
        extra.append(path)
    return load_config(None, extra, user_config=None)


def ask(cfg: Config, folders: tuple[str, ...] = (), **options: object) -> object:
    return client_request(options, cfg, AllowList(cfg), HINT, folders)


@pytest.fixture(autouse=True)
def _private_trust_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def executable(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


# -- the same user may name any server --------------------------------------------------------


def test_a_client_may_name_any_server_with_arguments_environment_and_cwd(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    asked = ask(
        cfg,
        server="clangd",
        args=["--background-index", "--clang-tidy"],  # oh-my-pi's clangd
        env={"CC": "gcc"},
        cwd=str(tmp_path),
    )
    assert asked.server == "clangd" and asked.args == ("--background-index", "--clang-tidy")
    assert asked.env == {"CC": "gcc"} and asked.cwd == str(tmp_path) and asked.ignored == ()
    assert asked.executable == shutil.which("clangd")


def test_an_absolute_path_the_daemons_path_does_not_know_works(tmp_path: Path) -> None:
    own = executable(tmp_path / "tools", "my-server")
    asked = ask(config(tmp_path), server=str(own), folders=(str(tmp_path / "project"),))
    assert asked.executable == str(own)
    [server] = one_server_config(
        config(tmp_path), str(own), [], {}, asked.executable
    ).servers.values()
    assert server.command == (str(own),) and server.name == "my-server"


def test_the_server_is_looked_up_on_the_clients_path(tmp_path: Path) -> None:
    tools = tmp_path / "client-bin"
    own = executable(tools, "only-the-client-has-it")
    asked = ask(config(tmp_path), server="only-the-client-has-it", env={"PATH": str(tools)})
    assert asked.executable == str(own)
    with pytest.raises(RequestFailed, match="on the daemon's PATH"):
        ask(config(tmp_path), server="only-the-client-has-it")
    relative = ask(
        config(tmp_path),
        server="./client-bin/only-the-client-has-it",
        cwd=str(tmp_path),
        folders=(str(tmp_path / "project"),),
    )
    assert relative.executable == str(own)


def test_an_executable_an_untrusted_workspace_ships_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shipped = executable(project / "bin", "rust-analyzer")
    with pytest.raises(RequestFailed) as info:
        ask(config(tmp_path), server=str(shipped), folders=(str(project),))
    message = info.value.message
    assert str(project) in message and f"lspmux trust {project}" in message
    # …also found through the client's PATH, or through its cwd when it names no folder
    with pytest.raises(RequestFailed, match="not trusted"):
        ask(config(tmp_path), server="rust-analyzer", env={"PATH": str(project / "bin")},
            folders=(str(project),))  # fmt: skip
    with pytest.raises(RequestFailed, match="not trusted"):
        ask(config(tmp_path), server="bin/rust-analyzer", cwd=str(project))
    trust.save(trust.trusted(trust.load(), project, None))
    assert ask(config(tmp_path), server=str(shipped), folders=(str(project),)).executable


def test_a_missing_server_is_refused_at_the_handshake(tmp_path: Path) -> None:
    with pytest.raises(RequestFailed) as info:
        ask(config(tmp_path), server="no-such-server-anywhere", env={"PATH": str(tmp_path)})
    assert "the PATH the client sent" in info.value.message
    assert "--server-path" in info.value.message


# -- pass_environment -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        (("*",), {"VIRTUAL_ENV", "WINDOWID", "ALACRITTY_SOCKET", "PATH"}),  # the default
        ((), set()),
        (("PATH", "VIRTUAL_ENV"), {"PATH", "VIRTUAL_ENV"}),
        (("*", "!WINDOWID", "!ALACRITTY_*"), {"VIRTUAL_ENV", "PATH"}),
        (("VIRTUAL_*", "P?TH"), {"VIRTUAL_ENV", "PATH"}),
        (("!PATH",), set()),  # only negative: nothing passes
    ],
)
def test_pass_environment_filters_like_the_rust_lspmux(
    patterns: tuple[str, ...], expected: set[str]
) -> None:
    env = {"VIRTUAL_ENV": "/v", "WINDOWID": "7", "ALACRITTY_SOCKET": "/s", "PATH": "/bin"}
    assert set(passed_environment(env, patterns)) == expected


def test_the_passed_environment_is_what_a_client_gets(tmp_path: Path) -> None:
    cfg = config(tmp_path, 'pass_environment = ["VIRTUAL_ENV"]\n')
    assert cfg.pass_environment == ("VIRTUAL_ENV",)
    assert config(tmp_path).pass_environment == ("*",)
    asked = ask(cfg, server="ruff", env={"VIRTUAL_ENV": "/a/.venv", "WINDOWID": "1"})
    assert asked.env == {"VIRTUAL_ENV": "/a/.venv"}
    routed = ask(cfg, env={"VIRTUAL_ENV": "/a/.venv", "WINDOWID": "1"}, cwd="/w")
    assert routed.server is None and routed.env == {"VIRTUAL_ENV": "/a/.venv"}
    assert routed.cwd == "/w"  # the last fallback for the root, as with the Rust lspmux
    both = with_environment(cfg, routed.env)
    assert all(s.env.get("VIRTUAL_ENV") == "/a/.venv" for s in both.servers.values())
    assert all(lt.env.get("VIRTUAL_ENV") == "/a/.venv" for lt in both.linters.values())


def test_one_server_config_keeps_the_name_and_puts_the_argv_in_the_key(tmp_path: Path) -> None:
    base = config(tmp_path)
    one = one_server_config(base, "clangd", ["--background-index"], {"A": "1"}, "/usr/bin/clangd")
    [server] = one.servers.values()
    assert server.name == "clangd"  # the instance key (backends/pool.py) holds the argv
    assert server.command == ("/usr/bin/clangd", "--background-index")
    assert server.env == {"A": "1"} and one.pass_environment == base.pass_environment


@pytest.mark.parametrize(
    "options",
    [{"server": ""}, {"server": 3}, {"args": "x"}, {"env": {"A": 1}}, {"cwd": ["x"]}],
)
def test_malformed_options_are_invalid(tmp_path: Path, options: dict[str, object]) -> None:
    with pytest.raises(InvalidRequest):
        ask(config(tmp_path), **({"server": "clangd"} | options))


def test_workspace_folders_of_an_initialize() -> None:
    assert workspace_folders(
        {"workspaceFolders": [{"uri": "file:///a%20b", "name": "x"}], "rootUri": "file:///c"}
    ) == ["/a b"]
    assert workspace_folders({"rootUri": "file:///c"}) == ["/c"]
    assert workspace_folders({"rootPath": "/d"}) == ["/d"]
    assert workspace_folders({}) == []


# -- allowed_servers: the stricter rule, kept for who wants it ---------------------------------


STRICT = 'allowed_servers = ["clangd", "ruff"]\n'


def test_with_allowed_servers_a_client_names_a_configured_server_as_configured(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path, STRICT)
    asked = ask(cfg, server="clangd", args=[], env={}, cwd=str(tmp_path))
    assert asked.server == "clangd" and asked.args == () and asked.env == {}
    assert asked.cwd is None and asked.ignored == ("cwd",)  # ignored, not used as the root


@pytest.mark.parametrize(
    ("options", "what"),
    [
        ({"args": ["format", "/etc"]}, "args"),  # ruff format <any folder>
        ({"env": {"NODE_OPTIONS": "--require evil.js"}}, "env"),
        ({"args": ["x"], "env": {"A": "1"}}, "args and env"),
    ],
)
def test_with_allowed_servers_arguments_and_environment_need_client_may_set(
    tmp_path: Path, options: dict[str, object], what: str
) -> None:
    cfg = config(tmp_path, STRICT)
    with pytest.raises(RequestFailed) as info:
        ask(cfg, server="ruff", **options)
    message = info.value.message
    assert f"set the {what} of 'ruff'" in message and "allowed_servers" in message
    assert "client_may_set" in message and "[servers.ruff]" in message and HINT in message


def test_with_allowed_servers_client_may_set_allows_what_it_names(tmp_path: Path) -> None:
    cfg = config(tmp_path, STRICT + '[servers.ruff]\nclient_may_set = ["args", "env", "cwd"]\n')
    asked = ask(cfg, server="ruff", args=["server", "--preview"], env={"RUFF_X": "1"}, cwd="/w")
    assert asked.args == ("server", "--preview") and asked.env == {"RUFF_X": "1"}
    assert asked.cwd == "/w" and asked.ignored == ()
    # the environment a client may set is what pass_environment lets through
    narrow = config(tmp_path, STRICT + 'pass_environment = ["RUFF_*"]\n')
    assert ask(narrow, server="clangd", env={"WINDOWID": "3"}).env == {}


def test_with_allowed_servers_other_servers_are_refused(tmp_path: Path) -> None:
    cfg = config(tmp_path, STRICT)
    with pytest.raises(RequestFailed, match="allowed_servers"):
        ask(cfg, server=sys.executable)
    routed = ask(cfg, args=["x"], env={"A": "1"}, cwd="/w")  # routing: nothing a client sends
    assert routed.server is None and routed.cwd is None and routed.env == {}
    assert routed.ignored == ("args", "env", "cwd")


def test_client_may_set_without_allowed_servers_changes_nothing(tmp_path: Path) -> None:
    cfg = config(tmp_path, '[servers.ruff]\nclient_may_set = ["args"]\n')
    asked = ask(cfg, server="ruff", args=["server"], env={"A": "1"})
    assert asked.args == ("server",) and asked.env == {"A": "1"}
    assert os.path.isabs(asked.executable or "")
