"""`lspmux locate STRING [--range] [--json]`: Locate for a human or a script.

Speaks LSP to lspmux itself — the running daemon when one answers, else a private
`lspmux proxy` — and asks `locate/resolve` (or `locate/resolveRange`), so symbol scopes are
answered by the file's real server exactly as an agent would get them. Prints `path:line:col`
(1-based; `path:line:col-line:col` for a range) or the JSON result.

Against a running daemon the command starts fast (issue 21): its words are read without
argparse (`lspmux.cli.fast_locate`), and it sends one `lspmux/locate` request on the daemon's
socket with blocking calls (standard library only: no event loop, no child process, no LSP
session of its own); the daemon resolves it in its warm hosted session for the root, as it runs
`lspmux hover`. The private proxy is reached through the event loop `cli_common.run_loop`
picks ($LSPMUX_EVENT_LOOP).
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

#: How long lspmux may take: to initialize the session, to resolve (the server's start).
INITIALIZE_TIMEOUT = 60.0
RESOLVE_TIMEOUT = 120.0  # also the daemon's hosted session's (agent/hosted.py)
#: How long a connect to the daemon may take before the private proxy answers instead.
CONNECT_TIMEOUT = 0.5


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
    """The result from the daemon on its local socket: one `lspmux/locate` request, resolved
    in the daemon's warm session for `root` (lspmux/agent/hosted.py; standard library only);
    None when no daemon answers there, or one that cannot (older, or hosting no tools)."""
    from lspmux.daemon.address import AddressError, resolve_client
    from lspmux.daemon.dial import ShimError, request

    try:
        address = resolve_client(None)
        if not address.is_unix:
            return None
        params = {"root": root, "locate": spec, "range": want_range}
        result = request(
            address, "lspmux/locate", params, token=None, timeout=RESOLVE_TIMEOUT,
            connect_timeout=CONNECT_TIMEOUT,
        )  # fmt: skip
    except (OSError, AddressError):
        return None
    except ShimError as exc:
        if any(old in str(exc) for old in _CANNOT):
            return None
        raise LocateError(str(exc).removeprefix("lspmux: ")) from None
    return dict(result or {})


#: What a daemon that cannot answer `lspmux/locate` says: an older one (it knows only
#: `initialize` first), or one started without the hosted tools.
_CANNOT = ("expected initialize first", "hosts no agent tools")
