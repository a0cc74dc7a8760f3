"""Whether any installed server serves `workspace/diagnostic` — the issue asks `"*"` to use it
where a server does. None does (docs/agents.md): this asks each real server directly, with a
client that declares pull diagnostics, so the day one starts serving it this test fails and
`"*"` should ask it before its project check (lspmux/agent/checking.py `_workspace`).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.rawlsp import RawClient
from tests.tools import require_tool

pytestmark = pytest.mark.e2e

#: A client that can take pull diagnostics, statically or by registration.
CAPABILITIES: dict[str, Any] = {
    "textDocument": {
        "diagnostic": {"dynamicRegistration": True, "relatedDocumentSupport": True},
        "publishDiagnostics": {"versionSupport": True},
    },
    "workspace": {
        "diagnostics": {"refreshSupport": True},
        "configuration": True,
        "workspaceFolders": True,
    },
}


async def _initialized(
    tmp_path: Path, argv: list[str], options: Any = None
) -> tuple[RawClient, Any]:
    (tmp_path / "a.py").write_text("x = 1\n")
    client = RawClient()
    await client.start(*argv, cwd=str(tmp_path))
    root = tmp_path.as_uri()
    result = await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root,
            "workspaceFolders": [{"uri": root, "name": tmp_path.name}],
            "capabilities": CAPABILITIES,
            "initializationOptions": options,
        },
    )
    client.notify("initialized", {})
    return client, result["capabilities"].get("diagnosticProvider")


async def _error_once_loaded(client: RawClient) -> str:
    """The error `workspace/diagnostic` gets once the server is past loading (rust-analyzer
    answers -32801 "waiting for cargo metadata" until then); fails on a result."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while True:
        try:
            result = await client.request("workspace/diagnostic", {"previousResultIds": []}, 30)
        except RuntimeError as exc:
            if "-32801" not in str(exc) or loop.time() > deadline:
                return str(exc)
            await asyncio.sleep(0.1)  # content modified: asked again, as a client would
            continue
        raise AssertionError(f"workspace/diagnostic was served: {result}")


async def test_basedpyright_registers_document_diagnostics_only(tmp_path: Path) -> None:
    exe = require_tool("basedpyright-langserver")
    client, static = await _initialized(tmp_path, [exe, "--stdio"])
    try:
        assert static is None
        registered = await client.wait_for(
            lambda: [
                r["registerOptions"]
                for method, params in client.server_requests
                if method == "client/registerCapability"
                for r in params["registrations"]
                if r["method"] == "textDocument/diagnostic"
            ],
            "basedpyright's textDocument/diagnostic registration",
        )
        assert [o["workspaceDiagnostics"] for o in registered] == [False]
    finally:
        await client.stop()


@pytest.mark.parametrize(
    ("exe", "args", "options"),
    [
        ("ruff", ["server"], None),
        ("clangd", [], None),
        ("rust-analyzer", [], {"cargo": {"noSysroot": True}}),
    ],
)
async def test_ruff_clangd_and_rust_analyzer_answer_method_not_found(
    tmp_path: Path, exe: str, args: list[str], options: Any
) -> None:
    client, static = await _initialized(tmp_path, [require_tool(exe), *args], options)
    try:
        assert static is None or static.get("workspaceDiagnostics") is False, static
        assert "-32601" in await _error_once_loaded(client), exe
    finally:
        await client.stop()
