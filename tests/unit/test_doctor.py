"""`lspmux doctor`'s verdicts without starting anything (`probe=False`, `smoke=False`): a server
the default choice left out is "not used", not missing; one whose only files configure other
tools is optional; neither counts against the exit status. (tests/e2e/test_doctor.py starts
the real servers.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from lspmux.config.loader import load_config
from lspmux.config.trust import TrustDB
from lspmux.doctor import Check, diagnose, render


def executable(path: Path) -> None:
    """A file on PATH under a server's name: found by the lookup, never run here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 1\n")
    path.chmod(0o755)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("import os\n")
    (root / "pyproject.toml").write_text('[project]\nname = "app"\n')
    (root / ".pre-commit-config.yaml").write_text("repos: []\n")
    return root


def doctor(project: Path, *bins: str) -> tuple[dict[str, Check], str]:
    for name in bins:
        executable(project.parent / "bin" / name)
    config = load_config(project, user_config=None, trust_db=TrustDB())
    checks = diagnose(config, project, smoke=False, probe=False)
    return {c.name: c for c in checks}, render(checks, project, config)


def row(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if f" {name} " in line)


def test_pyright_beside_basedpyright_is_not_used_and_not_missing(project: Path) -> None:
    checks, text = doctor(project, "basedpyright-langserver", "pyright-langserver", "ruff")
    assert checks["pyright"].not_used and not checks["pyright"].failed
    assert not checks["pyright"].missing
    assert row(text, "pyright").split()[:3] == ["not", "used", "pyright"]
    assert "basedpyright (installed) takes the python server role; set servers.pyright." in text
    assert checks["basedpyright"].ok and checks["ruff"].ok
    assert "all 2 servers/linters this project needs were found and run" in text


def test_an_alternative_not_installed_is_not_shown(project: Path) -> None:
    checks, text = doctor(project, "pyright-langserver", "ruff")
    assert checks["pyright"].ok
    assert "basedpyright" not in checks and " basedpyright " not in text


def test_taplo_for_pyproject_toml_alone_is_optional(project: Path) -> None:
    checks, text = doctor(project, "basedpyright-langserver", "ruff")
    taplo = checks["taplo"]
    assert taplo.optional == ("pyproject.toml",) and taplo.path is None
    assert not taplo.failed and not taplo.missing
    assert "its only files here configure other tools (pyproject.toml)" in row(text, "taplo")
    assert "install: cargo install taplo-cli" in text
    yaml = checks["yaml-language-server"]
    assert yaml.optional == (".pre-commit-config.yaml",) and not yaml.failed
    assert not [c for c in checks.values() if c.failed]


def test_a_toml_file_of_the_project_makes_taplo_needed(project: Path) -> None:
    (project / "settings.toml").write_text("x = 1\n")
    checks, text = doctor(project, "basedpyright-langserver", "ruff")
    assert checks["taplo"].optional == () and checks["taplo"].failed
    assert row(text, "taplo").split()[0] == "MISSING"
    assert "1 of 3 needed servers/linters are missing or fail" in text


def test_a_missing_type_checker_is_still_needed(project: Path) -> None:
    checks, text = doctor(project, "ruff")
    assert checks["basedpyright"].missing and checks["basedpyright"].failed
    assert checks["pyright"].covered_by == "basedpyright (once installed)"
    assert "install them: lspmux install basedpyright" in text


def test_a_readme_alone_makes_no_markdown_server_needed(project: Path) -> None:
    (project / "README.md").write_text("# app\n")
    (project / "CHANGELOG.md").write_text("## 1.0\n")
    checks, text = doctor(project, "basedpyright-langserver", "ruff")
    for name in ("marksman", "markdownlint"):
        assert sorted(checks[name].optional) == ["CHANGELOG.md", "README.md"], name
        assert not checks[name].failed
        assert "its only files here are the project's notes (" in row(text, name)
    assert not [c for c in checks.values() if c.failed]


def test_markdown_the_project_writes_makes_marksman_needed(project: Path) -> None:
    (project / "README.md").write_text("# app\n")
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("# guide\n")
    checks, text = doctor(project, "basedpyright-langserver", "ruff")
    assert checks["marksman"].optional == () and checks["marksman"].failed
    assert row(text, "marksman").split()[0] == "MISSING"


def test_the_doctor_says_whether_the_c_speedups_are_in_use(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lspmux import speedups

    _checks, text = doctor(project, "ruff")
    assert f"C speedups: {speedups.status}" in text.splitlines()
    monkeypatch.setattr(speedups, "status", "not built (no module named lspmux._speedups)")
    _checks, text = doctor(project, "ruff")
    assert "C speedups: not built (no module named lspmux._speedups)" in text.splitlines()
