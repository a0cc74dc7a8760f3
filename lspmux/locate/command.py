"""`lspmux locate STRING [--range] [--json]`: Locate for a human or a script.

Speaks LSP to lspmux itself — the running daemon when one answers, else a private
`lspmux proxy` — and asks `locate/resolve` (or `locate/resolveRange`), so symbol scopes are
answered by the file's real server exactly as an agent would get them. Prints `path:line:col`
(1-based; `path:line:col-line:col` for a range) or the JSON result.

Against a running daemon the command starts fast (issue 21): its words are read without
argparse (`lspmux.cli.fast_locate`), and the LSP exchange is a blocking one on the
daemon's socket (standard library only: no event loop, no child process). The private proxy is
reached through the event loop `cli_common.run_loop` picks ($LSPMUX_EVENT_LOOP).
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux locate` starts fast
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any

    from lspmux.wire.blocking import BlockingPeer

#: How long the daemon may take: to initialize the session, to resolve (the server's start).
INITIALIZE_TIMEOUT = 60.0
RESOLVE_TIMEOUT = 120.0


def run(args: argparse.Namespace) -> int:
    """`lspmux locate` with its parsed arguments (argparse's or `lspmux.cli.read_locate`'s)."""
    root = os.path.realpath(args.dir or os.getcwd())
    return main(
        args.spec, want_range=args.range, as_json=args.json, root=root, configs=list(args.config)
    )


async def locate(
    spec: str, *, root: Path, want_range: bool, configs: list[Path], use_daemon: bool
) -> dict[str, object]:
    import asyncio

    from lspmux.headless import HeadlessClient, command, initialize_params

    proc = await asyncio.create_subprocess_exec(
        *command(configs, use_daemon=use_daemon),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=str(root),
    )
    client = HeadlessClient(proc)
    try:
        params = initialize_params(root, "lspmux locate")
        await client.request("initialize", params, timeout=INITIALIZE_TIMEOUT)
        client.notify("initialized", {})
        method = "locate/resolveRange" if want_range else "locate/resolve"
        result = await client.request(method, {"locate": spec}, timeout=RESOLVE_TIMEOUT)
        return dict(result or {})
    finally:
        await client.close()


def main(spec: str, *, want_range: bool, as_json: bool, root: str, configs: list[Any]) -> int:
    try:
        result = None if configs else through_daemon(spec, root=root, want_range=want_range)
        if result is None:
            result = _private(spec, root=root, want_range=want_range, configs=configs)
            if isinstance(result, int):
                return result
    except LocateError as exc:
        print(f"lspmux locate: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print(result.get("label"))
    return 0


class LocateError(Exception):
    """Locate could not answer: what lspmux said, or why it did not."""


def _private(spec: str, *, root: str, want_range: bool, configs: list[Any]) -> Any:
    """The result through a private proxy (or the daemon's shim, when `--config` is not
    given and a daemon answers): run on the event loop of `run_loop`; its exit code when the
    loop could not be chosen."""
    from pathlib import Path

    from lspmux.cli_common import run_loop
    from lspmux.headless import ReportError, daemon_running

    use_daemon = not configs and daemon_running()
    found: dict[str, object] = {}

    async def resolve() -> int:
        try:
            found.update(
                await locate(spec, root=Path(root), want_range=want_range,
                             configs=[Path(c) for c in configs], use_daemon=use_daemon)
            )  # fmt: skip
        except ReportError as exc:
            raise LocateError(str(exc)) from None
        return 0

    code = run_loop(resolve())
    return found if code == 0 else code


def through_daemon(spec: str, *, root: str, want_range: bool) -> dict[str, object] | None:
    """The result from the daemon on its local socket, over a blocking LSP session (standard
    library only); None when no daemon answers there."""
    from lspmux.daemon.address import AddressError, resolve_client
    from lspmux.wire.blocking import BlockingPeer, WireError, open_socket

    try:
        address = resolve_client(None)
        if not address.is_unix:
            return None
        sock = open_socket(address.path, timeout=0.5)
    except (OSError, AddressError):
        return None
    try:
        sock.settimeout(INITIALIZE_TIMEOUT)
        peer = BlockingPeer.over_socket(sock, f"the daemon at {address}")
        uri = _file_uri(root)
        params = {
            "processId": os.getpid(),
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": os.path.basename(root)}],
            "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
            "clientInfo": {"name": "lspmux locate"},
        }
        _ask(peer, 1, "initialize", params)
        _send(peer, {"method": "initialized", "params": {}})
        sock.settimeout(RESOLVE_TIMEOUT)
        method = "locate/resolveRange" if want_range else "locate/resolve"
        result = _ask(peer, 2, method, {"locate": spec})
        _ask(peer, 3, "shutdown", None)
        _send(peer, {"method": "exit"})
        return dict(result or {})
    except TimeoutError:
        raise LocateError(f"no answer from the lspmux daemon at {address} in time") from None
    except (OSError, WireError) as exc:
        raise LocateError(str(exc).removeprefix("lspmux: ")) from None
    finally:
        sock.close()


def _file_uri(path: str) -> str:
    """`Path(path).as_uri()` for an absolute POSIX path, without pathlib."""
    from urllib.parse import quote_from_bytes

    return "file://" + quote_from_bytes(os.fsencode(path))


def _send(peer: BlockingPeer, msg: dict[str, Any]) -> None:
    peer.write_body(json.dumps({"jsonrpc": "2.0", **msg}).encode())


def _ask(peer: BlockingPeer, msg_id: int, method: str, params: Any) -> Any:
    """Send a request and read until its answer, answering the daemon's own requests as a
    plain client does (settings unknown, no folders, anything else null)."""
    from lspmux.wire.blocking import RemoteError, WireError

    _send(peer, {"id": msg_id, "method": method, "params": params})
    while True:
        body = peer.read_body()
        if body is None:
            raise WireError(f"{peer.name} closed the connection without answering {method}")
        msg = json.loads(body)
        if "method" in msg:
            if "id" in msg:
                asked = msg.get("params") or {}
                result: Any = None
                if msg["method"] == "workspace/configuration":
                    result = [None for _ in asked.get("items") or ()]
                elif msg["method"] == "workspace/workspaceFolders":
                    result = []
                _send(peer, {"id": msg["id"], "result": result})
            continue
        if msg.get("id") != msg_id:
            continue
        if "error" in msg:
            err = msg["error"] or {}
            raise RemoteError(str(err.get("message", err)), err.get("code"))
        return msg.get("result")
