"""`lspmux server`: the daemon that shares one warm backend per (server, workspace root).

Responsible for the daemon's lifetime and for acting on each connection's first message: it
starts listening (listen.py: the instance lock, the socket), gives each connection a
`Handshake` (handshake.py) and acts on what its first message asks (opening.py): a Session for
a client over the shared `Pool` (clients.py), or a one-shot answer — `lspmux/status`,
`lspmux/reload` (reload.py), `lspmux/documents`, `lspmux/tool` and `lspmux/locate` (agent tools
hosted here, made by the factory the command line passes in), `lspmux/stop`. It reaps instances nobody uses
(reaper.py), exits when idle or replaced by a new install (lifetime.py), and stops cleanly
(every backend shut down) on SIGTERM/SIGINT/SIGHUP and on `lspmux/stop`, which is answered
once everything is down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

import orjson

from lspmux import __version__
from lspmux.backends.backend import Backend
from lspmux.backends.pool import Pool
from lspmux.daemon.address import Address
from lspmux.daemon.admission import (
    AllowList,
    OneServerConfig,
    match_server,
    one_server_config,
    resolve_executable,
)
from lspmux.daemon.clients import Clients, ConfigLoader
from lspmux.daemon.handshake import Handshake
from lspmux.daemon.lifetime import Idle, installed
from lspmux.daemon.listen import DaemonError, InstanceLock, UnixListener, listen
from lspmux.daemon.opening import Opening, read_opening, reload_ask, token_refusal
from lspmux.daemon.reaper import Reaper, reap_interval
from lspmux.daemon.reload import reload_instances
from lspmux.errors import JsonRpcError, RequestFailed
from lspmux.memory import own_memory
from lspmux.serving import CLIENT_WRITE_LIMIT, settle_heap
from lspmux.session import fitting
from lspmux.wire.framing import frame
from lspmux.wire.messages import Message, error

log = logging.getLogger("lspmux.daemon")


__all__ = [
    "AllowList",
    "Daemon",
    "DaemonError",
    "OneServerConfig",
    "match_server",
    "one_server_config",
    "resolve_executable",
]

#: The daemon's one-shot methods asked from inside (by hosted tools): (method, params) → result.
Query = Callable[[str, dict[str, Any]], Awaitable[Any]]


class HostedTools(Protocol):
    """Agent tools run inside the daemon (lspmux/agent/hosted.py provides them)."""

    async def run(self, params: dict[str, Any]) -> dict[str, Any]: ...

    async def locate(self, params: dict[str, Any]) -> Any: ...

    async def close(self) -> None: ...


#: Makes the hosted tools: (the daemon's Unix socket path or None, its `Query`) → tools.
ToolsFactory = Callable[[str | None, Query], HostedTools]


class Daemon:
    def __init__(
        self,
        address: Address,
        load_config: ConfigLoader,
        *,
        token: str | None = None,
        config_file_hint: str = "~/.config/lspmux/config.toml",
        client_write_limit: int = CLIENT_WRITE_LIMIT,
        tools: ToolsFactory | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        self.address = address
        self.load_config = load_config
        self.token = token
        self.config_file_hint = config_file_hint
        self.client_write_limit = client_write_limit
        self.config = load_config(None)  # the daemon's own: defaults, user file, --config
        self.allow = AllowList(self.config)
        self.pool = Pool(shared=True)
        self.clients = Clients(self.pool, load_config)
        self.started_at = time.monotonic()
        self.reaper = Reaper(self.pool, self.spawn)
        self.lock = InstanceLock(address)
        self._server: asyncio.AbstractServer | UnixListener | None = None
        self._stopped: asyncio.Future[int] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.handshakes: set[Handshake] = set()
        self.make_tools = tools
        self.tools: HostedTools | None = None  # made by the first lspmux/tool
        #: No client, no instance, nothing in flight since when (lifetime.py).
        self.idle = Idle(idle_timeout)
        #: What lspmux was installed at start; once it differs the daemon hands over.
        self.installed = installed()
        self.handed_over = False
        #: The `lspmux/stop` requests, answered once everything is down: (handshake, id).
        self._stop_asked: list[tuple[Handshake, Any]] = []

    # -- lifetime ---------------------------------------------------------------------------

    async def start(self) -> None:
        self._server = await listen(
            self.address,
            self.lock,
            lambda kind, first=None: Handshake(self, kind, first),
            token=self.token,
        )
        log.info("listening on %s (pid %d)", self.address, os.getpid())
        settle_heap()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        await self.start()  # a DaemonError here leaves the other daemon's socket alone
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.stop, 0)
        reaper = asyncio.ensure_future(self._reap_loop())
        try:
            return await self._stopped
        finally:
            reaper.cancel()
            await self.close()

    def stop(self, code: int = 0) -> None:
        if self._stopped is not None and not self._stopped.done():
            log.info("stopping")
            self._stopped.set_result(code)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for hs in list(self.handshakes):
            hs.abort()
        if self.tools is not None:
            await self.tools.close()
        for session in list(self.clients.info):
            if session.conn is not None:
                session.conn.close(None)
        await self.pool.stop_all()
        await fitting.stop()
        if self.address.is_unix and not self.handed_over:  # else it is the new daemon's
            with contextlib.suppress(OSError):
                os.unlink(self.address.path)
        self.lock.release()
        log.info("stopped")
        for hs, msg_id in self._stop_asked:  # everything is down: `lspmux stop` may return
            hs.reply_and_close(result(msg_id, {"stopped": True, "pid": os.getpid()}))

    def reap_interval(self) -> float:
        interval = reap_interval(self.config)
        if self.idle.timeout is not None:  # the idle exit kept to within 25% too
            interval = min(interval, max(self.idle.timeout / 4, 0.05))
        return interval

    async def _reap_loop(self) -> None:
        while True:
            await asyncio.sleep(self.reap_interval())
            now = time.monotonic()
            self.reap(now)
            self.check_lifetime(now)

    def busy(self) -> bool:
        """Whether anyone uses the daemon: a client, an instance, a connection in its
        handshake, a one-shot answer being made."""
        return bool(self.clients.info or self.pool.backends or self.handshakes or self._tasks)

    def check_lifetime(self, now: float) -> None:
        """Stop when handed over and the last client left, or idle for the idle timeout."""
        if self.handed_over and not self.clients.info:
            log.info("handed over to a new install, and the last client left: exiting")
            self.stop(0)
        elif self.idle.check(self.busy(), now):
            log.info("no client and no server for %.0fs (idle timeout): exiting", self.idle.timeout)
            self.stop(0)

    def hand_over_if_upgraded(self) -> None:
        """lspmux changed on disk since this daemon started (lifetime.py): stop listening —
        the address is free for a new daemon — and serve the clients already here to their
        end."""
        if self.handed_over:
            return
        now = installed()
        if now == self.installed:
            return
        log.info(
            "lspmux changed on disk (version %s, now %s): new clients get a new daemon; "
            "this one serves its clients and exits after the last",
            self.installed[0],
            now[0],
        )
        self.handed_over = True
        if self._server is not None:
            self._server.close()
        if self.address.is_unix:
            with contextlib.suppress(OSError):
                os.unlink(self.address.path)
        self.lock.release()

    def reap(self, now: float) -> list[Backend]:
        """Shut down the instances that had no client for `instance_timeout` (reaper.py)."""
        return self.reaper.reap(self.config.instance_timeout, now)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run `coro` as the daemon's own work: held until it ends, its failure logged."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("daemon task failed", exc_info=task.exception())

    # -- one-shot answers -------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        now = time.monotonic()
        return {
            "pid": os.getpid(),
            "version": __version__,
            "address": str(self.address),
            "uptime": now - self.started_at,
            "rss": own_memory(),  # the daemon alone; each server's tree is in its row
            "instance_timeout": self.config.instance_timeout,
            "idle_timeout": self.idle.timeout,
            "instances": self.pool.describe(),
            "clients": self.clients.rows(now),
        }

    def open_documents(self, uris: Any) -> dict[str, Any]:
        """`lspmux/documents` (clients.py)."""
        return self.clients.open_documents(uris)

    async def reload(
        self,
        root: str | None = None,
        *,
        cwd: str | None = None,
        everything: bool = False,
        restart: bool | None = None,
    ) -> dict[str, Any]:
        """Reload instances (reload.py `reload_instances`). The daemon's own configuration
        (allow-list, instance_timeout, gc_interval) is read again too, once the answer is on its
        way (it does not depend on it; ~5 ms of a `lspmux reload`'s ~35 otherwise)."""
        backends = list(self.pool.backends.values())
        try:
            return await reload_instances(
                backends, root, cwd=cwd, everything=everything, restart=restart
            )
        finally:  # before anything that comes after the answer: the ready queue is in order
            asyncio.get_running_loop().call_soon(self._read_config)

    def _read_config(self) -> None:
        with contextlib.suppress(Exception):
            self.config = self.load_config(None)
            self.allow = AllowList(self.config)

    async def query(self, method: str, params: dict[str, Any]) -> Any:
        """The daemon's one-shot methods, asked from inside (by the hosted agent tools)."""
        if method == "lspmux/status":
            return self.status()
        if method == "lspmux/reload":
            return await self.reload(params.get("root"))
        if method == "lspmux/documents":
            return self.open_documents(params.get("uris"))
        raise RequestFailed(f"lspmux: unknown method {method}")

    # -- the first message ------------------------------------------------------------------

    def first_message(self, hs: Handshake, body: bytes, rest: bytes) -> None:
        """Act on a connection's first message (opening.py says what it asks)."""
        opening = read_opening(body)
        if opening.error is not None:
            hs.reply_and_close(error(opening.msg_id, opening.error))
            return
        refused = token_refusal(hs.kind, hs.peer_uid(), self.token, opening.token)
        if refused:
            log.warning("refused a %s client: %s", hs.kind, refused)
            hs.reply_and_close(error(opening.msg_id, RequestFailed(refused)))
            return
        if opening.error_after_token is not None:
            hs.reply_and_close(error(opening.msg_id, opening.error_after_token))
            return
        if opening.kind == "status":
            hs.reply_and_close(result(opening.msg_id, self.status()))
        elif opening.kind == "documents":
            answer = self.open_documents(opening.params.get("uris"))
            hs.reply_and_close(result(opening.msg_id, answer))
        elif opening.kind in ("tool", "locate"):
            self.spawn(self._tool_reply(hs, opening))
        elif opening.kind == "reload":
            self.spawn(self._reload_reply(hs, opening))
        elif opening.kind == "stop":
            log.info("asked to stop (lspmux stop)")
            self._stop_asked.append((hs, opening.msg_id))
            self.stop(0)
        else:
            self.hand_over_if_upgraded()
            self._connect(hs, opening, rest)

    def _connect(self, hs: Handshake, opening: Opening, rest: bytes) -> None:
        try:
            session = self.clients.connect(
                opening.options,
                hs.peer,
                opening.params,
                config=self.config,
                allow=self.allow,
                config_file_hint=self.config_file_hint,
            )
        except JsonRpcError as exc:
            log.warning("refused a client: %s", exc.message)
            hs.reply_and_close(error(opening.msg_id, exc))
            return
        hs.hand_over(session, frame(orjson.dumps(opening.message)) + rest)

    async def _tool_reply(self, hs: Handshake, opening: Opening) -> None:
        """`lspmux/tool`: an agent tool run here for `lspmux <verb>`; `lspmux/locate`: a Locate
        string resolved in the same hosted session, for `lspmux locate` (lspmux/agent/hosted.py)."""
        if self.make_tools is None:
            why = "lspmux: this daemon hosts no agent tools; run the verb with --private"
            hs.reply_and_close(error(opening.msg_id, RequestFailed(why)))
            return
        if self.tools is None:
            socket_path = self.address.path if self.address.is_unix else None
            self.tools = self.make_tools(socket_path, self.query)
        hosted = self.tools.locate if opening.kind == "locate" else self.tools.run
        try:
            answer = await hosted(opening.params)
        except JsonRpcError as exc:
            hs.reply_and_close(error(opening.msg_id, exc))
            return
        except Exception as exc:
            log.exception("lspmux/tool failed")
            why = f"lspmux: tool failed: {exc}"
            hs.reply_and_close(error(opening.msg_id, RequestFailed(why)))
            return
        hs.reply_and_close(result(opening.msg_id, answer))

    async def _reload_reply(self, hs: Handshake, opening: Opening) -> None:
        """`lspmux/reload`, or the Rust handshake's `reload` (its `cwd`)."""
        try:
            ask = reload_ask(opening.params)
            answer = await self.reload(
                ask.root, cwd=ask.cwd, everything=ask.everything, restart=ask.restart
            )
        except JsonRpcError as exc:
            hs.reply_and_close(error(opening.msg_id, exc))
            return
        except Exception as exc:
            log.exception("reload failed")
            why = f"lspmux: reload failed: {exc}"
            hs.reply_and_close(error(opening.msg_id, RequestFailed(why)))
            return
        hs.reply_and_close(result(opening.msg_id, answer))


def result(msg_id: Any, answer: Any) -> Message:
    return {"jsonrpc": "2.0", "id": msg_id, "result": answer}
