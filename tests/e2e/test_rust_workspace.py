"""One Cargo workspace, one rust-analyzer: the real rust-analyzer on tests/data/cargo_workspace
(members `a` and `b`, `b` uses `a` by path), through `lspmux proxy` and through the daemon.

Opening a file of `a`, then one of `b`, starts exactly one rust-analyzer process, rooted at the
workspace (lspmux/workspace/roots.py, rule "cargo"), and hover in `b` on a function of `a`
answers with `a`'s documentation, which only a server that loaded the whole workspace knows.
Through the daemon the two files come from two clients, each with its member as its workspace
folder (as editors opened in the members would).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import DATA, Proxy
from tests.e2e.daemon_harness import DaemonUnderTest, daemon_fixture  # noqa: F401 (a fixture)
from tests.polling import eventually
from tests.tools import require_tool

pytestmark = pytest.mark.e2e

#: rust-analyzer 2022-05-09 cannot read a sysroot of today's toolchain; the workspace needs none.
CONFIG = """
[servers.rust-analyzer.initialization_options]
cargo = { noSysroot = true }
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The Cargo workspace instead of the shared Python one (proxy_factory opens this)."""
    ws = tmp_path / "cargo_workspace"
    shutil.copytree(DATA / "cargo_workspace", ws)
    return ws


def rust_analyzers(proxy: Proxy, exe: str) -> list[psutil.Process]:
    """The rust-analyzer language servers the proxy runs (not cargo, not proc-macro helpers)."""
    found = []
    for process in proxy.descendants():
        try:
            if os.path.realpath(process.exe()) == exe and "proc-macro" not in process.cmdline():
                found.append(process)
        except psutil.Error:
            continue
    return found


async def hover_text(proxy: Proxy, params: t.HoverParams) -> str:
    """The hover's text; an error (rust-analyzer: "waiting for cargo metadata") as text too."""
    try:
        hover = await asyncio.wait_for(proxy.client.text_document_hover_async(params), 30)
    except JsonRpcException as exc:
        return f"error: {exc}"
    contents = hover.contents if hover is not None else ""
    return str(getattr(contents, "value", contents))


async def assert_hover_shows_a(client: Proxy, b_uri: str, workspace: Path) -> None:
    """Hover in b on `a::add_one` shows a's docs. rust-analyzer answers an error, null, or no
    docs of a until it has loaded the workspace: polled, as `eventually` does, async."""
    line = (workspace / "b/src/lib.rs").read_text().splitlines()[1]
    position = t.Position(1, line.index("add_one") + 2)
    params = t.HoverParams(t.TextDocumentIdentifier(b_uri), position)
    answers: list[str] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 90
    while loop.time() < deadline:
        answers.append(await hover_text(client, params))
        if "Adds one to" in answers[-1]:
            break
        await asyncio.sleep(0.5)
    assert "Adds one to" in answers[-1], f"hover in b on a::add_one: {answers[-3:]}"
    assert "pub fn add_one(value: i32) -> i32" in answers[-1]


async def test_two_members_share_one_rust_analyzer(
    proxy_factory: Callable[..., Any], workspace: Path
) -> None:
    require_tool("cargo")
    exe = os.path.realpath(require_tool("rust-analyzer"))
    proxy: Proxy = await proxy_factory(config=CONFIG)

    proxy.open("a/src/lib.rs", "rust")
    await eventually(lambda: rust_analyzers(proxy, exe), "rust-analyzer started for a", timeout=60)
    b_uri = proxy.open("b/src/lib.rs", "rust")

    await assert_hover_shows_a(proxy, b_uri, workspace)

    servers = rust_analyzers(proxy, exe)
    assert len(servers) == 1, [p.cmdline() for p in servers]
    assert Path(servers[0].cwd()) == workspace


async def test_two_daemon_clients_in_two_members_share_one_rust_analyzer(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    require_tool("cargo")
    require_tool("rust-analyzer")
    await daemon.start("--config", str(daemon.config(CONFIG)))
    in_a = await daemon.client(workspace, folder=workspace / "a")
    in_b = await daemon.client(workspace, folder=workspace / "b")

    in_a.open("a/src/lib.rs", "rust")
    await eventually(lambda: daemon.backends("rust-analyzer"), "rust-analyzer started", timeout=60)
    b_uri = in_b.open("b/src/lib.rs", "rust")
    await assert_hover_shows_a(in_b, b_uri, workspace)

    servers = daemon.backends("rust-analyzer")
    assert len(servers) == 1, [p.cmdline() for p in servers]
    assert Path(servers[0].cwd()) == workspace
