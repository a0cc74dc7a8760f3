""" "Clean" means checked (DESIGN 9), end to end with the real basedpyright, ruff, clangd and
cargo: `lspmux diagnostics` exits 0 only when every source of every file diagnosed its text,
1 on errors, 2 when something was not checked — naming the source and why; `*` is the whole
workspace; the MCP `diagnostics` tool says the same."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.agent_harness import mcp_client
from tests.e2e.conftest import proxy_env

pytestmark = pytest.mark.e2e

CLEAN = "def double(n: int) -> int:\n    return n * 2\n"
DEEP = "def f() -> int:\n    return undefined_thing\n"
SERVERS = ("basedpyright-langserver", "pyright-langserver", "ruff", "clangd", "basedpyright")


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lspmux", "diagnostics", "--no-daemon", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def _without_servers(env: dict[str, str]) -> dict[str, str]:
    """`env` with a PATH on which none of the Python and C servers is found."""
    keep = [
        d for d in env["PATH"].split(os.pathsep)
        if d and not any(os.path.exists(os.path.join(d, exe)) for exe in SERVERS)
    ]  # fmt: skip
    out = {**env, "PATH": os.pathsep.join(keep)}
    assert all(shutil.which(exe, path=out["PATH"]) is None for exe in SERVERS)
    return out


def test_no_server_installed_is_not_checked_and_names_the_install_command(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "ok.py").write_text(CLEAN)
    env = _without_servers(proxy_env(tmp_path))
    proc = _run(["ok.py"], workspace, env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "ok.py: not checked by basedpyright: not installed; install: lspmux install basedpyright"
        in (proc.stdout)
    )
    assert "no problems" not in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("NOT CHECKED: 1 of 1 file")
    data = json.loads(_run(["--json", "ok.py"], workspace, env).stdout)
    assert data["checked"] is False and data["diagnostics"] == []
    missing = {r["source"]: r for r in data["unchecked"]}
    assert missing["basedpyright"]["install"] == "lspmux install basedpyright"
    assert missing["ruff"]["state"] == "missing"


def test_a_crashed_server_is_not_checked_and_its_stderr_is_shown(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "ok.py").write_text(CLEAN)
    config = tmp_path / "crash.toml"
    script = "import sys; sys.stderr.write('boom: no interpreter found\\n'); sys.exit(3)"
    config.write_text(
        f"[servers.basedpyright]\ncommand = {json.dumps([sys.executable, '-c', script])}\n"
    )
    proc = _run(["--config", str(config), "ok.py"], workspace, proxy_env(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    out = proc.stdout
    assert "ok.py: not checked by basedpyright: crashed (exited with code 3)" in out, out
    assert "    | boom: no interpreter found" in out
    assert "no problems" not in out


def test_clean_only_when_every_source_reported(workspace: Path, tmp_path: Path) -> None:
    (workspace / "ok.py").write_text(CLEAN)
    env = proxy_env(tmp_path)
    proc = _run(["--json", "ok.py"], workspace, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["checked"] is True and data["diagnostics"] == [] and data["unchecked"] == []
    # pyright is in the default table, not installed, and not used: basedpyright takes its role
    assert data["notes"] == []
    # turned on by name and not installed: a note, not a reason
    user = Path(env["XDG_CONFIG_HOME"]) / "lspmux" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[servers.pyright]\ndisabled = false\n")
    proc = _run(["--json", "ok.py"], workspace, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["checked"] is True and [n["source"] for n in data["notes"]] == ["pyright"]
    # the same file when the wait ends before the servers report: not checked, not clean
    proc = _run(["--timeout", "0.05", "ok.py"], workspace, env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "still analysing: no diagnostics for this text within 0.05s" in proc.stdout
    assert "no problems" not in proc.stdout


def test_star_is_the_whole_workspace(workspace: Path, tmp_path: Path) -> None:
    deep = workspace / "sub" / "pkg" / "deep.py"
    deep.parent.mkdir(parents=True)
    deep.write_text(DEEP)
    proc = _run(["--json", "*"], workspace, proxy_env(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    rows = [r for r in data["diagnostics"] if r["path"] == "sub/pkg/deep.py"]
    found = {(r["line"], r["column"], r["source"], r["code"]) for r in rows}
    assert (2, 12, "basedpyright", "reportUndefinedVariable") in found, rows
    assert (2, 12, "ruff", "F821") in found, rows
    # clangd has no project check: hello.c was opened, its error is there too
    assert any(r["path"] == "hello.c" and r["severity"] == "error" for r in data["diagnostics"])
    # and what could not be checked is said (no TypeScript server here)
    assert any(r["path"] == "test.js" for r in data["unchecked"])


def test_star_runs_cargo_check_for_rust(tmp_path: Path) -> None:
    root = tmp_path / "crate"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(
        '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (root / "src" / "lib.rs").write_text('pub fn f() -> u32 {\n    "no"\n}\n')
    env = {**proxy_env(tmp_path), "CARGO_TARGET_DIR": str(tmp_path / "target")}
    proc = _run(["--json", "**"], root, env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    (row,) = [r for r in data["diagnostics"] if r["severity"] == "error"]
    assert (row["path"], row["line"], row["column"]) == ("src/lib.rs", 2, 5)
    assert row["source"] == "rust-analyzer" and row["code"] == "E0308"
    assert not [r for r in data["unchecked"] if r["path"] == "src/lib.rs"]


async def test_mcp_diagnostics_says_what_was_not_checked(workspace: Path, tmp_path: Path) -> None:
    (workspace / "ok.py").write_text(CLEAN)
    deep = workspace / "sub" / "deep.py"
    deep.parent.mkdir()
    deep.write_text(DEEP)
    async with mcp_client(workspace, proxy_env(tmp_path), "--private") as mcp:
        text, data = await mcp.call("diagnostics", file="ok.py")
        assert text.endswith("OK: no problems in 1 file"), text
        assert data["checked"] is True
        text, data = await mcp.call("diagnostics", file="*", severity="error")
        assert "sub/deep.py:2:12 error basedpyright reportUndefinedVariable" in text, text
        assert "test.js: not checked by typescript-language-server: not installed" in text
        assert data["checked"] is False
    env = _without_servers(proxy_env(tmp_path))
    async with mcp_client(workspace, env, "--private") as mcp:
        text, data = await mcp.call("diagnostics", file="ok.py")
        assert "not checked by basedpyright: not installed" in text, text
        assert not text.startswith("OK") and data["checked"] is False
