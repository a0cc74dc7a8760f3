"""In CI a test that needs a missing tool fails instead of skipping (tests/conftest.py), and
scripts/setup-tests verifies every tool by running it (issue: eglot tests skipped on a fresh
machine while CI stayed green)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SKIPPING = """
import pytest

@pytest.mark.skipif(True, reason="emacs not found")
def test_needs_emacs():
    pass

def test_plain():
    pass
"""


SKIPPING_FILE = """
import pytest

pytest.importorskip("no_such_tool_module", reason="swiftlint not found")

def test_needs_swiftlint():
    pass
"""


def _run_pytest(
    tmp_path: Path, ci: str | None, source: str | None = None
) -> subprocess.CompletedProcess[str]:
    tests = tmp_path / "tests"
    tests.mkdir(parents=True)
    (tests / "__init__.py").write_text("")
    for name in ("conftest.py", "profiles.py"):  # the conftest imports tests.profiles
        (tests / name).write_text((ROOT / "tests" / name).read_text())
    (tests / "test_skipping.py").write_text(SKIPPING if source is None else source)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_in_ci_a_skip_is_a_failure_that_names_its_reason(tmp_path: Path) -> None:
    run = _run_pytest(tmp_path, "true")
    assert run.returncode == 1, run.stdout
    assert "1 passed, 1 error" in run.stdout  # skipped in setup: the setup fails
    assert "CI=true: this test may not skip (emacs not found)" in run.stdout


def test_in_ci_a_file_skipped_while_collected_fails_the_run(tmp_path: Path) -> None:
    run = _run_pytest(tmp_path, "true", SKIPPING_FILE)
    assert run.returncode != 0, run.stdout
    assert "CI=true: this file may not skip (swiftlint not found)" in run.stdout
    outside = _run_pytest(tmp_path / "outside", None, SKIPPING_FILE)
    assert "1 skipped" in outside.stdout, outside.stdout  # exit 5: nothing ran, nothing failed
    assert outside.returncode == 5, outside.stdout


def test_outside_ci_it_skips_and_the_run_says_what_it_skipped(tmp_path: Path) -> None:
    run = _run_pytest(tmp_path, None)
    assert run.returncode == 0, run.stdout
    assert "1 passed, 1 skipped" in run.stdout
    assert "skipped: 1 test(s) — 1x emacs not found" in run.stdout


def test_setup_check_runs_every_tool_and_names_the_missing_ones(tmp_path: Path) -> None:
    """`--check` runs each tool; with a PATH that lacks the system tools it fails naming them
    with how to install them (a package-list lookup would have said nothing)."""
    ok = subprocess.run(
        [str(ROOT / "scripts" / "setup-tests"), "--check"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "GNU Emacs" in ok.stdout and "with eglot" in ok.stdout
    assert "rust-analyzer" in ok.stdout and "cargo" in ok.stdout
    # A PATH with only what the script itself uses: every tool found on PATH is gone.
    bare_bin = tmp_path / "bin"
    bare_bin.mkdir()
    for tool in ("bash", "dirname", "awk", "head"):
        found = shutil.which(tool)
        assert found is not None, tool
        (bare_bin / tool).symlink_to(found)
    bare = subprocess.run(
        [str(bare_bin / "bash"), str(ROOT / "scripts" / "setup-tests"), "--check"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PATH": str(bare_bin)},
    )  # fmt: skip
    assert bare.returncode != 0
    for name in ("cargo", "C compiler (cc)", "emacs + eglot", "shellcheck"):
        assert f"- {name} (" in bare.stderr, bare.stderr
    assert "apt-get update && apt-get install emacs-nox elpa-eglot" in bare.stderr
