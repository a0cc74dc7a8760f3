"""The running proxies, for `lspmux status`: each `lspmux proxy` says it runs, and can be asked.

A proxy's client is on stdio, so nobody else could ask it anything. Each proxy therefore
listens, for status only, on a Unix socket of its own in the private runtime folder
(`<runtime>/proxies/<pid>.sock`, beside the daemon's socket; the folder is 0700, the socket
0600) and writes a record beside it (`<pid>.json`: pid, socket, cwd, start time, version).
A connection to the socket sends one `lspmux/status` request and gets the answer an editor
gets for that request (`session/families/status.py`), live — no snapshot to go stale, no
work while nobody asks. The proxy removes both files when it exits; a record left by a proxy
that was killed (its pid does not run, or nobody listens on its socket) is removed by the
next `lspmux status` (`running_proxies`). Registering never fails a proxy: where the folder
cannot be made or the socket path is too long, the proxy runs unlisted (a debug log line).

The proxy side (`register`) runs on the proxy's event loop; the side of `lspmux status`
(`running_proxies`) is blocking, standard library and the wire helpers only.
"""

from __future__ import annotations

import contextlib
import os

from lspmux import __version__
from lspmux.daemon.address import MAX_SOCKET_PATH, AddressError, private_dir
from lspmux.dirs import runtime_dir_name
from lspmux.serving import STATUS

# Neither `typing`, `pathlib` nor `logging` at import: `lspmux status` imports this module
# (tests/unit/daemon/test_verb_start.py), and the proxy at start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    import logging
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from lspmux.session.state import SessionState

#: How long `lspmux status` waits for a proxy's answer.
ASK_TIMEOUT = 1.0
#: How long a proxy waits for the one request of a status connection.
READ_TIMEOUT = 5.0


def proxies_dir() -> str:
    """`<runtime dir>/proxies`: the records and status sockets of running proxies."""
    return os.path.join(runtime_dir_name(), "proxies")


def _log() -> logging.Logger:
    import logging

    return logging.getLogger("lspmux.proxy")


class Registration:
    """A running proxy's record and status socket (none when it could not be listed);
    `close` removes both."""

    def __init__(
        self,
        record: Path | None = None,
        socket: Path | None = None,
        server: asyncio.AbstractServer | None = None,
    ) -> None:
        self.record = record
        self.socket = socket
        self.server = server

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for path in (self.record, self.socket):
            if path is not None:
                with contextlib.suppress(OSError):
                    path.unlink()


async def register(session: SessionState) -> Registration:
    """List this proxy (its record) and answer `lspmux/status` on its socket for `session`
    (its one client's); unlisted when that cannot be (said at debug level: the proxy serves
    its client anyway)."""
    from lspmux.session.families.status import answer

    return await listen(lambda: answer(session))


async def listen(answer: Callable[[], Any]) -> Registration:
    """`register`, with `answer()` the status to give."""
    import asyncio
    import json
    import time
    from pathlib import Path

    pid = os.getpid()
    try:
        private_dir(runtime_dir_name())  # the daemon's folder, checked as the daemon checks it
        folder = Path(private_dir(proxies_dir()))
        socket_path = folder / f"{pid}.sock"
        if len(str(socket_path)) > MAX_SOCKET_PATH:
            raise AddressError(f"{socket_path} is too long for a Unix socket")
        with contextlib.suppress(FileNotFoundError):
            socket_path.unlink()  # a pid's earlier proxy, killed: its socket is stale
        server = await asyncio.start_unix_server(
            lambda r, w: _serve(r, w, answer), path=str(socket_path)
        )
        os.chmod(socket_path, 0o600)
        record = folder / f"{pid}.json"
        text = json.dumps(
            {
                "pid": pid,
                "socket": str(socket_path),
                "cwd": os.getcwd(),
                "started": time.time(),
                "version": __version__,
            }
        )
        tmp = folder / f"{pid}.json.tmp"
        tmp.write_text(text)
        tmp.replace(record)  # `lspmux status` never reads half a record
    except (OSError, AddressError) as exc:
        _log().debug("not listed for `lspmux status`: %s", exc)
        return Registration()
    return Registration(record, socket_path, server)


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer: Any) -> None:
    """One status connection: read one request, answer it, close."""
    import asyncio

    import orjson

    from lspmux.wire.header import HEADER_END, MAX_HEADER, FrameError, frame, header_length

    msg_id: Any = None
    try:
        async with asyncio.timeout(READ_TIMEOUT):
            head = await reader.readuntil(HEADER_END)
            length = header_length(head[: -len(HEADER_END)], MAX_HEADER)
            if isinstance(length, FrameError):
                raise ValueError(length.detail)
            msg = orjson.loads(await reader.readexactly(length))
        msg_id = msg.get("id") if isinstance(msg, dict) else None
        method = msg.get("method") if isinstance(msg, dict) else None
        if method == STATUS:
            reply = {"jsonrpc": "2.0", "id": msg_id, "result": answer()}
        else:
            why = f"lspmux: a proxy's status socket answers {STATUS} only, not {method}"
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": why}}
        writer.write(frame(orjson.dumps(reply)))
        await writer.drain()
    except (OSError, ValueError, TimeoutError, asyncio.IncompleteReadError) as exc:
        _log().debug("status connection: %s", exc)
    except Exception:  # a status request must never take the proxy down
        _log().exception("answering %s failed", STATUS)
    finally:
        writer.close()


def running_proxies(timeout: float = ASK_TIMEOUT) -> list[dict[str, Any]]:
    """Every running proxy's record, each with `status` (its answer to `lspmux/status`) or
    `error` (why it did not answer); records of proxies that are gone are removed. `timeout`
    bounds the whole listing: wedged proxies do not add a second each."""
    import json
    import time

    from lspmux.wire.blocking import BlockingPeer, WireError, open_socket

    folder = proxies_dir()
    if not os.path.isdir(folder):
        return []
    try:  # only the user's own private folder is read (and cleaned)
        private_dir(runtime_dir_name())
        private_dir(folder)
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except (OSError, AddressError) as exc:
        _log().warning("not listing the proxies: %s", exc)
        return []
    found = []
    deadline = time.monotonic() + timeout
    for name in names:
        # The socket is named by the record's file, never by what the record says: only
        # files of this folder are ever connected to or removed.
        stem = name.removesuffix(".json")
        path = os.path.join(folder, name)
        sock_path = os.path.join(folder, stem + ".sock")
        try:
            with open(path, encoding="utf-8") as f:
                record = json.load(f)
            pid = int(record["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written or removed right now, or not ours
        if str(pid) != stem:
            continue
        if not _alive(pid):
            _forget(path, sock_path)
            continue
        try:
            sock = open_socket(sock_path, left := max(deadline - time.monotonic(), 0.05))
        except (FileNotFoundError, ConnectionRefusedError):
            _forget(path, sock_path)  # nobody listens: the proxy that wrote it is gone
            continue
        except OSError as exc:
            found.append({**record, "error": str(exc)})
            continue
        try:
            sock.settimeout(left)
            peer = BlockingPeer.over_socket(sock, f"the proxy with pid {pid}")
            found.append({**record, "status": peer.request(STATUS, {})})
        except (OSError, WireError) as exc:
            found.append({**record, "error": str(exc) or type(exc).__name__})
        finally:
            sock.close()
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _forget(record: str, socket_path: str) -> None:
    _log().debug("removing the record of proxy %s: it is gone", os.path.basename(record))
    for path in (record, socket_path):
        with contextlib.suppress(OSError):
            os.unlink(path)
