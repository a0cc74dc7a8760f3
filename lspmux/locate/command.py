"""`lspmux locate STRING [--range] [--json]`: Locate for a human or a script.

Speaks LSP to lspmux itself — the running daemon when one answers, else a private
`lspmux proxy` — and asks `locate/resolve` (or `locate/resolveRange`), so symbol scopes are
answered by the file's real server exactly as an agent would get them. Prints `path:line:col`
(1-based; `path:line:col-line:col` for a range) or the JSON result.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from lspmux.headless import HeadlessClient, ReportError, command, daemon_running


async def locate(
    spec: str, *, root: Path, want_range: bool, configs: list[Path], use_daemon: bool
) -> dict[str, object]:
    proc = await asyncio.create_subprocess_exec(
        *command(configs, use_daemon=use_daemon),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=str(root),
    )
    client = HeadlessClient(proc)
    try:
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
            },
            timeout=60,
        )
        client.notify("initialized", {})
        method = "locate/resolveRange" if want_range else "locate/resolve"
        result = await client.request(method, {"locate": spec}, timeout=120)
        return dict(result or {})
    finally:
        await client.close()


def main(spec: str, *, want_range: bool, as_json: bool, root: Path, configs: list[Path]) -> int:
    use_daemon = not configs and daemon_running()
    try:
        result = asyncio.run(
            locate(spec, root=root, want_range=want_range, configs=configs, use_daemon=use_daemon)
        )
    except ReportError as exc:
        print(f"lspmux locate: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print(result.get("label"))
    return 0
