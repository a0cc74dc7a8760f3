"""lspmux.dirs: every folder lspmux writes to, from the XDG variables or their defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lspmux import dirs

_XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the XDG layout is Linux's")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in _XDG:
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "home"


def test_defaults_under_home(home: Path) -> None:
    # ~/.config/lspmux/config.toml is the Rust lspmux's file too: both read the same one.
    assert dirs.user_config_file() == home / ".config" / "lspmux" / "config.toml"
    assert dirs.data_dir() == home / ".local" / "share" / "lspmux"
    assert dirs.cache_dir() == home / ".cache" / "lspmux"
    assert dirs.state_dir() == home / ".local" / "state" / "lspmux"


def test_xdg_variables_are_honoured(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in _XDG:
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    assert dirs.config_dir() == tmp_path / "xdg_config_home" / "lspmux"
    assert dirs.data_dir() == tmp_path / "xdg_data_home" / "lspmux"
    assert dirs.cache_dir() == tmp_path / "xdg_cache_home" / "lspmux"
    assert dirs.state_dir() == tmp_path / "xdg_state_home" / "lspmux"


def test_relative_xdg_variables_are_ignored(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _XDG:
        monkeypatch.setenv(name, "relative/dir")
    assert dirs.config_dir() == home / ".config" / "lspmux"
    assert dirs.cache_dir() == home / ".cache" / "lspmux"


def test_nothing_is_created_by_asking(home: Path) -> None:
    for folder in (dirs.config_dir(), dirs.data_dir(), dirs.cache_dir(), dirs.state_dir()):
        assert not folder.exists()


def test_runtime_dir() -> None:
    assert dirs.runtime_dir({"XDG_RUNTIME_DIR": "/run/user/1000"}) == Path("/run/user/1000/lspmux")
    uid = os.getuid()
    assert dirs.runtime_dir({"TMPDIR": "/var/tmp"}) == Path(f"/var/tmp/lspmux-{uid}")
    assert dirs.runtime_dir({"XDG_RUNTIME_DIR": "rel", "TMP": "/t"}) == Path(f"/t/lspmux-{uid}")
    assert dirs.runtime_dir({}) == Path(f"/tmp/lspmux-{uid}")


def test_importing_the_module_does_not_import_platformdirs() -> None:
    """The client (daemon/shim.py) imports this module; platformdirs loads on first use."""
    probe = "import sys, lspmux.dirs; print('platformdirs' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_posix_system_gets_the_xdg_layout() -> None:
    """macOS too (platformdirs' Unix class, not its ~/Library default): the config file stays
    where lspmux has always read it there."""
    from platformdirs.unix import Unix

    assert isinstance(dirs._dirs(), Unix)


@pytest.mark.parametrize(
    ("xdg", "home"),
    [
        (None, "/home/u"),
        (None, "/home/u/"),
        (None, "/"),
        ("", "/home/u"),
        ("relative/dir", "/home/u"),
        ("/xdg/config", "/home/u"),
        ("/xdg/config/", "relative"),
        ("/xdg/config", None),
        (None, "relative"),
        (None, None),
    ],
)
@pytest.mark.parametrize("kind", ["config", "data", "cache", "state"])
def test_each_dir_without_platformdirs_is_platformdirs_own(
    kind: str, xdg: str | None, home: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plain_dir` spares the client and the proxy's start platformdirs' import; where it
    answers, it answers as platformdirs does."""
    variable = f"XDG_{kind.upper()}_HOME"
    for name, value in ((variable, xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    plain = dirs.plain_dir(kind)
    assert plain is not None or home is None or not home.startswith("/")
    if plain is not None:
        assert plain == getattr(dirs._dirs(), f"user_{kind}_dir")


def test_the_user_config_file_is_found_without_platformdirs(tmp_path: Path) -> None:
    probe = (
        "import sys, lspmux.dirs as d; d.user_config_file(); print('platformdirs' in sys.modules)"
    )
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "False"
