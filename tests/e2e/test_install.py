"""`lspmux install` as a user runs it, each a real process: a real install of ruff from PyPI
into a temporary data folder, found before PATH, then listed and removed; the error without
npm; a suggestion for a misspelt name. (Moved from tests/unit: the PyPI install alone takes
~25 s of network and pip; the recipes' own checks stay in tests/unit/install.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path, path: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PYTHONPATH"] = str(ROOT)
    if path is not None:
        env["PATH"] = path
    return env


def _lspmux(
    args: list[str], tmp_path: Path, cwd: Path, path: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lspmux", *args],
        cwd=cwd,
        env=_env(tmp_path, path),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_install_ruff_into_the_data_folder_and_use_it_before_path(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("import os\n")
    bare_path = f"{tmp_path / 'nothing'}{os.pathsep}/usr/bin{os.pathsep}/bin"
    proc = _lspmux(["install", "ruff"], tmp_path, project, bare_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    link = tmp_path / "data" / "lspmux" / "bin" / "ruff"
    assert f"installed ruff: {link}" in proc.stdout
    version = subprocess.run([str(link), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == "ruff 0.17.6"

    again = _lspmux(["install", "ruff"], tmp_path, project, bare_path)
    assert again.returncode == 0
    assert "ruff: already installed (pypi:ruff==0.17.6)" in again.stdout

    listing = _lspmux(["install", "--list"], tmp_path, project, bare_path)
    row = next(line for line in listing.stdout.splitlines() if line.startswith("ruff "))
    assert row.split()[1:] == ["pypi:ruff==0.17.6", "installed"]
    # Found before PATH (whose .venv/bin has a ruff too).
    resolved = subprocess.run(
        [
            sys.executable,
            "-c",
            "from lspmux.config.resolve import resolve_command; "
            "print(resolve_command(('ruff', 'server')))",
        ],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert resolved.stdout.strip() == str([str(link), "server"]), resolved.stderr

    removed = _lspmux(["install", "--uninstall", "ruff"], tmp_path, project, bare_path)
    assert removed.returncode == 0 and not link.exists()
    assert not (tmp_path / "data" / "lspmux" / "servers" / "ruff").exists()


def test_an_npm_server_without_npm_says_what_to_install(tmp_path: Path) -> None:
    proc = _lspmux(["install", "pyright"], tmp_path, tmp_path, str(tmp_path / "no-bin"))
    assert proc.returncode == 1
    assert "pyright@1.1.414 comes from npm, and `npm` is not on PATH" in proc.stderr
    assert "install Node.js with npm" in proc.stderr
    assert not (tmp_path / "data" / "lspmux" / "servers" / "pyright").exists()


def test_an_unknown_name_gets_a_suggestion(tmp_path: Path) -> None:
    proc = _lspmux(["install", "ruf"], tmp_path, tmp_path)
    assert proc.returncode == 2
    assert "no server or linter is named 'ruf'" in proc.stderr and '"ruff"' in proc.stderr
