"""A server process's life, as one `Backend` lives it: start (spawn, `initialize`, then
`initialized`, the configured settings and the documents replayed), the end of a process
(`_on_exit`: a crash, which `Backend._crashed` answers with a restart or by giving up), a clean
stop (shutdown, exit, close stdin, then kill the process group), a restart, and the idle timer
that stops a server nobody used for `idle_timeout`.

`ServerLife` is `Backend`'s base: the state it works on is the backend's (declared below);
what it tells the pool goes through `Backend._event`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from lspmux.backends import capabilities as caps
from lspmux.backends.barrier import SETTLE_TIMEOUT, barrier, quiet_after
from lspmux.backends.client_caps import answered_encoding
from lspmux.backends.documents import BackendDocuments
from lspmux.backends.failure import start_failure_message
from lspmux.backends.initialize import initialize_params
from lspmux.backends.loading import LOAD_TIMEOUT, ends, load_token
from lspmux.backends.process import ServerProcess, Spawn
from lspmux.config.model import ServerConfig
from lspmux.text import Encoding
from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message

log = logging.getLogger("lspmux.backend")

INITIALIZE_TIMEOUT = 60.0
STOP_GRACE = 2.0


#: How a server is told its settings: at start, and when the first client changes its own.
_SETTINGS = "workspace/didChangeConfiguration"
#: How a server asks for them. One that asks for every section of its configured settings right
#: after `initialized`, unprompted (`_first_pulls` at its first start here, remembered by
#: `capabilities.note_pulled`), is not told them at start: it has them by asking, and a push
#: would make it read them again — basedpyright then sets its workspace up twice, and answers
#: its first hover ~300 ms later. What a server asks after a push (rust-analyzer asks only
#: then) does not count.
_PULL = "workspace/configuration"


class ServerLife:
    config: ServerConfig
    name: str
    root: Path
    argv: list[str]
    spawn: Spawn
    client_capabilities: Mapping[str, Any]
    initialization_options: Any
    state: str
    _supports: dict[str, bool]
    position_encoding: Encoding
    capabilities: dict[str, Any]
    server_info: dict[str, Any]
    initialize_result: dict[str, Any] | None
    last_failure: str | None
    registrations: dict[str, tuple[str, Any]]
    documents: BackendDocuments
    started_at: float | None
    published: bool
    progress_open: dict[Any, dict[str, Any]]
    last_heard: float
    host: Any  # the backend's `BackendHost` (backend.py): its pool
    last_used: float
    failure: str | None
    _crashes: list[float]
    _proc: ServerProcess | None
    _last_proc: ServerProcess | None
    _conn: Connection | None
    _ready: asyncio.Future[bool] | None
    #: Settled once `initialize` is answered (`_ready` may wait longer: `loading.py`).
    _initialized: asyncio.Future[bool] | None = None
    _idle_timer: asyncio.TimerHandle | None
    _restart_task: asyncio.Task[None] | None
    _stopping: bool
    _stop_done: asyncio.Future[None] | None = None  # while `stop()` runs: a start waits
    _final: bool = False  # stopped for good (lspmux is exiting): nothing starts it again
    #: While `_first_pulls` watches: the sections asked for, and an event at each question.
    _pulls: set[str] | None = None
    _asked: asyncio.Event
    #: The connection on which a barrier was answered after `initialized` (`settled`).
    _settled: Connection | None = None

    @property
    def label(self) -> str:
        raise NotImplementedError

    def _on_request(self, msg: Message) -> None:
        raise NotImplementedError

    def _on_notification(self, msg: Message) -> None:
        raise NotImplementedError

    def _crashed(self, why: str) -> None:
        raise NotImplementedError

    def _event(self, event: str, detail: str) -> None:
        raise NotImplementedError

    def notify(self, method: str, params: Any) -> None:
        raise NotImplementedError

    def client_settings_changed(self, params: Any) -> None:
        """The first client's `workspace/didChangeConfiguration`, passed on with the
        configured `settings` merged over the client's (as at start: see `_initialize`)."""
        if self.config.settings and isinstance(params, dict):
            settings = caps.merge_init_options(params.get("settings"), self.config.settings)
            params = {**params, "settings": settings}
        self.notify(_SETTINGS, params)

    async def ensure_running(self, *, loaded: bool = True) -> bool:
        """Start the server if needed and wait until it is initialized and, for a server of
        `loading.LOADS_FIRST`, has loaded its project (with `loaded=False`: until it answered
        `initialize`, enough to know what it serves); False if it cannot run."""
        self.last_used = time.monotonic()
        if self.state == "running":
            return True
        # Asked while it stops (idle, a reload): a new one starts once the old is wound up.
        while (stopping := self._stop_done) is not None:
            await asyncio.shield(stopping)
        if self.state == "failed" or self._final:
            return False
        if self._ready is None or (self._ready.done() and not self._ready.result()):
            if self._restart_task is not None and not self._restart_task.done():
                self._restart_task.cancel()
            loop = asyncio.get_running_loop()
            self._ready, self._initialized = loop.create_future(), loop.create_future()
            task = asyncio.ensure_future(self._start(self._ready, self._initialized))
            task.add_done_callback(_log_task_error)
        initialized = self._initialized
        return await asyncio.shield(self._ready if loaded or initialized is None else initialized)

    async def settled(self, timeout: float = SETTLE_TIMEOUT) -> None:
        """Returns once the running server answered a request sent after everything sent to it
        so far (`initialized` among them), or after `timeout`: a server that handles messages
        in order has then sent what it sends at once on `initialized` — ruff's registrations
        of formatting, say. Its error answer (the method is unknown) serves as well. What a
        server registers later, after work of its own (basedpyright, once it has read its
        settings and run the interpreter), is registered with the client when it comes."""
        conn = self._conn
        if self.state not in ("running", "starting") or conn is None or conn.closed:
            return
        if self._settled is not conn:  # (its start waited for one already: `_first_pulls`)
            await barrier(conn, timeout)
            self._settled = conn

    async def _start(self, ready: asyncio.Future[bool], initialized: asyncio.Future[bool]) -> None:
        self.state = "starting"
        self._stopping = False
        loaded: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        until: list[str] = []  # the progress whose end ends the load, once the answer names it

        def on_notification(msg: Message) -> None:
            if until and not loaded.done() and ends(msg, until[0]):
                loaded.set_result(None)
            self._on_notification(msg)

        conn = Connection(
            self.label,
            on_request=self._on_server_request,
            on_notification=on_notification,
            reply_errors=False,
        )
        answer_lane = getattr(self.host, "answer_lane", None)  # the pool's, set by a session
        if answer_lane is not None:
            conn.lane = answer_lane(conn)
        params = initialize_params(self.root, self.client_capabilities, self.initialization_options)
        try:
            proc = await self.spawn(
                self.label,
                self.argv,
                cwd=self.root,
                env=dict(self.config.env),
                conn=conn,
                on_exit=functools.partial(self._on_exit, conn),
                initialize=params,
            )
        except OSError as exc:
            log.error("%s: cannot start %s: %s", self.label, self.argv[0], exc)
            self.last_failure = f"cannot start {self.argv[0]}: {exc}"
            self.state = "failed"
            self.failure = f"cannot start {self.argv[0]}: {exc}"
            self._event("failed", f"cannot start {self.argv[0]}: {exc}")
            _settle(ready, False, initialized)
            return
        self._conn, self._proc = conn, proc
        self._last_proc = proc
        try:
            result = await conn.call(
                "initialize", params, timeout=max(self.config.request_timeout, INITIALIZE_TIMEOUT)
            )
        except Exception as exc:  # the server died or answered with an error
            if self._stopping:  # stopped while starting (a short session): nothing failed
                log.debug("%s: stopped before it answered initialize (%s)", self.label, exc)
                _settle(ready, False, initialized)
                return
            log.error("%s: initialize failed: %s", self.label, exc)
            self.last_failure = self.last_failure or f"initialize failed: {exc}"
            _settle(ready, False, initialized)
            if not conn.closed:
                await self._terminate(proc, conn)
                self._crashed(f"initialize failed: {exc}")
            return
        self.capabilities = (result or {}).get("capabilities") or {}
        self._supports.clear()
        self.position_encoding = cast(Encoding, answered_encoding(result))
        self.server_info = (result or {}).get("serverInfo") or {}
        if self.initialize_result is None and isinstance(result, dict):
            self.initialize_result = result
        self.last_failure = None
        caps.store_cached(self.name, self.capabilities, self.registrations.values())
        until.extend(load_token(result, self.client_capabilities))
        conn.notify("initialized", {})
        if self.config.settings:
            pulled = caps.load_pulled(self.name)
            if pulled is None:  # its first start here: what does it ask for at once?
                pulled = await self._first_pulls(conn)
                if conn is not self._conn or conn.closed or self._stopping:
                    _settle(ready, False, initialized)  # stopped, or exited (`_on_exit` said it)
                    return
                caps.note_pulled(self.name, pulled)
            if not caps.asks_for(pulled, self.config.settings):
                conn.notify(_SETTINGS, {"settings": self.config.settings})
        _settle(initialized, True)
        if until:  # documents wait (replayed below): see loading.LOADS_FIRST
            try:
                await asyncio.wait_for(asyncio.shield(loaded), LOAD_TIMEOUT)
            except TimeoutError:
                log.warning(
                    "%s: no end of its %s progress after %.0fs; documents sent anyway",
                    self.label,
                    until[0],
                    LOAD_TIMEOUT,
                )
            if conn.closed or conn is not self._conn:  # it died or was stopped meanwhile
                _settle(ready, False)
                return
        replayed = self.documents.replay(conn.notify)
        self.state = "running"
        self.started_at = self.last_heard = time.monotonic()
        self.published = False
        self.progress_open = {}
        log.info(
            "%s: ready (%s %s), %d documents replayed",
            self.label,
            self.server_info.get("name", self.name),
            self.server_info.get("version", ""),
            replayed,
        )
        self._arm_idle_timer()
        self._event("started", "")
        _settle(ready, True)

    def _on_server_request(self, msg: Message) -> None:
        if msg.get("method") == _PULL and self._pulls is not None:  # unprompted (see `_PULL`)
            self._pulls.update(caps.pulled_sections(msg.get("params")))
            self._asked.set()
        self._on_request(msg)

    async def _first_pulls(self, conn: Connection) -> frozenset[str]:
        """The sections a server starting here for the first time asks for right after
        `initialized`: those asked for before it answers a request sent after it (`barrier`,
        as in `settled`), and, when it asked for some but not yet all of its settings, those
        it asks for next, each within `barrier.PULL_QUIET` of the one before."""
        self._pulls, self._asked = set(), asyncio.Event()
        try:
            await barrier(conn, SETTLE_TIMEOUT)
            self._settled, pulls, settings = conn, self._pulls, self.config.settings
            await quiet_after(self._asked, lambda: not pulls or caps.asks_for(pulls, settings))
            return frozenset(pulls)
        finally:
            self._pulls = None

    def _on_exit(self, conn: Connection, code: int | None) -> None:
        conn.close(None)
        if self._proc is not None:
            self._proc.kill_group_leftovers()
        if conn is not self._conn:
            return
        if self._stopping or self.state in ("stopping", "stopped"):
            return
        log.warning("%s: exited unexpectedly (code %s)", self.label, code)
        self._crashed(f"exited with code {code}")

    @property
    def stderr_tail(self) -> Sequence[str]:
        """The last lines of the latest process's stderr (kept after it exited)."""
        return tuple(getattr(self._last_proc, "stderr_tail", ()))

    async def start_failure(self, timeout: float = 1.0) -> str:
        """Why the server is not running, for a client: what failed, the last lines of its
        stderr (waited for up to `timeout`, as a dying server writes them last), and what to
        do about it."""
        why = self.last_failure or f"it is {self.state}"
        proc = self._last_proc
        last_stderr = getattr(proc, "last_stderr", None)  # an in-memory server has none
        lines = await last_stderr(timeout) if last_stderr is not None else []
        if proc is not None and "exited" not in why and await proc.wait(timeout):
            why = f"{why} (it exited with code {proc.returncode})"
        return start_failure_message(self.name, self.argv, why, lines)

    async def _restart_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.ensure_running()

    async def stop(self, reason: str = "shutdown", *, final: bool = False) -> None:
        """Shut the server down properly: shutdown, exit, close stdin, then kill; `final`:
        for good, as lspmux exits (a request still on its way then starts nothing)."""
        self._stopping, self._final = True, self._final or final
        done = self._stop_done = asyncio.get_running_loop().create_future()
        for pending in (self._idle_timer, self._restart_task):
            if pending is not None:
                pending.cancel()
        proc, conn = self._proc, self._conn
        self.state = "failed" if self.state == "failed" else "stopping"
        try:
            if proc is not None and conn is not None:
                await self._terminate(proc, conn)
            self._proc = self._conn = self._ready = None
            self.state = "failed" if self.state == "failed" else "stopped"
            self._event("stopped", reason)
        finally:
            done.set_result(None)
            if self._stop_done is done:
                self._stop_done = None

    async def restart(self, reason: str = "reload") -> bool:
        """Stop the server and start it again with its documents replayed (`lspmux reload`);
        also gives a failed server a fresh start."""
        await self.stop(reason)
        self._crashes.clear()
        self.state = "stopped"
        return await self.ensure_running()

    async def _terminate(self, proc: ServerProcess, conn: Connection) -> None:
        if not conn.closed:
            with contextlib.suppress(Exception):
                await conn.call("shutdown", None, timeout=STOP_GRACE)
            conn.notify("exit")
        proc.close_stdin()  # Biome's lsp-proxy and tsc --lsp exit only when stdin closes
        if not await proc.wait(STOP_GRACE):
            log.warning("%s: did not exit after shutdown; killing it", self.label)
            proc.kill()
            await proc.wait(STOP_GRACE)
        proc.kill_group_leftovers()
        conn.close(None)

    def _arm_idle_timer(self) -> None:
        timeout = self.config.idle_timeout
        if timeout is None or timeout <= 0:
            return
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._idle_timer = asyncio.get_running_loop().call_later(timeout, self._check_idle)

    def _check_idle(self) -> None:
        timeout = self.config.idle_timeout or 0
        idle = time.monotonic() - self.last_used
        busy = self._conn is not None and self._conn.pending_count > 0
        if self.state == "running" and idle >= timeout and not busy:
            log.info("%s: unused for %.0fs; shutting it down until needed", self.label, idle)
            task = asyncio.ensure_future(self.stop("idle"))
            task.add_done_callback(_log_task_error)
        elif self.state == "running":
            remaining = max(timeout - idle, 0.05)
            self._idle_timer = asyncio.get_running_loop().call_later(remaining, self._check_idle)


def _settle(fut: asyncio.Future[bool], value: bool, *more: asyncio.Future[bool]) -> None:
    for each in (fut, *more):
        if not each.done():
            each.set_result(value)


def _log_task_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task failed", exc_info=task.exception())
