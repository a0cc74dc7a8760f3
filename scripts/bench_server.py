"""A fast LSP echo server for the proxy benchmark (stdlib + orjson only).

It speaks real LSP over stdio (Content-Length framing) and does as little as it can, so that a
benchmark measures the proxy in front of it, not the server:

- `initialize` → capabilities (full text sync, hover, completion); `shutdown` → null;
  `exit` → exits (code 0 after shutdown, 1 otherwise);
- `textDocument/hover` → a small Hover, at once;
- `textDocument/completion` → a ~2.5 MB CompletionList (`completion_list()`: 12,000 items with
  label, kind, detail, documentation, sortText, insertText), serialized once at start-up;
- any other request → MethodNotFound; notifications (didOpen, $/cancelRequest, …) are ignored.

With `--incremental` (scripts/bench_edits.py) it announces incremental text sync and keeps what
it is sent of each document: didOpen's text and every didChange, stored as they come and applied
only when `bench/text` asks (`{"textDocument": {"uri"}}` → the text's length, SHA-256 and how
many changes it has taken), so that keeping them costs the timed path nothing. Texts are
expected to break lines with "\n" only (what the edit benchmark sends).

Every complete message in a read is handled before the answers are written, in one write, so
pipelined requests are answered in batches. Responses start with `{"jsonrpc":"2.0","id":N,` as
serde- and vscode-languageserver-based servers write them.

Usage: bench_server.py [--items N] [--incremental]
"""

from __future__ import annotations

import hashlib
import os
import sys
from typing import Any

import orjson

HEADER_END = b"\r\n\r\n"
DEFAULT_ITEMS = 12_000


def completion_list(items: int = DEFAULT_ITEMS) -> dict[str, Any]:
    """The CompletionList the server answers with: deterministic, ~210 bytes of JSON per item."""
    out = []
    for i in range(items):
        name = f"bench_item_{i:05d}"
        out.append(
            {
                "label": name,
                "kind": 3 if i % 3 else 6,
                "detail": f"fn {name}() -> u32",
                "documentation": {
                    "kind": "markdown",
                    "value": f"Returns `{name}`, {i}.",
                },
                "sortText": f"{i:05d}",
                "insertText": f"{name}($0)",
            }
        )
    return {"isIncomplete": False, "items": out}


HOVER_RESULT = orjson.dumps(
    {
        "contents": {"kind": "markdown", "value": "```rust\nfn bench() -> u32\n```"},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
    }
)

CAPABILITIES = {
    "textDocumentSync": {"openClose": True, "change": 1},
    "hoverProvider": True,
    "completionProvider": {"resolveProvider": False, "triggerCharacters": ["."]},
}


class Texts:
    """Documents as sent: (text, changes not applied yet, changes taken in all) per URI."""

    def __init__(self) -> None:
        self.docs: dict[str, tuple[str, list[Any], int]] = {}

    def note(self, method: str, params: Any) -> None:
        if method == "textDocument/didOpen":
            td = params["textDocument"]
            self.docs[td["uri"]] = (td["text"], [], 0)
        elif method == "textDocument/didChange":
            got = self.docs.get(params["textDocument"]["uri"])
            if got is not None:
                got[1].extend(params["contentChanges"])
        elif method == "textDocument/didClose":
            self.docs.pop(params["textDocument"]["uri"], None)

    def digest(self, uri: str) -> dict[str, Any] | None:
        got = self.docs.get(uri)
        if got is None:
            return None
        text, pending, taken = got
        if pending:
            text = apply_changes(text, pending)
        self.docs[uri] = (text, [], taken + len(pending))
        return {
            "length": len(text),
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
            "changes": taken + len(pending),
        }


def _utf16_index(line: str, character: int) -> int:
    if line.isascii():
        return min(character, len(line))
    seen = 0
    for i, ch in enumerate(line):
        if seen >= character:
            return i
        seen += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def apply_changes(text: str, changes: list[Any]) -> str:
    """Apply didChange contentChanges (UTF-16 positions) to a text of "\n"-broken lines,
    rewriting only the lines each change touches."""
    lines = text.split("\n")
    for change in changes:
        rng = change.get("range")
        if rng is None:
            lines = change["text"].split("\n")
            continue
        (sl, sc), (el, ec) = (
            (min(p["line"], len(lines) - 1), p["character"]) for p in (rng["start"], rng["end"])
        )
        head = lines[sl][: _utf16_index(lines[sl], sc)]
        tail = lines[el][_utf16_index(lines[el], ec) :]
        lines[sl : el + 1] = (head + change["text"] + tail).split("\n")
    return "\n".join(lines)


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _response(msg_id: Any, result: bytes) -> bytes:
    return _frame(b'{"jsonrpc":"2.0","id":' + orjson.dumps(msg_id) + b',"result":' + result + b"}")


def _error(msg_id: Any, code: int, message: str) -> bytes:
    return _frame(
        orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
    )


def _content_length(headers: bytes) -> int:
    for line in headers.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    raise ValueError(f"no Content-Length in {headers[:80]!r}")


def serve(items: int, incremental: bool = False) -> int:
    completion = orjson.dumps(completion_list(items))
    texts = Texts() if incremental else None
    capabilities = dict(CAPABILITIES)
    if incremental:
        capabilities["textDocumentSync"] = {"openClose": True, "change": 2}
    shut_down = False
    buf = bytearray()
    need = -1
    while True:
        data = os.read(0, 1 << 20)
        if not data:
            return 0 if shut_down else 1
        buf += data
        out: list[bytes] = []
        exit_code: int | None = None
        while True:
            if need < 0:
                end = buf.find(HEADER_END)
                if end < 0:
                    break
                need = _content_length(bytes(buf[:end]))
                del buf[: end + 4]
            if len(buf) < need:
                break
            msg = orjson.loads(memoryview(buf)[:need])
            del buf[:need]
            need = -1
            method = msg.get("method")
            if "id" not in msg or method is None:  # notification, or a response to us
                if method == "exit":
                    exit_code = 0 if shut_down else 1
                    break
                if texts is not None and method is not None:
                    texts.note(method, msg.get("params"))
                continue
            msg_id = msg["id"]
            if method == "textDocument/hover":
                out.append(_response(msg_id, HOVER_RESULT))
            elif method == "textDocument/completion":
                out.append(_response(msg_id, completion))
            elif method == "initialize":
                info = {"capabilities": capabilities, "serverInfo": {"name": "bench-server"}}
                out.append(_response(msg_id, orjson.dumps(info)))
            elif method == "bench/text" and texts is not None:
                uri = ((msg.get("params") or {}).get("textDocument") or {}).get("uri")
                out.append(_response(msg_id, orjson.dumps(texts.digest(uri))))
            elif method == "shutdown":
                shut_down = True
                out.append(_response(msg_id, b"null"))
            else:
                out.append(_error(msg_id, -32601, f"bench server: no method {method}"))
        if out:
            _write_all(b"".join(out))
        if exit_code is not None:
            return exit_code


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]


def main(argv: list[str]) -> int:
    items = DEFAULT_ITEMS
    if "--items" in argv:
        items = int(argv[argv.index("--items") + 1])
    try:
        return serve(items, incremental="--incremental" in argv)
    except BrokenPipeError:  # the client went away: nothing left to answer
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
