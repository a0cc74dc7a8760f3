"""Restricted mode (lspmux.config.restricted): the settings a server gets for a workspace root
the user has not trusted, from the `untrusted` table of its entry.

Every test points XDG_DATA_HOME (the trust database) and HOME into tmp_path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lspmux.backends.pool import Pool
from lspmux.config import restricted
from lspmux.config.checkers import ConfigError
from lspmux.config.loader import load_config
from lspmux.config.model import ServerConfig
from lspmux.config.trust import TrustDB, save, trusted


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def executable(path: Path, text: str = "#!/bin/sh\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    executable(repo / ".venv" / "bin" / "python")
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return repo


def test_the_shipped_table_restricts_what_runs_project_code(repo: Path) -> None:
    config = load_config(repo, user_config=None, trust_db=TrustDB())
    assert config.workspace_trusted is False
    for name in ("basedpyright", "pyright"):
        python = config.servers[name].settings["python"]["pythonPath"]
        assert os.path.isabs(python) and not python.startswith(str(repo) + os.sep)
    # the entry's own settings stay, the restricted ones are merged over them
    assert config.servers["basedpyright"].settings["basedpyright"]["analysis"]
    ra = config.servers["rust-analyzer"].initialization_options
    assert ra is not None
    assert ra["cargo"]["buildScripts"]["enable"] is False
    assert ra["cargo"]["runBuildScripts"] is False
    assert ra["procMacro"]["enable"] is False and ra["checkOnSave"]["enable"] is False
    ts = config.servers["typescript-language-server"].untrusted
    assert ts["initialization_options"]["tsserver"]["path"] == "${typescript_lib}"
    assert config.servers["eslint"].disabled and config.servers["zls"].disabled

    mine = load_config(repo, user_config=None, trust_db=TrustDB(dirs=(str(repo),)))
    assert mine.workspace_trusted is True
    assert "python" not in mine.servers["basedpyright"].settings
    assert mine.servers["rust-analyzer"].initialization_options is None
    assert not mine.servers["zls"].disabled


def test_the_interpreter_is_never_one_inside_the_root(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = executable(tmp_path / "usr" / "bin" / "python3")
    # an activated venv puts the repository's bin first on PATH
    env = {"PATH": os.pathsep.join([str(repo / ".venv" / "bin"), str(outside.parent)])}
    executable(repo / ".venv" / "bin" / "python3")
    assert restricted.python_outside(repo, env) == str(outside)
    # a PATH folder outside the root that links into it does not count either
    os.symlink(repo / ".venv" / "bin" / "python3", tmp_path / "python3")
    env = {"PATH": os.pathsep.join([str(tmp_path), str(outside.parent)])}
    assert restricted.python_outside(repo, env) == str(outside)


def test_the_pool_restricts_each_root_it_starts_a_server_for(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A nested root inside a trusted folder is restricted: the pool decides per root."""
    on_path = executable(tmp_path / "bin" / "fake-pyright")
    monkeypatch.setenv("PATH", str(on_path.parent))
    server = ServerConfig(
        name="py",
        command=("fake-pyright",),
        settings={"python": {"analysis": {}}},
        untrusted={"settings": {"python": {"pythonPath": "${python}"}}},
    )
    nested = repo / "vendor" / "dep"
    executable(nested / ".venv" / "bin" / "python")
    save(trusted(TrustDB(), repo, None))
    pool = Pool()
    mine = pool.get(server, repo)
    assert mine is not None and "pythonPath" not in mine.config.settings["python"]
    theirs = pool.get(server, nested)
    assert theirs is not None
    assert theirs.config.settings["python"]["analysis"] == {}
    assert not theirs.config.settings["python"]["pythonPath"].startswith(str(repo))

    off = ServerConfig(name="lint", command=("fake-pyright",), untrusted={"disabled": True})
    assert pool.get(off, nested) is None  # not started where it would run project code
    assert pool.get(off, repo) is not None


def test_an_unresolvable_restricted_mode_keeps_the_server_from_starting(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = executable(tmp_path / "bin" / "tls")  # no node_modules/typescript beside it
    monkeypatch.setenv("PATH", str(ts.parent))
    server = ServerConfig(
        name="ts",
        command=("tls",),
        untrusted={"initialization_options": {"tsserver": {"path": "${typescript_lib}"}}},
    )
    assert restricted.for_root(server, repo) is None
    lib = tmp_path / "node_modules" / "typescript" / "lib"
    lib.mkdir(parents=True)
    (lib / "tsserver.js").write_text("")
    runs = restricted.for_root(server, repo)
    assert runs is not None and runs.initialization_options == {"tsserver": {"path": str(lib)}}


def test_a_project_file_cannot_set_the_restricted_mode(tmp_path: Path, repo: Path) -> None:
    (repo / "lspmux.toml").write_text(
        '[servers.basedpyright.untrusted]\nsettings = { python = { pythonPath = ".venv/bin/python" } }\n'
    )
    config = load_config(repo, user_config=None, trust_db=TrustDB())
    assert "servers.basedpyright.untrusted" in config.untrusted_keys
    assert config.servers["basedpyright"].settings["python"]["pythonPath"] != ".venv/bin/python"


def test_a_wrong_restricted_key_names_the_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "c.toml"
    bad.write_text("[servers.x]\ncommand = ['x']\nuntrusted = { setings = {} }\n")
    with pytest.raises(ConfigError, match=r"servers\.x\.untrusted\.setings: unknown key"):
        load_config(None, [bad], user_config=None)
