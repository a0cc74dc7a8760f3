"""`make demo`'s script with nothing but Python: its session against the servers installed by
scripts/setup-tests shows a hover, a Locate position and both servers' diagnostics merged, in
at most 20 lines; a failed install prints the installer's error and what to do. (`make demo`
with its downloads is timed by scripts/bench_demo.py, not tested: it needs the network.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tools import require_tool

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scripts" / "demo.py"
MAX_LINES = 20  # issue 22: the demo and little else


def python_only_env(tmp_path: Path, tools: tuple[str, ...]) -> dict[str, str]:
    """Our environment with PATH cut to a folder of links to `tools` (found where
    scripts/setup-tests put them) and private XDG folders (no lspmux-installed servers, no
    user configuration)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in tools:
        (folder / name).symlink_to(require_tool(name))
    env = dict(os.environ)
    env.update(
        PATH=str(folder),
        PYTHONPATH=str(ROOT),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    env.pop("LSPMUX_LOG", None)
    env.pop("LSPMUX_ADDRESS", None)
    return env


def run(argv: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=150)
    return done.returncode, (done.stdout + done.stderr).splitlines()


def test_the_demo_shows_hover_locate_and_merged_diagnostics_with_python_only(
    tmp_path: Path,
) -> None:
    env = python_only_env(tmp_path, ("basedpyright-langserver", "ruff"))
    # what the demo's proxy will search: its Python's folder first (scripts/demo.py), then PATH
    search = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    assert [shutil.which(name, path=search) for name in ("node", "npm")] == [None, None]

    code, lines = run([sys.executable, str(DEMO)], env)

    shown = "\n".join(lines)
    assert code == 0, shown
    assert len(lines) <= MAX_LINES, shown
    assert "hover at app.py:16:7 → (variable) greeter: Greeter" in lines, shown
    assert (
        "locate 'app.py:Greeter.greet@return <|>message' → "
        "app.py:12:16 {'line': 11, 'character': 15}"
    ) in lines, shown
    header = next(i for i, line in enumerate(lines) if line.startswith("merged diagnostics"))
    assert lines[header].endswith("from basedpyright, ruff):"), shown
    rows = [line.split() for line in lines[header + 1 :] if line.startswith("  app.py:")]
    # one unused import, reported by both servers, in the one merged list
    assert ["app.py:1:8", "Ruff", "F401"] in [row[:3] for row in rows], shown
    assert ["app.py:1:8", "basedpyright", "reportUnusedImport"] in [row[:3] for row in rows]
    assert lines[-1].startswith("demo done in "), shown


def test_a_failed_install_prints_the_error_and_what_to_do(tmp_path: Path) -> None:
    """A fresh venv as `make demo` makes it (no pip), no uv on PATH, and an index that does
    not answer (a closed port on this machine; pip's configuration files left out): nothing
    installs, and the demo says so in a few lines, with pip's own words first."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    env = {k: v for k, v in python_only_env(tmp_path, ()).items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL="http://127.0.0.1:9/simple")
    env.update(PIP_RETRIES="0", PIP_NO_CACHE_DIR="1")

    code, lines = run([str(venv / "bin" / "python"), str(DEMO), "--install"], env)

    shown = "\n".join(lines)
    assert code == 1, shown
    assert len(lines) <= MAX_LINES, shown
    assert lines[0].startswith("make demo: installing lspmux (editable), basedpyright 1."), shown
    assert lines[0].endswith("… failed"), shown
    assert any("No matching distribution found" in line for line in lines), shown
    assert lines[-1].startswith("make demo: pip could not install them (its error above"), shown
    assert "pip config list" in lines[-1] and "rm -rf .venv" in lines[-1], shown
    assert not (venv / "lspmux-demo.stamp").exists()
