"""A transparent share with the real rust-analyzer: `lspmux client --server-path rust-analyzer`
to a daemon gives the client rust-analyzer's own `initialize` answer (its `serverInfo`, its
`experimental` capabilities) and rust-analyzer's answers to its extension requests, as
editor integrations (rustaceanvim and others) expect. Two clients of one Cargo workspace get
the same answer from one process."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    DaemonUnderTest,
    RawClient,
    daemon_fixture,
)

#: rust-analyzer needs no sysroot to load a workspace here (no rust-src on the machine).
NO_SYSROOT = {"cargo": {"noSysroot": True}}
#: Server capabilities rust-analyzer 2022-05 announces under `experimental`.
EXPERIMENTAL = ("runnables", "joinLines", "onEnter", "parentModule", "ssr", "openCargoToml")


def cargo_workspace(root: Path) -> Path:
    """A two-member Cargo workspace: `app` uses `util`."""
    root.mkdir()
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["app", "util"]\n')
    for name, deps in (("util", ""), ("app", 'util = { path = "../util" }\n')):
        (root / name / "src").mkdir(parents=True)
        (root / name / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{deps}"
        )
    (root / "util" / "src" / "lib.rs").write_text("pub fn double(x: i32) -> i32 {\n    x * 2\n}\n")
    (root / "app" / "src" / "main.rs").write_text(
        'fn main() {\n    let n = util::double(\n        21,\n    );\n    println!("{}", n);\n}\n'
    )
    return root


async def shim(daemon: DaemonUnderTest, workspace: Path) -> tuple[RawClient, Any]:
    """`lspmux client --server-path rust-analyzer` as an editor starts it, on stdio."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "client",
        "--connect",
        daemon.address,
        "--server-path",
        "rust-analyzer",
        cwd=str(workspace),
        env=daemon.env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    return RawClient(proc.stdout, proc.stdin), proc  # type: ignore[arg-type]


def initialize_params(workspace: Path) -> dict[str, Any]:
    return {
        "processId": None,
        "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}},
        "rootUri": workspace.as_uri(),
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
        "initializationOptions": NO_SYSROOT,
    }


async def test_rust_analyzer_is_passed_through(daemon: DaemonUnderTest, tmp_path: Path) -> None:
    assert shutil.which("rust-analyzer"), "rust-analyzer is not installed (scripts/setup-tests)"
    assert shutil.which("cargo"), "cargo is not on PATH"
    workspace = cargo_workspace(tmp_path / "ws")
    await daemon.start()  # the client's initializationOptions (no sysroot) reach the server
    procs = []
    try:
        clients = []
        for _ in range(2):
            client, proc = await shim(daemon, workspace)
            procs.append(proc)
            clients.append(client)
        results = []
        for client in clients:
            answer = await client.request(1, "initialize", initialize_params(workspace), 120)
            result = answer["result"]
            results.append(result)
            assert result["serverInfo"]["name"] == "rust-analyzer", result["serverInfo"]
            assert "2022-05-09" in result["serverInfo"].get("version", "")
            experimental = result["capabilities"]["experimental"]
            assert all(experimental.get(k) for k in EXPERIMENTAL), experimental
            client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        first, second = clients
        assert results[0] == results[1]  # the server's first answer, for every client
        for row in daemon.status()["clients"]:  # one rust-analyzer for both
            assert "rust-analyzer[ws]" in row["instances"], row

        # Extension requests get rust-analyzer's own answers.
        status = await until_answered(first, 2, "rust-analyzer/analyzerStatus", {})
        assert isinstance(status.get("result"), str) and "files" in status["result"], status
        uri = (workspace / "app" / "src" / "main.rs").as_uri()
        text = (workspace / "app" / "src" / "main.rs").read_text()
        for client in clients:
            client.send(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {
                        "textDocument": {
                            "uri": uri,
                            "languageId": "rust",
                            "version": 1,
                            "text": text,
                        }
                    },
                }
            )
        tree = await until_answered(
            second, 3, "rust-analyzer/syntaxTree", {"textDocument": {"uri": uri}}
        )
        assert "SOURCE_FILE" in str(tree.get("result")) and "CALL_EXPR" in tree["result"], tree
        joined = await until_answered(
            first,
            4,
            "experimental/joinLines",
            {
                "textDocument": {"uri": uri},
                "ranges": [
                    {"start": {"line": 1, "character": 12}, "end": {"line": 3, "character": 5}}
                ],
            },
        )
        edits = joined.get("result")
        assert isinstance(edits, list) and edits, joined
        # a member's file is served by the workspace's instance: one rust-analyzer in all
        assert len(daemon.backends("rust-analyzer")) == 1
        for row in daemon.status()["clients"]:
            assert row["instances"] == ["rust-analyzer[ws]"], row
        await shut_down(clients)
    finally:
        await reap(procs)


async def shut_down(clients: list[RawClient]) -> None:
    """shutdown, then exit, for each client."""
    for client in clients:
        await client.request(90, "shutdown", None, 30)
        client.send({"jsonrpc": "2.0", "method": "exit"})


async def reap(procs: list[Any]) -> None:
    """Each shim process ended: waited for, killed if it does not end by itself."""
    for proc in procs:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 20)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def until_answered(
    client: RawClient, msg_id: int, method: str, params: Any, timeout: float = 120
) -> dict[str, Any]:
    """The answer to a request, asked again while rust-analyzer loads the workspace (it
    answers ContentModified, "waiting for cargo metadata", until then)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        answer = await client.request(msg_id, method, params, timeout)
        if answer.get("error", {}).get("code") != -32801 or loop.time() > deadline:
            return answer
        msg_id += 1000
        await asyncio.sleep(0.2)  # a retry cadence, not a wait for an event
