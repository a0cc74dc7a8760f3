"""Trust: a project's own configuration and executables are used only once the user trusted
them (lspmux.config.trust, lspmux.config.untrusted, and their use by the loader and the model).

Every test points XDG_DATA_HOME (the trust database) and HOME into tmp_path.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from lspmux import trust as trust_cmd
from lspmux.config import trust
from lspmux.config.loader import load_config
from lspmux.config.model import Config, ServerConfig
from lspmux.config.resolve import resolve_command
from lspmux.config.trust import TrustDB, revoked, save, trust_db_path, trusted

DEFAULTS = """
[servers.gopls]
command = ["gopls"]
file_types = [".go"]

[servers.pyls]
command = ["pyls"]
file_types = [".py"]
disabled = true

[linters.lint]
command = ["lint", "${file}"]
file_types = [".go"]
"""

EVIL = """
request_timeout = 7
allowed_servers = ["sh"]

[servers.gopls]
command = ["./bin/evil", "--stdio"]
env = { NODE_OPTIONS = "--require evil.js" }
settings = { gopls = { overrideCommand = ["evil"] } }
file_types = [".go", ".gop"]
only_features = ["hover"]
request_timeout = 3
disabled = false

[servers.pyls]
disabled = false


[servers.mine]
command = ["mine-ls"]
file_types = [".m"]

[linters.lint]
command = ["evil-lint"]
debounce = 1.0
"""


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / "lspmux.toml").write_text(EVIL)
    return ws


def load(tmp_path: Path, ws: Path) -> Config:
    defaults = tmp_path / "defaults.toml"
    defaults.write_text(DEFAULTS)
    return load_config(ws, user_config=None, defaults=defaults)


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


# -- the database --------------------------------------------------------------------------------


def test_the_database_lives_under_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert trust_db_path() == tmp_path / "data" / "lspmux" / "trust.json"
    monkeypatch.setenv("HOME", "/h")
    monkeypatch.setenv("XDG_DATA_HOME", "rel")  # relative: ignored, as the XDG spec asks
    assert trust_db_path() == Path("/h/.local/share/lspmux/trust.json")


def test_trust_records_the_exact_content_and_is_private(tmp_path: Path, project: Path) -> None:
    file = project / "lspmux.toml"
    path = save(trusted(TrustDB(), project, file))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    db = trust.load()
    assert db.file_trusted(file) and db.dir_trusted(project)
    # Exactly the folder: a root nested inside it (a dependency, a clone) is not trusted by it.
    assert not db.dir_trusted(project / "sub")
    assert not db.dir_trusted(tmp_path) and not db.dir_trusted(str(project) + "-other")
    file.write_text(EVIL + "\n")  # one byte more: trusted no longer
    assert not trust.load().file_trusted(file)
    db, gone = revoked(trust.load(), project, file)
    save(db)
    assert sorted(gone) == sorted([str(project), str(file)])
    assert trust.load() == TrustDB()


def test_a_corrupt_database_trusts_nothing(
    tmp_path: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = trust_db_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with caplog.at_level(logging.WARNING, "lspmux.config"):
        assert trust.load() == TrustDB()
    assert "unreadable" in caplog.text
    path.write_text(json.dumps({"files": [], "dirs": "x"}))
    assert trust.load() == TrustDB()


# -- an untrusted project file -------------------------------------------------------------------


def test_an_untrusted_project_cannot_change_what_runs(tmp_path: Path, project: Path) -> None:
    config = load(tmp_path, project)
    assert config.project_trusted is False
    gopls = config.servers["gopls"]
    assert gopls.command == ("gopls",) and gopls.env == {} and gopls.settings == {}
    # what cannot run anything still applies
    assert gopls.file_types == (".go", ".gop") and gopls.only_features == ("hover",)
    assert gopls.request_timeout == 3 and config.request_timeout == 7
    assert config.linters["lint"].command == ("lint", "${file}")
    assert config.linters["lint"].debounce == 1.0
    assert "mine" not in config.servers  # it could only run the command it names
    assert config.servers["pyls"].disabled  # turned off by the defaults: stays off
    assert config.allowed_servers is None
    assert set(config.untrusted_keys) == {
        "allowed_servers",
        "servers.gopls.command",
        "servers.gopls.env",
        "servers.gopls.settings",
        "servers.pyls.disabled",
        "servers.mine",
        "linters.lint.command",
    }
    notice = config.trust_notice
    assert notice is not None and "not trusted" in notice
    assert f"lspmux trust {project}" in notice and "servers.gopls.command" in notice


def test_a_trusted_project_applies_whole_until_it_changes(tmp_path: Path, project: Path) -> None:
    save(trusted(TrustDB(), project, project / "lspmux.toml"))
    config = load(tmp_path, project)
    assert config.project_trusted is True and config.trust_notice is None
    assert config.servers["gopls"].command == ("./bin/evil", "--stdio")
    assert config.servers["mine"].command == ("mine-ls",)
    (project / "lspmux.toml").write_text(EVIL.replace("evil-lint", "other-lint"))
    changed = load(tmp_path, project)
    assert changed.project_trusted is False
    assert changed.servers["gopls"].command == ("gopls",)


def test_pyproject_tool_table_needs_trust_too(tmp_path: Path) -> None:
    ws = tmp_path / "py"
    ws.mkdir()
    (ws / "pyproject.toml").write_text('[tool.lspmux.servers.gopls]\ncommand = ["x"]\n')
    assert load(tmp_path, ws).servers["gopls"].command == ("gopls",)
    save(trusted(TrustDB(), ws, ws / "pyproject.toml"))
    assert load(tmp_path, ws).servers["gopls"].command == ("x",)


def test_an_untrusted_file_that_sets_nothing_to_run_says_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "calm"
    ws.mkdir()
    (ws / "lspmux.toml").write_text('[servers.gopls]\nfile_types = [".go"]\n')
    config = load(tmp_path, ws)
    assert config.project_trusted is False and config.trust_notice is None


def test_the_warning_is_logged_once(
    tmp_path: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "lspmux.config"):
        load(tmp_path, project)
        load(tmp_path, project)
    assert caplog.text.count("is not trusted") == 1


# -- executables shipped in the workspace ---------------------------------------------------------


def test_workspace_executables_run_only_in_a_trusted_folder(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    local = executable(project / "bin" / "gopls")
    server = ServerConfig(name="gopls", command=("gopls",))
    assert server.resolve_command(project) is None  # the repository's bin/gopls is not used
    assert resolve_command(("gopls",), project) is None
    config = load(tmp_path, project)
    assert config.untrusted_executables == (str(local),)
    assert config.trust_notice is not None and str(local) in config.trust_notice
    save(trusted(TrustDB(), project, None))
    assert server.resolve_command(project) == [str(local)]
    assert server.resolve_command(project / "sub") is None  # no bin/ there
    assert load(tmp_path, project).untrusted_executables == ()


def test_path_is_used_in_an_untrusted_folder(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_path = executable(tmp_path / "path" / "gopls")
    executable(project / "bin" / "gopls")
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert resolve_command(("gopls",), project) == [str(on_path)]
    assert load(tmp_path, project).untrusted_executables == ()


def test_a_symlinked_workspace_is_the_same_folder(tmp_path: Path, project: Path) -> None:
    link = tmp_path / "link"
    os.symlink(project, link)
    save(trusted(TrustDB(), link, link / "lspmux.toml"))
    config = load(tmp_path, project)
    assert config.project_trusted is True
    assert trust.load().dir_trusted(project)


# -- `lspmux trust` and `lspmux doctor` -----------------------------------------------------------


def test_the_trust_command_trusts_lists_and_revokes(tmp_path: Path, project: Path) -> None:
    lines = trust_cmd.command(project)
    assert any(str(project / "lspmux.toml") in line and "sha256" in line for line in lines)
    used = "\n".join(line for line in lines if line.startswith("now used from it: "))
    assert "servers.gopls.command" in used and "servers.mine" in used
    # trusted, servers.pyls (no command: no built-in entry here) would make it invalid
    assert any("trusted, this configuration is not valid" in line for line in lines)
    listed = trust_cmd.command(project, listing=True)
    assert f"folder  {project}" in listed
    assert f"file    {project / 'lspmux.toml'}  (trusted)" in listed
    (project / "lspmux.toml").write_text(EVIL + "# changed\n")
    assert f"file    {project / 'lspmux.toml'}  (CHANGED)" in trust_cmd.command(
        project, listing=True
    )
    gone = trust_cmd.command(project, revoke=True)
    assert len(gone) == 2 and all(line.startswith("no longer trusted") for line in gone)
    assert trust_cmd.command(project, listing=True)[0].startswith("nothing is trusted")
    assert "nothing to revoke" in trust_cmd.command(project, revoke=True)[0]


def test_trusting_a_subfolder_trusts_the_file_that_applies_to_it(project: Path) -> None:
    sub = project / "src"
    sub.mkdir()
    trust_cmd.command(sub)
    db = trust.load()
    assert db.file_trusted(project / "lspmux.toml")
    assert db.dir_trusted(sub) and not db.dir_trusted(project)


def test_doctor_says_whether_the_project_is_trusted(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lspmux.doctor import diagnose, render

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    executable(project / "bin" / "gopls")
    (project / "main.go").write_text("package main\n")
    config = load(tmp_path, project)
    text = render(diagnose(config, project, smoke=False), project, config)
    assert f"project config: {project / 'lspmux.toml'} is NOT trusted" in text
    assert f"run `lspmux trust {project}`" in text
    assert "workspace executables (bin/, node_modules/.bin, .venv/bin): not trusted" in text
    assert "restricted mode (so that no server runs the workspace's code): " in text
    gopls = next(line for line in text.splitlines() if " gopls " in line)
    assert "MISSING" in gopls and "is not used: this folder is not trusted" in gopls
    trust_cmd.command(project)
    config = load(tmp_path, project)
    text = render(diagnose(config, project, smoke=False), project, config)
    assert f"project config: {project / 'lspmux.toml'} (trusted)" in text
    assert "workspace executables (bin/, node_modules/.bin, .venv/bin): trusted" in text


def test_lspmux_config_says_what_an_untrusted_project_file_lost(
    tmp_path: Path, project: Path
) -> None:
    from lspmux.config.render import format_config

    text = format_config(load(tmp_path, project))
    assert f"# {project / 'lspmux.toml'} is not trusted; ignored: " in text
    assert "servers.gopls.command" in text
    doc = json.loads(format_config(load(tmp_path, project), as_json=True))
    assert doc["project_trusted"] is False and "servers.mine" in doc["untrusted_keys"]


# -- issue 20: a trusted folder is exactly that folder; links borrow nothing; trust shows all --


def test_a_trusted_folder_does_not_run_the_executables_of_a_root_nested_in_it(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    own = executable(project / "node_modules" / ".bin" / "tls")
    dep = project / "node_modules" / "dep"
    (dep / "package.json").parent.mkdir(parents=True)
    (dep / "package.json").write_text("{}")
    executable(dep / "node_modules" / ".bin" / "tls")
    vendored = project / "third_party" / "x"
    executable(vendored / "bin" / "gopls")
    (vendored / "go.mod").write_text("module x\n")
    trust_cmd.command(project)
    assert resolve_command(("tls",), project) == [str(own)]
    assert resolve_command(("tls",), dep) is None
    assert resolve_command(("gopls",), vendored) is None
    # a repository cloned under the trusted folder later is not trusted either
    clone = project / "clone"
    executable(clone / "bin" / "gopls")
    assert resolve_command(("gopls",), clone) is None


def test_a_linked_project_file_does_not_borrow_the_trust_of_its_target(
    tmp_path: Path, project: Path
) -> None:
    trust_cmd.command(project)  # the user trusts their project (and its lspmux.toml)
    evil = tmp_path / "evil"
    evil.mkdir()
    os.symlink(project / "lspmux.toml", evil / "lspmux.toml")
    config = load(tmp_path, evil)
    assert config.project_trusted is False
    assert "servers.gopls.command" in config.untrusted_keys
    assert config.servers["gopls"].command == ("gopls",)  # not ./bin/evil from evil's root
    trust_cmd.command(evil)  # trusted by its own location, with the content it shows
    assert load(tmp_path, evil).servers["gopls"].command == ("./bin/evil", "--stdio")
    assert load(tmp_path, project).project_trusted is True


def test_lspmux_trust_shows_the_commands_it_allows_and_warns_of_nothing(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (project / "lspmux.toml").write_text(EVIL.replace("[servers.pyls]\ndisabled = false\n", ""))
    with caplog.at_level(logging.WARNING):
        lines = trust_cmd.command(project)
    assert 'servers.gopls.command = ["./bin/evil", "--stdio"]' in [x.strip() for x in lines]
    assert any(x.strip().startswith('servers.mine.command = ["mine-ls"]') for x in lines)
    assert any("servers.gopls.env = " in x and "NODE_OPTIONS" in x for x in lines)
    assert any('linters.lint.command = ["evil-lint"]' in x for x in lines)
    assert not [r for r in caplog.records if "not trusted" in r.getMessage()], caplog.text
