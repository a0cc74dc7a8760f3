"""Start a language server, ask `initialize`, then `shutdown` and `exit`: does it really run?

`lspmux doctor` probes each server a project needs this way: a server that is on PATH may
still not run (a rustup proxy without the component, a broken Node install). The probe never
asks for nothing after `initialized` and shuts the server down at once; its
`workspace/configuration` requests get the configured settings (restricted mode included), its
other requests a null result.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson

from lspmux.wire.framing import FrameError, FrameParser, encode

#: Seconds a server may take to answer `initialize` (rust-analyzer and the JS servers take a
#: few; a cold basedpyright about one).
PROBE_TIMEOUT = 20.0
#: How many lines of stderr a failure shows.
STDERR_TAIL = 8
_EXIT_GRACE = 3.0


@attrs.frozen
class ProbeResult:
    version: str | None = None  # serverInfo "name version", when it answered
    problem: str | None = None  # why it did not run, with its stderr's last lines


async def probe(
    argv: Sequence[str],
    root: Path,
    *,
    env: Mapping[str, str] | None = None,
    initialization_options: Any = None,
    settings: Mapping[str, Any] | None = None,
    timeout: float = PROBE_TIMEOUT,
) -> ProbeResult:
    """Run `argv` in `root`, initialize it and shut it down."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=root,
            env={**os.environ, **(env or {})},
        )
    except OSError as exc:
        return ProbeResult(problem=f"cannot run {argv[0]}: {exc}")
    assert proc.stdin and proc.stdout and proc.stderr
    stderr = bytearray()
    drain = asyncio.create_task(_collect(proc.stderr, stderr))
    answer: Any = None
    problem: str | None = None
    try:
        answer = await asyncio.wait_for(
            _handshake(proc, root, initialization_options, settings or {}), timeout=timeout
        )
    except TimeoutError:
        problem = f"did not answer initialize within {timeout:g}s"
    except _Gone:
        problem = f"exited with code {await proc.wait()} before answering initialize"
    finally:
        await _stop(proc)
        with contextlib.suppress(TimeoutError):  # the rest of stderr (not for long: a
            await asyncio.wait_for(drain, 1.0)  # grandchild may hold it open)
    if problem is not None:
        return ProbeResult(problem=problem + _tail(stderr))
    if "error" in answer:
        message = answer["error"].get("message", answer["error"])
        return ProbeResult(problem=f"initialize failed: {message}" + _tail(stderr))
    info = (answer.get("result") or {}).get("serverInfo") or {}
    version = " ".join(str(info[k]) for k in ("name", "version") if info.get(k))
    return ProbeResult(version=version or "runs; it reports no version")


class _Gone(Exception):
    """The server closed its stdout."""


async def _collect(stream: asyncio.StreamReader, into: bytearray) -> None:
    while chunk := await stream.read(65536):
        into += chunk
        del into[: max(0, len(into) - 64 * 1024)]


def _tail(stderr: bytes | bytearray) -> str:
    lines = [ln for ln in stderr.decode(errors="replace").splitlines() if ln.strip()]
    if not lines:
        return " (nothing on stderr)"
    if len(lines) > STDERR_TAIL:  # the head says what (rustup), the tail where (a traceback)
        cut = len(lines) - (STDERR_TAIL - 3)
        lines = [*lines[:3], f"… ({cut - 3} lines)", *lines[cut:]]
    return "; stderr:\n      " + "\n      ".join(ln[:200] for ln in lines)


async def _handshake(
    proc: asyncio.subprocess.Process, root: Path, options: Any, settings: Mapping[str, Any]
) -> Any:
    assert proc.stdin and proc.stdout
    uri = root.resolve().as_uri()
    params = {
        "processId": os.getpid(),
        "clientInfo": {"name": "lspmux doctor"},
        "rootUri": uri,
        "rootPath": str(root),
        "workspaceFolders": [{"uri": uri, "name": root.name}],
        "capabilities": {},
        "initializationOptions": options,
    }
    parser = FrameParser()
    proc.stdin.write(encode({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    answer = await _response(proc, parser, 1, settings)
    if "error" in answer:
        return answer
    proc.stdin.write(encode({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.write(encode({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    await _response(proc, parser, 2, settings)
    proc.stdin.write(encode({"jsonrpc": "2.0", "method": "exit"}))
    return answer


async def _response(
    proc: asyncio.subprocess.Process, parser: FrameParser, id_: int, settings: Mapping[str, Any]
) -> Any:
    """The response with `id_`; the server's own requests get a null result meanwhile."""
    assert proc.stdin and proc.stdout
    while True:
        data = await proc.stdout.read(65536)
        if not data:
            raise _Gone
        for body in parser.feed(data):
            if isinstance(body, FrameError):
                continue
            message = orjson.loads(body)
            if message.get("id") == id_ and "method" not in message:
                return message
            if "method" in message and "id" in message:
                result = None
                if message["method"] == "workspace/configuration":
                    items = (message.get("params") or {}).get("items") or []
                    result = [_section(settings, i.get("section")) for i in items]
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                proc.stdin.write(encode(reply))


def _section(settings: Mapping[str, Any], section: str | None) -> Any:
    """The value at the dotted `section` of `settings` (all of them for none)."""
    value: Any = settings
    for part in (section or "").split(".") if section else ():
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), _EXIT_GRACE)
    except TimeoutError:
        proc.kill()
        await proc.wait()
