"""Restricted mode, with the real basedpyright through `lspmux proxy`: a repository's own
`.venv/bin/python` does not run until `lspmux trust`, and runs after."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.e2e.daemon_harness import frame
from tests.e2e.test_limits import RawProxy, env_for
from tests.tools import require_tool


def _repository(tmp_path: Path) -> tuple[Path, Path]:
    """A Python project whose `.venv/bin/python` records each run in a marker file, then
    behaves as the real interpreter (so that basedpyright works either way)."""
    repo = tmp_path / "repo"
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "repo"\nversion = "0"\n')
    (repo / "a.py").write_text("import os\nos.getcwd()\n")
    marker = tmp_path / "venv-python-ran"
    python = repo / ".venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$@" >> "{marker}"\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return repo, marker


async def _hover_os(tmp_path: Path, repo: Path) -> str:
    """Open a.py, hover `os` (answered only once basedpyright resolved its imports, which is
    when it runs the interpreter it picked); the hover's text."""
    proxy = await RawProxy.start(tmp_path, repo)
    try:
        reply = await proxy.request(
            1, "initialize", {"capabilities": {}, "processId": None, "rootUri": repo.as_uri()}
        )
        assert "capabilities" in reply["result"], reply
        proxy.send_bytes(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        uri = (repo / "a.py").as_uri()
        text = (repo / "a.py").read_text()
        proxy.send_bytes(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {
                        "textDocument": {
                            "uri": uri,
                            "languageId": "python",
                            "version": 1,
                            "text": text,
                        }
                    },
                }
            )
        )
        hover = await proxy.request(
            2,
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 4}},
        )
        assert hover.get("result"), hover
        return str(hover["result"]["contents"])
    finally:
        await proxy.stop()


async def test_basedpyright_runs_the_repositorys_python_only_after_lspmux_trust(
    tmp_path: Path,
) -> None:
    require_tool("basedpyright-langserver")
    repo, marker = _repository(tmp_path)

    shown = await _hover_os(tmp_path, repo)
    assert "getcwd" in shown  # basedpyright resolved `os`: it had picked its interpreter
    assert not marker.exists(), marker.read_text()

    trust = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "trust",
        str(repo),
        env=env_for(tmp_path),
        stdout=asyncio.subprocess.PIPE,
    )
    await trust.communicate()
    assert trust.returncode == 0

    assert "getcwd" in await _hover_os(tmp_path, repo)
    assert marker.exists()  # trusted: basedpyright uses the repository's .venv as it would
