"""The shipped [linters.swiftlint] definition run through lspmux's adapter against the real
SwiftLint (installed by scripts/install-swiftlint), not recorded output: the unsaved buffer is
what gets linted, positions come out 0-based at the right columns, exit code 2 is a normal run,
and the project's .swiftlint.yml (found from the root) applies."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lspmux.config.loader import load_config
from lspmux.diagnostics.linters.runner import run_linter

ROOT = Path(__file__).resolve().parents[2]
WRAPPER_DIR = ROOT / ".tools" / "swiftlint" / "bin"
FIXTURE = ROOT / "tests" / "data" / "fixtures" / "swiftlint" / "Small.swift"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not os.access(WRAPPER_DIR / "swiftlint", os.X_OK),
        reason=f"real SwiftLint not installed in {WRAPPER_DIR} (run scripts/install-swiftlint)",
    ),
]

#: On disk (Small.swift): the force cast and the semicolon are on line 1 (0-based). The unsaved
#: buffer moves them to line 2 and to other columns, so only a run on the buffer can put them
#: where the assertions expect.
BUFFER = "let value: Any = 1\n\nlet number: Int = value as! Int;\nprint(number)\n"
FORCE_CAST = {"start": {"line": 2, "character": 24}, "end": {"line": 2, "character": 26}}
SEMICOLON = {"start": {"line": 2, "character": 31}, "end": {"line": 2, "character": 32}}


@pytest.fixture
def swiftlint(monkeypatch: pytest.MonkeyPatch):
    """The shipped [linters.swiftlint] config, with the real tool's wrapper first on PATH."""
    monkeypatch.setenv("PATH", f"{WRAPPER_DIR}{os.pathsep}{os.environ.get('PATH', '')}")
    assert shutil.which("swiftlint") == str(WRAPPER_DIR / "swiftlint")
    config = load_config(None, user_config=None).linters["swiftlint"]
    assert config.command[0] == "swiftlint" and not config.disabled
    return config


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(FIXTURE, tmp_path / "Small.swift")
    return tmp_path


def _found(diagnostics: list[dict]) -> list[tuple[str, dict, int]]:
    return sorted((d["code"], d["range"], d["severity"]) for d in diagnostics)


async def test_lints_the_unsaved_buffer_at_exact_positions(swiftlint, project: Path) -> None:
    path = project / "Small.swift"
    on_disk = path.read_text()
    assert on_disk != BUFFER

    diagnostics = await run_linter(swiftlint, path=str(path), text=BUFFER, root=project)

    assert _found(diagnostics) == [
        ("force_cast", FORCE_CAST, 1),  # "Error"
        ("trailing_semicolon", SEMICOLON, 2),  # "Warning"
    ]
    by_code = {d["code"]: d for d in diagnostics}
    assert by_code["force_cast"]["message"] == "Force casts should be avoided"
    assert by_code["trailing_semicolon"]["message"] == "Lines should not have trailing semicolons"
    assert all(d["source"] == "swiftlint" for d in diagnostics)
    assert by_code["force_cast"]["codeDescription"]["href"].endswith("/force_cast.html")
    # The file is untouched and the temporary copy beside it is gone.
    assert path.read_text() == on_disk
    assert sorted(p.name for p in project.iterdir()) == ["Small.swift"]


async def test_a_clean_buffer_gives_nothing_though_the_file_has_findings(
    swiftlint, project: Path
) -> None:
    clean = "let value = 1\nprint(value)\n"
    diagnostics = await run_linter(
        swiftlint, path=str(project / "Small.swift"), text=clean, root=project
    )
    assert diagnostics == []


async def test_the_projects_swiftlint_yml_applies(swiftlint, project: Path) -> None:
    (project / ".swiftlint.yml").write_text("disabled_rules:\n  - trailing_semicolon\n")
    diagnostics = await run_linter(
        swiftlint, path=str(project / "Small.swift"), text=BUFFER, root=project
    )
    assert _found(diagnostics) == [("force_cast", FORCE_CAST, 1)]
