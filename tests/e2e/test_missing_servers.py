"""A workspace whose servers are all missing: the editor is shown one message that names them
and the command that installs them (raw LSP, through a real `lspmux proxy` process)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.e2e.daemon_harness import frame, read_message

ROOT = Path(__file__).resolve().parents[2]


async def test_a_python_workspace_without_its_servers_is_told_how_to_install_them(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "app.py").write_text("import os\n")
    env = dict(os.environ)
    env.update(
        PATH=f"{tmp_path / 'no-bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",  # no Python server
        XDG_DATA_HOME=str(tmp_path / "data"),  # nothing installed by `lspmux install`
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PYTHONPATH=str(ROOT),
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "proxy",
        "--log-file",
        str(tmp_path / "proxy.log"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=workspace,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        params = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        proc.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        )
        shown = []
        while True:
            msg = await read_message(proc.stdout, 30)
            if msg.get("method") == "window/showMessage":
                shown.append(msg["params"])
            elif msg.get("id") == 1:
                break
        assert len(shown) == 1, shown
        assert shown[0]["type"] == 1  # an error: editors show it, not only log it
        text = shown[0]["message"]
        assert "none of the language servers this workspace needs is installed" in text
        assert "basedpyright, for app.py: `basedpyright-langserver` not found" in text
        assert "install: lspmux install basedpyright" in text
        assert "Install with: lspmux install basedpyright ruff" in text
        assert msg["error"]["message"] == text  # and initialize says the same
    finally:
        proc.kill()
        await proc.wait()
