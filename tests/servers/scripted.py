"""A language server that misbehaves on purpose, for fault-injection tests (stdlib only).

Usage: scripted.py MODE, where MODE is
  hang     never answers textDocument/hover (answers everything else)
  ask      on hover, asks the client window/showMessageRequest and workspace/configuration,
           and answers the hover with what it was told
  garbage  writes a malformed frame and invalid JSON before answering each hover
  crash    exits with code 3 when it receives textDocument/hover (saying so on stderr)
  fail     offers hover, definition and completion, and answers each with an error
  huge     on hover, announces a 10^12-byte answer and streams 16 MiB of it (then hangs)
  flood    on hover, sends 100 MiB of window/logMessage (50,000 of 2 KiB), records
           {"flooded": 50000} in $SCRIPTED_LOG, then answers the hover
  echo     on hover, asks workspace/configuration (section "scripted") and answers with JSON
           of what it got: initializationOptions, that answer, the last didChangeConfiguration
           settings, $VIRTUAL_ENV and its pid
  ext      a server with extensions: announces `experimental` capabilities and its own
           serverInfo; answers `scripted/echo` with its params; on the notification
           `scripted/poke` sends the notification `scripted/poked` and the request
           `scripted/ask` to the client, then the notification `scripted/answered` with the
           client's answer
  rename   offers rename (full text sync) and never publishes diagnostics: a rename puts
           the new name in place of every whole-word occurrence of the name at the position
           in the open document
  die      writes a rustup-like error to stderr and exits 1 before answering initialize
It records every message it receives, one JSON per line, in $SCRIPTED_LOG when set.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "hang"
LOG = os.environ.get("SCRIPTED_LOG")
out = sys.stdout.buffer
inp = sys.stdin.buffer


def write(msg: dict[str, Any]) -> None:
    body = json.dumps(msg).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def read() -> dict[str, Any] | None:
    length = None
    while True:
        line = inp.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    assert length is not None
    msg = json.loads(inp.read(length))
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps(msg) + "\n")
    return msg


next_id = 1000
waiting: dict[int, Any] = {}
got: dict[str, Any] = {"init": None, "changed": None}


def ask(method: str, params: Any) -> Any:
    """Send a request to the client and read until its answer arrives."""
    global next_id
    next_id += 1
    write({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
    while True:
        msg = read()
        if msg is None:
            sys.exit(0)
        if msg.get("id") == next_id and "method" not in msg:
            return msg.get("result", msg.get("error"))
        handle(msg)


EXPERIMENTAL = {"hoverActions": True, "joinLines": True, "scriptedStatus": {"level": 2}}


texts: dict[str, str] = {}  # mode rename: uri → the text the client sent


def rename(params: dict[str, Any]) -> dict[str, Any]:
    """A WorkspaceEdit replacing every whole-word occurrence of the word at the position."""
    import re

    uri = params["textDocument"]["uri"]
    lines = texts[uri].split("\n")
    pos = params["position"]
    line = lines[pos["line"]]
    word = next(
        m.group() for m in re.finditer(r"\w+", line) if m.start() <= pos["character"] <= m.end()
    )
    edits = [
        {"range": {"start": {"line": i, "character": m.start()},
                   "end": {"line": i, "character": m.end()}}, "newText": params["newName"]}
        for i, text in enumerate(lines)
        for m in re.finditer(rf"\b{re.escape(word)}\b", text)
    ]  # fmt: skip
    return {"changes": {uri: edits}}


def handle(msg: dict[str, Any]) -> None:
    method = msg.get("method")
    msg_id = msg.get("id")
    if method == "initialize":
        got["init"] = (msg.get("params") or {}).get("initializationOptions")
    if method == "initialize" and MODE == "ext":
        write(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "result": {
                    "capabilities": {
                        "hoverProvider": True,
                        "textDocumentSync": 2,
                        "positionEncoding": "utf-16",
                        "experimental": EXPERIMENTAL,
                    },
                    "serverInfo": {"name": "scripted-ext", "version": "7.1"},
                },
            }
        )
    elif MODE == "ext" and method == "scripted/echo":
        write({"jsonrpc": "2.0", "id": msg_id, "result": {"echo": msg.get("params")}})
    elif MODE == "ext" and method == "scripted/poke":
        write({"jsonrpc": "2.0", "method": "scripted/poked", "params": msg.get("params")})
        answer = ask("scripted/ask", {"question": "ready?"})
        write({"jsonrpc": "2.0", "method": "scripted/answered", "params": {"answer": answer}})
    elif method == "initialize" and MODE == "rename":
        caps = {"renameProvider": True, "textDocumentSync": 1}
        write({"jsonrpc": "2.0", "id": msg_id, "result": {"capabilities": caps}})
    elif MODE == "rename" and method in ("textDocument/didOpen", "textDocument/didChange"):
        params = msg.get("params") or {}
        doc = params["textDocument"]
        texts[doc["uri"]] = doc["text"] if "text" in doc else params["contentChanges"][-1]["text"]
    elif MODE == "rename" and method == "textDocument/rename":
        write({"jsonrpc": "2.0", "id": msg_id, "result": rename(msg["params"])})
    elif method == "initialize":
        write(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "result": {
                    "capabilities": {
                        "hoverProvider": True,
                        "definitionProvider": MODE == "fail",
                        "completionProvider": {} if MODE == "fail" else None,
                        "textDocumentSync": 2,
                    },
                    "serverInfo": {"name": "scripted", "version": MODE},
                },
            }
        )
    elif method == "workspace/didChangeConfiguration":
        got["changed"] = (msg.get("params") or {}).get("settings")
    elif method == "shutdown":
        write({"jsonrpc": "2.0", "id": msg_id, "result": None})
    elif method == "exit":
        sys.exit(0)
    elif MODE == "fail" and method in (
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/completion",
    ):
        write({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": "on purpose"}})
    elif method == "textDocument/hover":
        if MODE == "hang":
            return
        if MODE == "crash":
            sys.stderr.write("scripted: crashing on purpose\n")
            sys.stderr.flush()
            sys.exit(3)
        if MODE == "huge":
            out.write(b"Content-Length: 1000000000000\r\n\r\n")
            try:
                for _ in range(16):
                    out.write(b"x" * (1024 * 1024))
                    out.flush()
            except BrokenPipeError:
                sys.exit(0)
            return
        if MODE == "flood":
            line = "x" * 2048
            for i in range(50_000):
                write({"jsonrpc": "2.0", "method": "window/logMessage",
                       "params": {"type": 4, "message": f"{i} {line}"}})  # fmt: skip
            if LOG:
                with open(LOG, "a") as f:
                    f.write(json.dumps({"flooded": 50_000}) + "\n")
        if MODE == "garbage":
            out.write(b"Content-Length: 5\r\n\r\n{oops")
            out.write(b"Content-Type: nothing\r\n\r\n")
            out.flush()
        value = "scripted hover"
        if MODE == "echo":
            config = ask("workspace/configuration", {"items": [{"section": "scripted"}]})
            seen = {**got, "config": config, "virtual_env": os.environ.get("VIRTUAL_ENV")}
            value = json.dumps({**seen, "pid": os.getpid()})
        if MODE == "ask":
            choice = ask(
                "window/showMessageRequest",
                {"type": 3, "message": "Pick one", "actions": [{"title": "yes"}, {"title": "no"}]},
            )
            config = ask("workspace/configuration", {"items": [{"section": "scripted.answer"}]})
            value = f"chose {json.dumps(choice)} configured {json.dumps(config)}"
        write(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "result": {"contents": {"kind": "plaintext", "value": value}},
            }
        )
    elif msg_id is not None and method is not None:
        write({"jsonrpc": "2.0", "id": msg_id, "result": None})


if MODE == "die":
    sys.stderr.write("error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.\n")
    sys.stderr.write("To install, run `rustup component add rust-analyzer`\n")
    sys.exit(1)

while True:
    message = read()
    if message is None:
        break
    handle(message)
