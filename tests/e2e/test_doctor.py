"""`lspmux doctor` starts each needed server (real ones) and tells the truth in its exit status.
(In tests/e2e: each test runs lspmux and real servers as processes.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tools import require_tool

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _doctor(project: Path, tmp_path: Path, bins: list[str]) -> subprocess.CompletedProcess[str]:
    """`lspmux doctor` in `project` with only `bins` (tool names, linked into one folder) and
    the system's own folders on PATH."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in bins:
        (folder / Path(name).name).symlink_to(name if os.sep in name else require_tool(name))
    env = dict(os.environ)
    env.update(
        PATH=f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin",
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PYTHONPATH=str(ROOT),
    )
    return subprocess.run(
        [sys.executable, "-m", "lspmux", "doctor"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _row(out: str, name: str) -> str:
    return next(line for line in out.splitlines() if f" {name} " in line)


def test_doctor_starts_the_servers_and_shows_their_versions(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("import os\n")
    proc = _doctor(project, tmp_path, ["basedpyright-langserver", "ruff", "node"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _row(proc.stdout, "basedpyright").split()[0] == "ok"
    assert "(basedpyright 1." in _row(proc.stdout, "basedpyright")  # its serverInfo
    assert "(ruff 0." in _row(proc.stdout, "ruff")
    # pyright is not installed, and not needed: the default choice took basedpyright
    assert not [line for line in proc.stdout.splitlines() if " pyright " in line]
    assert "were found and run" in proc.stdout


def test_with_both_type_checkers_pyright_is_not_used_and_taplo_is_optional(
    tmp_path: Path,
) -> None:
    """The issue's newcomer: basedpyright and pyright both installed, a pyproject.toml and no
    taplo. basedpyright runs, pyright is "not used" (and why), taplo only optional: exit 0."""
    pyright = ROOT / ".tools" / "pyright" / "node_modules" / ".bin" / "pyright-langserver"
    if not pyright.exists():
        pytest.skip(f"no {pyright} (scripts/setup-tests installs it)")
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("import os\n")
    (project / "pyproject.toml").write_text('[project]\nname = "app"\n')
    proc = _doctor(project, tmp_path, ["basedpyright-langserver", str(pyright), "ruff", "node"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(basedpyright 1." in _row(proc.stdout, "basedpyright")
    assert _row(proc.stdout, "pyright").startswith(
        "  not used pyright       basedpyright (installed) takes the python server role; "
        "set servers.pyright.disabled = false to run both"
    )
    taplo = _row(proc.stdout, "taplo")
    assert taplo.split()[0] == "optional" and "configure other tools (pyproject.toml)" in taplo
    assert "all 2 servers/linters this project needs were found and run" in proc.stdout


def test_doctor_fails_with_the_install_command_when_a_needed_server_is_missing(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("import os\n")
    proc = _doctor(project, tmp_path, ["ruff"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _row(proc.stdout, "basedpyright").split()[0] == "MISSING"
    assert "install: lspmux install basedpyright" in proc.stdout
    assert "skipped  pyright       not installed; basedpyright (once installed)" in proc.stdout
    assert "install them: lspmux install basedpyright  (or: lspmux install --missing)" in (
        proc.stdout
    )


def test_a_rustup_proxy_without_the_component_fails_with_its_stderr(tmp_path: Path) -> None:
    rustup = require_tool("rustup")
    project = tmp_path / "crate"
    (project / "src").mkdir(parents=True)
    (project / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n')
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "rust-analyzer").symlink_to(rustup)  # what rustup installs: a proxy
    proc = _doctor(project, tmp_path, ["cargo", "rustc"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = _row(proc.stdout, "rust-analyzer")
    assert row.split()[0] == "FAILS" and "exited with code 1 before answering initialize" in row
    assert "error: Unknown binary 'rust-analyzer'" in proc.stdout
