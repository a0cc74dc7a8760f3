"""A newcomer's first hour, for real: the wheel built from this tree, installed with pipx into
a fresh prefix, then `lspmux --version`, `lspmux install ruff`, `lspmux doctor` and a proxy
session that gets ruff's diagnostics, with nothing but the pipx bin folder and the system's
own folders on PATH (no .venv/bin, no servers)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.e2e.daemon_harness import frame, read_message

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(900)


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{argv}: {proc.stdout}\n{proc.stderr}"
    return proc  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def pipx_lspmux(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(the `lspmux` pipx installed, the environment a newcomer's shell would have); the sdist
    holds the docs and the example config, the wheel the docs `--help` names."""
    tmp = tmp_path_factory.mktemp("newcomer")
    source = tmp / "source"  # a copy: building in the tree would leave build/ behind
    shutil.copytree(
        ROOT,
        source,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", ".tools", "build", "*.egg-info", "__pycache__", "*.so"
        ),
    )
    tools = tmp / "tools"
    _run([sys.executable, "-m", "venv", str(tools)])
    _run([str(tools / "bin" / "python"), "-m", "pip", "install", "-q", "pipx", "build"])
    # `python -m build`: the sdist, then the wheel built from it (what the README says)
    _run([str(tools / "bin" / "python"), "-m", "build", "-o", str(tmp / "dist"), str(source)])
    (sdist,) = (tmp / "dist").glob("lspmux-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"docs/editors.md", "config/lspmux.example.toml", "LICENSE"} <= names
    assert {"setup.py", "lspmux/_speedups.c", "lspmux/_speedups.pyi"} <= names
    (wheel,) = (tmp / "dist").glob("lspmux-*.whl")
    with zipfile.ZipFile(wheel) as zipped:
        assert "lspmux/docs/editors.md" in zipped.namelist()
        # the machine has a C compiler (scripts/setup-tests): the speedups are built
        assert any(
            n.startswith("lspmux/_speedups.") and n.endswith(".so") for n in zipped.namelist()
        )
    env = {
        "HOME": str(tmp / "home"),
        "PIPX_HOME": str(tmp / "pipx"),
        "PIPX_BIN_DIR": str(tmp / "bin"),
        "PIPX_MAN_DIR": str(tmp / "man"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "PATH": f"{tmp / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",
    }
    for key in ("PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "SSL_CERT_FILE", "LANG"):
        if key in os.environ:
            env[key] = os.environ[key]
    _run([str(tools / "bin" / "pipx"), "install", str(wheel)], env=env)
    return tmp / "bin" / "lspmux", env


def test_the_wheel_installed_with_pipx_installs_ruff_and_serves_its_diagnostics(
    pipx_lspmux: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    lspmux, env = pipx_lspmux
    assert _run([str(lspmux), "--version"], env=env).stdout.startswith("lspmux ")
    helptext = _run([str(lspmux), "--help"], env=env).stdout
    docs = Path(helptext.split("\ndocs: ", 1)[1].split(" (", 1)[0])
    assert (docs / "editors.md").is_file() and "site-packages" in str(docs)
    installed = _run([str(lspmux), "install", "ruff"], env=env, cwd=tmp_path)
    assert "installed ruff: " in installed.stdout

    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("import os\n")
    # basedpyright is needed and missing: doctor fails and says how to install it
    doctor = subprocess.run(
        [str(lspmux), "doctor"], env=env, cwd=project, capture_output=True, text=True
    )
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "install: lspmux install basedpyright" in doctor.stdout
    assert "(ruff 0." in doctor.stdout  # ruff, from lspmux's prefix, started
    assert "C speedups: in use" in doctor.stdout
    # where ruff is all the project uses, doctor passes
    (project / "lspmux.toml").write_text(
        "[servers.basedpyright]\ndisabled = true\n[servers.pyright]\ndisabled = true\n"
    )
    doctor = subprocess.run(
        [str(lspmux), "doctor"], env=env, cwd=project, capture_output=True, text=True
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr

    codes = asyncio.run(_ruff_codes(lspmux, env, project))
    assert "F401" in codes


async def _ruff_codes(lspmux: Path, env: dict[str, str], project: Path) -> set[str]:
    proc = await asyncio.create_subprocess_exec(
        str(lspmux),
        "proxy",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=project,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        uri = (project / "app.py").as_uri()
        init = {"processId": None, "rootUri": project.as_uri(), "capabilities": {}}
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        doc = {"uri": uri, "languageId": "python", "version": 1, "text": "import os\n"}
        proc.stdin.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": doc},
                }
            )
        )
        while True:
            msg = await read_message(proc.stdout, 60)
            if msg.get("method") == "textDocument/publishDiagnostics":
                codes = {str(d.get("code")) for d in msg["params"]["diagnostics"]}
                if codes:
                    return codes
            elif "id" in msg and "method" in msg:  # the server's requests: a null answer
                proc.stdin.write(frame({"jsonrpc": "2.0", "id": msg["id"], "result": None}))
    finally:
        proc.kill()
        await proc.wait()
