"""Restricted mode with real servers through `lspmux proxy`: in a repository the user has not
trusted, basedpyright does not run the repository's `.venv/bin/python` and rust-analyzer does
not run its build script; after `lspmux trust` both do, as they would unrestricted."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.e2e.daemon_harness import frame, read_message
from tests.e2e.test_limits import RawProxy, env_for
from tests.tools import require_tool

#: rust-analyzer 2022-05-09 cannot read a sysroot of today's toolchain; the crate needs none.
RUST_CONFIG = """
[servers.rust-analyzer.initialization_options]
cargo = { noSysroot = true }
"""


@contextlib.asynccontextmanager
async def _opened(
    tmp_path: Path, folder: Path, file: Path, language: str, *extra: str
) -> AsyncIterator[Callable[[Callable[[dict[str, Any]], bool]], Awaitable[None]]]:
    """`file` opened (and hovered) through a fresh `lspmux proxy` for the workspace `folder`;
    yields `wait(until)`, which reads what comes until a message satisfies `until` (server
    requests are answered with null on the way)."""
    proxy = await RawProxy.start(tmp_path, folder, *extra)
    stdout = proxy.proc.stdout
    assert stdout is not None
    try:
        params = {"capabilities": {"window": {"workDoneProgress": True}}, "processId": None,
                  "rootUri": folder.as_uri()}  # fmt: skip
        reply = await proxy.request(1, "initialize", params)
        assert "capabilities" in reply["result"], reply
        proxy.send_bytes(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        item = {"uri": file.as_uri(), "languageId": language, "version": 1,
                "text": file.read_text()}  # fmt: skip
        opened = {"textDocument": item}
        proxy.send_bytes(
            frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": opened})
        )
        position = {"textDocument": {"uri": file.as_uri()}, "position": {"line": 1, "character": 4}}
        hover = {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": position}
        proxy.send_bytes(frame(hover))

        async def wait(until: Callable[[dict[str, Any]], bool]) -> None:
            while True:
                msg = await read_message(stdout, 120)
                if "method" in msg and "id" in msg:
                    proxy.send_bytes(frame({"jsonrpc": "2.0", "id": msg["id"], "result": None}))
                if until(msg):
                    return

        yield wait
    finally:
        await proxy.stop()


async def _session(
    tmp_path: Path,
    folder: Path,
    file: Path,
    language: str,
    until: Callable[[dict[str, Any]], bool],
    *extra: str,
) -> None:
    async with _opened(tmp_path, folder, file, language, *extra) as wait:
        await wait(until)


async def _trust(tmp_path: Path, repo: Path) -> None:
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


# -- basedpyright: the repository's interpreter -----------------------------------------------


def _python_project(tmp_path: Path) -> tuple[Path, Path]:
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


def _hover_with(text: str) -> Callable[[dict[str, Any]], bool]:
    """The hover's answer: it comes once basedpyright resolved `os` — after it ran the
    interpreter it picked."""

    def answered(msg: dict[str, Any]) -> bool:
        if msg.get("id") != 2 or "method" in msg:
            return False
        assert text in json.dumps(msg.get("result")), msg
        return True

    return answered


async def test_basedpyright_runs_the_repositorys_python_only_after_lspmux_trust(
    tmp_path: Path,
) -> None:
    require_tool("basedpyright-langserver")
    repo, marker = _python_project(tmp_path)

    await _session(tmp_path, repo, repo / "a.py", "python", _hover_with("getcwd"))
    assert not marker.exists(), marker.read_text()

    await _trust(tmp_path, repo)
    await _session(tmp_path, repo, repo / "a.py", "python", _hover_with("getcwd"))
    assert marker.exists()  # trusted: basedpyright uses the repository's .venv as it would


# -- rust-analyzer: the crate's build script ----------------------------------------------------


def _crate(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A crate whose build script writes a marker file when cargo runs it."""
    repo = tmp_path / name
    (repo / "src").mkdir(parents=True)
    (repo / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2018"\n'
    )
    marker = tmp_path / f"{name}-build-script-ran"
    (repo / "build.rs").write_text(
        f'fn main() {{ std::fs::write({json.dumps(str(marker))}, "ran").unwrap(); }}\n'
    )
    (repo / "src" / "main.rs").write_text('fn main() {\n    println!("hi");\n}\n')
    return repo, marker


def _indexed(ends: int, also: Callable[[], bool]) -> Callable[[dict[str, Any]], bool]:
    """True once rust-analyzer ended its "Indexing" progress `ends` times and `also()` holds."""
    titles: dict[str, str] = {}
    seen = [0]

    def done(msg: dict[str, Any]) -> bool:
        if msg.get("method") == "$/progress":
            token, value = json.dumps(msg["params"]["token"]), msg["params"]["value"]
            if value.get("kind") == "begin":
                titles[token] = value.get("title", "")
            elif value.get("kind") == "end" and titles.get(token) == "rust-analyzer: Indexing":
                seen[0] += 1
        return seen[0] >= ends and also()

    return done


async def test_rust_analyzer_runs_the_build_script_only_after_lspmux_trust(
    tmp_path: Path,
) -> None:
    """A trusted twin crate is the clock. The untrusted crate's rust-analyzer starts first and
    indexes; only then does the twin's start, run its build script (a marker appears) and
    index again. The untrusted crate had all that time and more: its build script has not
    run, because its rust-analyzer runs restricted. Trusted, it runs."""
    require_tool("rust-analyzer")
    require_tool("cargo")
    twin, twin_marker = _crate(tmp_path, "twin")
    repo, marker = _crate(tmp_path, "crate")
    config = tmp_path / "rust.toml"
    config.write_text(RUST_CONFIG)
    await _trust(tmp_path, twin)
    flags = ("--config", str(config))

    async with _opened(tmp_path, repo, repo / "src" / "main.rs", "rust", *flags) as untrusted:
        await untrusted(_indexed(1, lambda: True))
        # the twin loads, runs its build script, and indexes again (twice in all)
        main = twin / "src" / "main.rs"
        await _session(tmp_path, twin, main, "rust", _indexed(2, twin_marker.exists), *flags)
        assert not marker.exists()

    await _trust(tmp_path, repo)
    await _session(
        tmp_path,
        repo,
        repo / "src" / "main.rs",
        "rust",
        lambda msg: marker.exists(),  # rust-analyzer reports progress after the script ran
        *flags,
    )
