"""Harness for the agent tools' end-to-end tests: `lspmux mcp` driven by the `mcp` SDK's own
stdio client, and `lspmux <verb>` run as a process, on a fresh copy of a real project
(MarkupSafe 3.0.2's source, tests/data/agent/markupsafe) or the sample workspace, against the
real basedpyright, ruff and clangd."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

DATA = Path(__file__).resolve().parent.parent / "data"
MARKUPSAFE = DATA / "agent" / "markupsafe"
WORKSPACE = DATA / "workspace"
REPO = Path(__file__).resolve().parent.parent.parent


def copy_project(source: Path, tmp_path: Path, name: str = "project") -> Path:
    target = tmp_path / name
    shutil.copytree(source, target)
    return target.resolve()


class Mcp:
    """An MCP client session on `lspmux mcp`."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
        """The text and structuredContent of a successful call (fails on isError)."""
        result = await self.session.call_tool(name, arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        assert not result.is_error, f"{name}({arguments}) failed: {text}"
        assert isinstance(result.structured_content, dict)
        return text, result.structured_content

    async def error(self, name: str, **arguments: Any) -> str:
        """The message of a call that must fail as a tool result with isError."""
        result = await self.session.call_tool(name, arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.is_error, f"{name}({arguments}) should have failed; got: {text}"
        assert isinstance(result.structured_content, dict)
        assert result.structured_content.get("error") == text
        return text


@contextlib.asynccontextmanager
async def mcp_client(root: Path, env: dict[str, str], *args: str) -> AsyncIterator[Mcp]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lspmux", "mcp", "--root", str(root), *args],
        env={**env, "PYTHONPATH": str(REPO)},
        cwd=str(root),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield Mcp(session)


def run_verb(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lspmux", *args],
        env={**env, "PYTHONPATH": str(REPO)},
        cwd=str(root),
        capture_output=True,
        text=True,
        timeout=120,
    )
