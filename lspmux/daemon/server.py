"""`lspmux server`: the daemon that shares one warm backend per (server, workspace root).

Responsible for: listening (a private Unix socket, or opt-in loopback TCP that admits its own
user — the peer's uid told by /proc/net/tcp on Linux — and anyone else only with a token), being
the only daemon for its address (an flock held for its lifetime, and a live socket is never
replaced), the handshake on each connection's first message, one `Session` per client over the
shared `Pool`, shutting down instances nobody used for `instance_timeout`, `lspmux/status` and
`lspmux/reload`, and a clean stop (every backend shut down) on SIGTERM/SIGINT.

The handshake. A connection's first message is one of:

- `initialize`, optionally with `initializationOptions.lspMux` = `{"version": "1", "method":
  "connect", "server", "args", "env", "cwd"}` (the Rust lspmux protocol; `token` on TCP). The
  key is removed, then the message goes to a new Session. With a `server`, the session uses
  exactly that server for every file (matched against the configured servers to reuse their
  settings, and only when the allow-list permits it); without, it routes by file type over the
  whole configuration like `lspmux proxy`. `method` "status" and "reload" (with `cwd`, the
  Rust client's folder) are also understood.
- `lspmux/status` or `lspmux/reload` (params: `cwd`, `all`, `restart` or `root`, see
  `Daemon.reload`; `token` on TCP): answered, then the connection is closed. So is
  `lspmux/documents` (params: `uris`): which clients hold those documents open and whether
  their buffers have unsaved changes (the agent tools ask it before writing a file), and
  `lspmux/tool` (params: `root`, `name`, `arguments`): an agent tool run inside the daemon for
  `lspmux <verb>` (lspmux/agent/hosted.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hmac
import itertools
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from lspmux import __version__
from lspmux.backends.backend import Backend
from lspmux.backends.pool import Pool
from lspmux.config.model import Config
from lspmux.daemon import reload as reloading
from lspmux.daemon.address import (
    Address,
    AddressError,
    check_replaceable,
    check_socket_dir,
    default_dir,
    is_loopback,
    peer_uid_checkable,
    private_dir,
)
from lspmux.daemon.admission import (
    AllowList,
    OneServerConfig,
    client_request,
    match_server,
    one_server_config,
    resolve_executable,
    with_environment,
    workspace_folders,
)
from lspmux.daemon.handshake import Handshake
from lspmux.errors import InvalidRequest, JsonRpcError, RequestFailed
from lspmux.proxy import CLIENT_WRITE_LIMIT, settle_heap
from lspmux.session import fitting
from lspmux.session.session import Session
from lspmux.uris import uri_to_path
from lspmux.wire.framing import frame
from lspmux.wire.messages import error

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

ConfigLoader = Callable[[Path | None], Config]


class DaemonError(Exception):
    """The daemon cannot start; the message says why and what to do."""


# -- the daemon ------------------------------------------------------------------------------


class ClientInfo:
    __slots__ = ("args", "connected_at", "cwd", "env", "id", "peer", "server")

    def __init__(
        self,
        client_id: str,
        server: str | None,
        cwd: str | None,
        peer: str,
        args: tuple[str, ...] = (),
        env: tuple[str, ...] = (),
    ) -> None:
        self.id = client_id
        self.server = server
        self.cwd = cwd
        self.peer = peer
        self.args = args
        self.env = env  # the names of the variables passed (values stay out of status)
        self.connected_at = time.monotonic()


class Daemon:
    def __init__(
        self,
        address: Address,
        load_config: Callable[[Path | None], Config],
        *,
        token: str | None = None,
        config_file_hint: str = "~/.config/lspmux/config.toml",
        client_write_limit: int = CLIENT_WRITE_LIMIT,
    ) -> None:
        self.address = address
        self.load_config = load_config
        self.token = token
        self.config_file_hint = config_file_hint
        self.client_write_limit = client_write_limit
        self.config = load_config(None)  # the daemon's own: defaults, user file, --config
        self.allow = AllowList(self.config)
        self.pool = Pool(shared=True)
        self.clients: dict[Session, ClientInfo] = {}
        self.started_at = time.monotonic()
        self._ids = itertools.count(1)
        self._idle_since: dict[Backend, float] = {}
        self._server: asyncio.AbstractServer | None = None
        self._lock_fd: int | None = None
        self._stopped: asyncio.Future[int] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.handshakes: set[Handshake] = set()
        self.tools: Any = None  # lspmux.agent.hosted.HostedTools, made by the first lspmux/tool

    # -- listening --------------------------------------------------------------------------

    def _take_lock(self) -> None:
        path = self.address.lock_path("pid")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            raise DaemonError(
                f"another lspmux daemon (pid {other or '?'}) is already running for "
                f"{self.address}; stop it first, or choose another address with --listen"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.address.is_unix:
            try:
                check_socket_dir(self.address)
            except AddressError as exc:
                raise DaemonError(str(exc)) from None
            self._take_lock()
            try:
                sock = self._bind_unix()
            except OSError as exc:
                raise DaemonError(f"cannot listen on {self.address}: {exc.strerror}") from None
            self._server = await loop.create_unix_server(lambda: Handshake(self, "unix"), sock=sock)
        else:
            if not is_loopback(self.address.host):
                raise DaemonError(
                    f"{self.address}: lspmux listens on TCP only on a loopback address "
                    "(127.0.0.1, ::1); use a Unix socket or an SSH tunnel to reach it from "
                    "another machine"
                )
            if not self.token and not peer_uid_checkable():
                raise DaemonError(
                    f"{self.address}: on this system a TCP listener cannot tell who connects, "
                    "so it needs a token: give --token-file FILE (mode 0600) or set LSPMUX_TOKEN"
                )
            try:  # the lock file lives in the private folder of the default socket
                private_dir(default_dir())
            except AddressError as exc:
                raise DaemonError(str(exc)) from None
            self._take_lock()
            try:
                self._server = await loop.create_server(
                    lambda: Handshake(self, "tcp"), self.address.host, self.address.port
                )
            except OSError as exc:
                raise DaemonError(f"cannot listen on {self.address}: {exc.strerror}") from None
        log.info("listening on %s (pid %d)", self.address, os.getpid())
        settle_heap()

    def _bind_unix(self) -> socket.socket:
        path = self.address.path
        if os.path.exists(path) or os.path.islink(path):
            try:
                check_replaceable(path)
            except AddressError as exc:
                raise DaemonError(str(exc)) from None
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.settimeout(1.0)
                probe.connect(path)
            except OSError:
                os.unlink(path)  # a stale socket: nobody listens on it
            else:
                raise DaemonError(f"another lspmux daemon already listens on {self.address}")
            finally:
                probe.close()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is 0600 from the moment it exists
        try:
            sock.bind(path)
        except BaseException:
            sock.close()
            raise
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        sock.listen(128)
        sock.setblocking(False)
        return sock

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
        for session in list(self.clients):
            if session.conn is not None:
                session.conn.close(None)
        await self.pool.stop_all()
        await fitting.stop()
        if self.address.is_unix:
            with contextlib.suppress(OSError):
                os.unlink(self.address.path)
        self._release_lock()
        log.info("stopped")

    # -- instances without clients ------------------------------------------------------------

    def reap_interval(self) -> float:
        """Seconds between two checks: `gc_interval` at most, and a quarter of
        `instance_timeout` when that is shorter (so a short timeout is kept to within 25%)."""
        timeout = self.config.instance_timeout
        if timeout is None:
            return self.config.gc_interval
        return min(max(timeout / 4, 0.1), self.config.gc_interval)

    async def _reap_loop(self) -> None:
        while True:
            await asyncio.sleep(self.reap_interval())
            self.reap(time.monotonic())

    def reap(self, now: float) -> list[Backend]:
        """Shut down the instances that had no client for `instance_timeout` (never when it is
        None: `instance_timeout = false`)."""
        timeout = self.config.instance_timeout
        if timeout is None:
            self._idle_since.clear()
            return []
        reaped = []
        for backend in list(self.pool.backends.values()):
            if self.pool.sessions_of(backend):
                self._idle_since.pop(backend, None)
                continue
            since = self._idle_since.setdefault(backend, now)
            if now - since >= timeout:
                self._idle_since.pop(backend, None)
                self.pool.remove(backend)  # a client arriving now gets a fresh instance
                log.info(
                    "%s: no client for %.0fs (instance_timeout); shutting it down",
                    backend.label,
                    now - since,
                )
                self._spawn(backend.stop("no client"))
                reaped.append(backend)
        return reaped

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("daemon task failed", exc_info=task.exception())

    # -- status and reload ------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        now = time.monotonic()
        daemon_rss = None
        with contextlib.suppress(Exception):
            import psutil

            daemon_rss = psutil.Process().memory_info().rss
        instances = self.pool.describe()
        clients = []
        for session, info in self.clients.items():
            clients.append(
                {
                    "id": info.id,
                    "server": info.server,
                    "args": list(info.args),
                    "env": list(info.env),
                    "cwd": info.cwd,
                    "roots": [str(r) for r in session.roots],
                    "state": session.state,
                    "open_documents": sum(1 for _ in session.documents),
                    "instances": [b.label for b in session.backends],
                    "connected": now - info.connected_at,
                    "idle": now - session.last_active,
                }
            )
        return {
            "pid": os.getpid(),
            "version": __version__,
            "address": str(self.address),
            "uptime": now - self.started_at,
            "rss": daemon_rss,
            "instance_timeout": self.config.instance_timeout,
            "instances": instances,
            "clients": clients,
        }

    def open_documents(self, uris: Any) -> dict[str, Any]:
        """`lspmux/documents`: which clients hold these uris open, and whether their buffer
        differs from the file on disk (unsaved changes), so that the agent tools never
        overwrite a file an editor is changing."""
        wanted = {u for u in uris if isinstance(u, str)} if isinstance(uris, list) else None
        found = []
        for session, info in self.clients.items():
            for doc in session.documents:
                if wanted is not None and doc.uri not in wanted:
                    continue
                try:
                    with open(uri_to_path(doc.uri), encoding="utf-8", newline="") as f:
                        unsaved = f.read() != doc.text
                except (OSError, ValueError):
                    unsaved = True
                found.append({"uri": doc.uri, "client": info.id, "unsaved": unsaved})
        return {"documents": found}

    async def reload(
        self,
        root: str | None = None,
        *,
        cwd: str | None = None,
        everything: bool = False,
        restart: bool | None = None,
    ) -> dict[str, Any]:
        """Reload instances (lspmux/daemon/reload.py): by folder (`cwd`: every server's
        innermost instance whose root contains it; RequestFailed listing the instances when
        none does), by exact `root`, or all. Soft by folder or with `everything` (a server's
        own reload request, else a restart), a restart by `root` or with nothing named (what
        the agent tools ask); `restart` overrides. The daemon's own configuration
        (allow-list, instance_timeout, gc_interval) is read again too."""
        with contextlib.suppress(Exception):
            self.config = self.load_config(None)
            self.allow = AllowList(self.config)
        backends = list(self.pool.backends.values())
        if cwd is not None:
            targets = reloading.for_folder(backends, cwd)
            if not targets:
                raise reloading.no_instance(cwd, backends)
        elif root and not everything:
            wanted = os.path.realpath(root)
            targets = [b for b in backends if str(b.root) == wanted]
        else:
            targets = backends
        hard = restart if restart is not None else cwd is None and not everything
        log.info(
            "reload %s: %d instance(s)%s",
            cwd or root or "(all)",
            len(targets),
            " (restart)" if hard else "",
        )
        rows = await asyncio.gather(*(reloading.reload_one(b, restart=hard) for b in targets))
        return {
            "reloaded": rows,
            "restarted": [r for r in rows if r["method"] == reloading.RESTART],
        }

    # -- the handshake ----------------------------------------------------------------------

    def _check_token(self, hs: Handshake, given: Any) -> str | None:
        """None when the connection may proceed; else why not. A Unix socket admits only its
        user (its folder is private); on TCP the daemon's own user needs no token where the
        peer's uid can be told (Linux), anyone else needs the token."""
        if hs.kind != "tcp":
            return None
        uid = hs.peer_uid()
        if uid == os.getuid():
            return None
        who = (
            "its user cannot be told here"
            if uid is None
            else f"it comes from uid {uid}, not the daemon's user (uid {os.getuid()})"
        )
        if not isinstance(given, str) or not self.token:
            if not self.token:
                return (
                    f"lspmux: this TCP listener admits only its own user, and {who}; a token "
                    "is needed: start the daemon with --token-file FILE (or LSPMUX_TOKEN) and "
                    "give the client the same token"
                )
            return (
                f"lspmux: {who}, so this TCP listener needs the token (lspMux.token / "
                "params.token; `lspmux client --token-file FILE` or LSPMUX_TOKEN)"
            )
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return "lspmux: wrong token"
        return None

    def first_message(self, hs: Handshake, body: bytes, rest: bytes) -> None:
        try:
            msg = orjson.loads(body)
        except orjson.JSONDecodeError:
            msg = None
        if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
            hs.reply_and_close(error(None, InvalidRequest("lspmux: expected initialize first")))
            return
        method = msg["method"]
        msg_id = msg.get("id")
        raw_params = msg.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if method in ("lspmux/status", "lspmux/reload", "lspmux/documents", "lspmux/tool"):
            refused = self._check_token(hs, params.get("token"))
            if refused:
                hs.reply_and_close(error(msg_id, RequestFailed(refused)))
            elif method == "lspmux/status":
                hs.reply_and_close({"jsonrpc": "2.0", "id": msg_id, "result": self.status()})
            elif method == "lspmux/documents":
                result = self.open_documents(params.get("uris"))
                hs.reply_and_close({"jsonrpc": "2.0", "id": msg_id, "result": result})
            elif method == "lspmux/tool":
                self._spawn(self._tool_reply(hs, msg_id, params))
            else:
                self._spawn(self._reload_reply(hs, msg_id, params))
            return
        if method != "initialize":
            hs.reply_and_close(
                error(msg_id, InvalidRequest(f"lspmux: expected initialize first, got {method}"))
            )
            return
        init = params.get("initializationOptions")
        options = init.pop("lspMux", None) if isinstance(init, dict) else None
        if isinstance(init, dict) and not init:
            del params["initializationOptions"]
        if options is not None and not isinstance(options, dict):
            hs.reply_and_close(error(msg_id, InvalidRequest("lspmux: lspMux must be an object")))
            return
        options = options or {}
        refused = self._check_token(hs, options.get("token"))
        if refused:
            log.warning("refused a %s client: %s", hs.kind, refused)
            hs.reply_and_close(error(msg_id, RequestFailed(refused)))
            return
        if options and str(options.get("version", "1")) != "1":
            hs.reply_and_close(
                error(
                    msg_id,
                    InvalidRequest(f"lspmux: unsupported lspMux version {options.get('version')}"),
                )
            )
            return
        kind = options.get("method", "connect")
        if kind == "status":
            hs.reply_and_close({"jsonrpc": "2.0", "id": msg_id, "result": self.status()})
            return
        if kind == "reload":
            self._spawn(self._reload_reply(hs, msg_id, {"cwd": options.get("cwd")}))
            return
        if kind != "connect":
            hs.reply_and_close(
                error(msg_id, InvalidRequest(f"lspmux: unknown lspMux method {kind!r}"))
            )
            return
        try:
            session = self._new_session(options, hs.peer, params)
        except JsonRpcError as exc:
            log.warning("refused a client: %s", exc.message)
            hs.reply_and_close(error(msg_id, exc))
            return
        msg["params"] = params
        hs.hand_over(session, frame(orjson.dumps(msg)) + rest)

    async def _tool_reply(self, hs: Handshake, msg_id: Any, params: dict[str, Any]) -> None:
        """`lspmux/tool`: an agent tool run here for `lspmux <verb>` (lspmux/agent/hosted.py)."""
        if self.tools is None:
            from lspmux.agent.hosted import HostedTools

            self.tools = HostedTools(self.address.path if self.address.is_unix else None,
                                     self._query)  # fmt: skip
        try:
            result = await self.tools.run(params)
        except Exception as exc:
            log.exception("lspmux/tool failed")
            hs.reply_and_close(error(msg_id, RequestFailed(f"lspmux: tool failed: {exc}")))
            return
        hs.reply_and_close({"jsonrpc": "2.0", "id": msg_id, "result": result})

    async def _query(self, method: str, params: dict[str, Any]) -> Any:
        """The daemon's one-shot methods, asked from inside (by the hosted agent tools)."""
        if method == "lspmux/status":
            return self.status()
        if method == "lspmux/reload":
            return await self.reload(params.get("root"))
        if method == "lspmux/documents":
            return self.open_documents(params.get("uris"))
        raise RequestFailed(f"lspmux: unknown method {method}")

    async def _reload_reply(self, hs: Handshake, msg_id: Any, params: Mapping[str, Any]) -> None:
        """`lspmux/reload` (params `cwd`, `root`, `all`, `restart`), or the Rust handshake's
        `reload` (its `cwd`)."""

        def text(key: str) -> str | None:
            value = params.get(key)
            return value if isinstance(value, str) and value else None

        try:
            if "cwd" in params and text("cwd") is None:
                raise InvalidRequest("lspmux: reload needs cwd, the folder to reload")
            restart = params.get("restart")
            result = await self.reload(
                text("root"),
                cwd=text("cwd"),
                everything=params.get("all") is True,
                restart=restart if isinstance(restart, bool) else None,
            )
        except JsonRpcError as exc:
            hs.reply_and_close(error(msg_id, exc))
            return
        except Exception as exc:
            log.exception("reload failed")
            hs.reply_and_close(error(msg_id, RequestFailed(f"lspmux: reload failed: {exc}")))
            return
        hs.reply_and_close({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _new_session(
        self, options: Mapping[str, Any], peer: str, params: Mapping[str, Any] | None = None
    ) -> Session:
        asked = client_request(
            options,
            self.config,
            self.allow,
            self.config_file_hint,
            workspace_folders(params or {}),
        )
        server, args, env, cwd = asked.server, list(asked.args), asked.env, asked.cwd
        executable = asked.executable
        client_id = f"client-{next(self._ids)}"
        if asked.ignored:
            log.info(
                "%s: ignored the client's %s (%s)",
                client_id,
                " and ".join(asked.ignored),
                "not in the server's client_may_set"
                if self.config.allowed_servers is not None
                else "a server is not named",
            )
        base_loader = self.load_config
        fallback = Path(cwd) if cwd else None

        def load(root: Path | None) -> Config:
            config = base_loader(root or fallback)
            if server is None:
                return with_environment(config, env)
            return one_server_config(config, server, args, env, executable)

        session = Session(self.pool, load, client_id=client_id, on_exit=self._client_gone)
        self.clients[session] = ClientInfo(
            client_id, server, cwd, peer, tuple(args), tuple(sorted(env))
        )
        log.info(
            "%s: connected from %s (%s)",
            client_id,
            peer,
            f"server {server} {' '.join(args)}".rstrip() if server else "routing by file type",
        )
        return session

    def _client_gone(self, session: Session, code: int) -> None:
        info = self.clients.pop(session, None)
        log.info("%s: gone (exit code %d)", info.id if info else session.client_id, code)
