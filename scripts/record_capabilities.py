#!/usr/bin/env python3
"""Record what real language servers answer to `initialize`, for the capability unit tests.

Each server is started in a scratch workspace (a Python file, a `pyproject.toml`, a C file with
`compile_flags.txt`, a JavaScript file), sent `initialize` with the capabilities lspmux gives a
shared backend (`for_backend(None)`), then `initialized`; the dynamic registrations it sends in
the next seconds are kept too. The scratch folder's path is written as `/workspace`. The result goes to `tests/data/capabilities/<server>.json`:

    {"server": ..., "argv": [...], "serverInfo": {...}, "sent": {...client capabilities},
     "capabilities": {...}, "registrations": [{"id", "method", "registerOptions"}, ...]}

    .venv/bin/python scripts/record_capabilities.py [--out tests/data/capabilities] [NAME...]

Servers are found on PATH plus `.venv/bin` and `.tools/node_modules/.bin`. Biome's `lsp-proxy`
talks to a daemon: it gets a private TMPDIR so that the daemon is ours, and `biome stop` (with
that TMPDIR) ends it. Every process started here is stopped before the script exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lspmux.backends.client_caps import for_backend  # noqa: E402
from lspmux.wire.framing import FrameParser, encode  # noqa: E402

SERVERS: dict[str, list[str]] = {
    "basedpyright": ["basedpyright-langserver", "--stdio"],
    "ruff": ["ruff", "server"],
    "clangd": ["clangd", "--log=error"],
    "biome": ["biome", "lsp-proxy"],
}

#: How long to wait for registrations after `initialized`.
SETTLE = 3.0


def _workspace(folder: Path) -> None:
    (folder / "pyproject.toml").write_text('[project]\nname = "sample"\nversion = "0"\n')
    (folder / "main.py").write_text("import os\n\n\ndef f(x: int) -> int:\n    return x\n")
    (folder / "main.c").write_text("int main(void) { return 0; }\n")
    (folder / "compile_flags.txt").write_text("-std=c11\n")
    (folder / "main.js").write_text("const a = 1;\n")
    (folder / "biome.json").write_text("{}\n")


def _path() -> str:
    extra = [ROOT / ".venv" / "bin", ROOT / ".tools" / "node_modules" / ".bin"]
    return os.pathsep.join([*(str(p) for p in extra), os.environ.get("PATH", "")])


async def record(name: str, argv: list[str], folder: Path, env: dict[str, str]) -> dict[str, Any]:
    exe = shutil.which(argv[0], path=env["PATH"])
    if exe is None:
        raise SystemExit(f"{name}: {argv[0]} is not installed (run scripts/setup-tests)")
    proc = await asyncio.create_subprocess_exec(
        exe,
        *argv[1:],
        cwd=folder,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    parser = FrameParser()
    sent = for_backend(None)
    registrations: list[dict[str, Any]] = []

    def send(msg: dict[str, Any]) -> None:
        stdin.write(encode({"jsonrpc": "2.0", **msg}))

    async def until_response(msg_id: int, timeout: float) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            try:
                chunk = await asyncio.wait_for(stdout.read(65536), remaining)
            except TimeoutError:
                return None
            if not chunk:
                raise SystemExit(f"{name}: the server exited during the recording")
            for body in parser.feed(chunk):
                if not isinstance(body, bytes):
                    continue
                msg = orjson.loads(body)
                if "method" in msg and "id" in msg:  # a server→client request: answer it
                    if msg["method"] == "client/registerCapability":
                        registrations.extend(msg["params"]["registrations"])
                    result: Any = None
                    if msg["method"] == "workspace/configuration":
                        result = [None for _ in msg["params"].get("items", [])]
                    send({"id": msg["id"], "result": result})
                elif msg.get("id") == msg_id and "method" not in msg:
                    return msg.get("result")

    uri = folder.as_uri()
    send(
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": folder.name}],
                "capabilities": sent,
            },
        }
    )
    result = await until_response(1, 60.0)
    if result is None:
        raise SystemExit(f"{name}: no answer to initialize within 60 s")
    send({"method": "initialized", "params": {}})
    await until_response(-1, SETTLE)  # nothing answers -1: just collect registrations
    send({"id": 2, "method": "shutdown"})
    await until_response(2, 10.0)
    send({"method": "exit"})
    stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), 10.0)
    except TimeoutError:
        proc.kill()
        await proc.wait()
    return {
        "server": name,
        "argv": argv,
        "serverInfo": result.get("serverInfo"),
        "sent": sent,
        "capabilities": result.get("capabilities"),
        "registrations": registrations,
    }


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "capabilities")
    ap.add_argument("names", nargs="*", default=list(SERVERS))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lspmux-record-") as tmp:
        folder = Path(tmp) / "workspace"
        folder.mkdir()
        _workspace(folder)
        private_tmp = Path(tmp) / "tmp"  # Biome's daemon socket lives under TMPDIR
        private_tmp.mkdir()
        env = {**os.environ, "PATH": _path(), "TMPDIR": str(private_tmp)}
        env["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        try:
            for name in args.names:
                data = await record(name, SERVERS[name], folder, env)
                target = args.out / f"{name}.json"
                text = json.dumps(data, indent=1, sort_keys=True) + "\n"
                text = text.replace(folder.as_uri(), "file:///workspace")
                target.write_text(text.replace(str(folder), "/workspace"))  # stable records
                info = data["serverInfo"] or {}
                print(f"{name}: {info.get('name')} {info.get('version')} → {target}")
        finally:
            if "biome" in args.names and (biome := shutil.which("biome", path=env["PATH"])):
                with contextlib.suppress(OSError):
                    stop = await asyncio.create_subprocess_exec(
                        biome, "stop", env=env, cwd=folder, stdout=asyncio.subprocess.DEVNULL
                    )
                    await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
