"""`make demo`: lspmux proxy on the bundled sample project, as an editor would drive it.

Starts `lspmux proxy` on tests/data/workspace, opens app.py, asks for a hover, resolves a Locate
description, and prints the merged diagnostics of basedpyright and ruff once both reported.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
WORKSPACE = ROOT / "tests" / "data" / "workspace"


class Client:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[dict]] = {}
        self.diagnostics: dict[str, list[dict]] = {}
        self.reader = asyncio.ensure_future(self._read())

    def send(self, msg: dict) -> None:
        body = orjson.dumps({"jsonrpc": "2.0", **msg})
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: object) -> object:
        self.next_id += 1
        fut: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        self.send({"id": self.next_id, "method": method, "params": params})
        reply = await asyncio.wait_for(fut, 60)
        if "error" in reply:
            raise RuntimeError(reply["error"]["message"])
        return reply.get("result")

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            try:
                header = await out.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return  # the proxy exited
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            msg = orjson.loads(await out.readexactly(length))
            if "id" in msg and "method" not in msg:
                self.pending.pop(msg["id"]).set_result(msg)
            elif msg.get("method") == "textDocument/publishDiagnostics":
                self.diagnostics[msg["params"]["uri"]] = msg["params"]["diagnostics"]
            elif "id" in msg:  # a server→client request: accept it
                self.send({"id": msg["id"], "result": None})


async def main() -> int:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "proxy",
        "--log-level",
        "warning",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=WORKSPACE,
        env={**os.environ, "PATH": f"{ROOT / '.venv/bin'}:{os.environ['PATH']}"},
    )
    client = Client(proc)
    await client.request(
        "initialize", {"processId": os.getpid(), "rootUri": WORKSPACE.as_uri(), "capabilities": {}}
    )
    client.send({"method": "initialized", "params": {}})
    uri = (WORKSPACE / "app.py").as_uri()
    text = (WORKSPACE / "app.py").read_text()
    client.send(
        {
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}
            },
        }
    )

    hover = await client.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 15, "character": 6}},
    )
    print("hover at app.py:16:7 →", (hover or {}).get("contents", {}).get("value"))
    located = await client.request(
        "locate/resolve", {"locate": "app.py:Greeter.greet@return <|>message"}
    )
    print(
        "locate 'app.py:Greeter.greet@return <|>message' →",
        located["label"],  # type: ignore[index]
        located["position"],
    )  # type: ignore[index]

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
    await client.request("shutdown", None)
    client.send({"method": "exit"})
    return await asyncio.wait_for(proc.wait(), 30)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
