"""The daemon's clients: a Session per connected client, and what is known of each.

`Clients.connect` turns a client's `lspMux` options (the Rust lspmux's handshake: `server`,
`args`, `env`, `cwd`) into a Session over the shared pool — exactly one server for every file
when `server` is named (only as the allow-list permits, see admission.py), else routing by file
type like `lspmux proxy`. It also answers for them: the rows of `lspmux/status` and which
clients hold documents open with unsaved changes (`lspmux/documents`).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lspmux.backends.pool import Pool
from lspmux.config.model import Config
from lspmux.daemon.admission import (
    AllowList,
    client_request,
    one_server_config,
    with_environment,
    workspace_folders,
)
from lspmux.memory import tune_heap
from lspmux.session.session import Session
from lspmux.uris import uri_to_path

log = logging.getLogger("lspmux.daemon")

ConfigLoader = Callable[[Path | None], Config]


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


class Clients:
    """The connected clients' sessions, each with its ClientInfo."""

    def __init__(self, pool: Pool, load_config: ConfigLoader) -> None:
        self.pool = pool
        self.load_config = load_config
        self.info: dict[Session, ClientInfo] = {}
        self._ids = itertools.count(1)

    def connect(
        self,
        options: Mapping[str, Any],
        peer: str,
        params: Mapping[str, Any] | None,
        *,
        config: Config,
        allow: AllowList,
        config_file_hint: str,
    ) -> Session:
        """A new client's Session; a JsonRpcError (admission.py) when it may not have one."""
        asked = client_request(
            options, config, allow, config_file_hint, workspace_folders(params or {})
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
                if config.allowed_servers is not None
                else "a server is not named",
            )
        base_loader = self.load_config
        fallback = Path(cwd) if cwd else None

        def load(root: Path | None) -> Config:
            loaded = base_loader(root or fallback)
            if server is None:
                return with_environment(loaded, env)
            return one_server_config(loaded, server, args, env, executable)

        session = Session(self.pool, load, client_id=client_id, on_exit=self._gone)
        session.when_running(tune_heap)  # glibc's thresholds, once per process (memory.py)
        self.info[session] = ClientInfo(
            client_id, server, cwd, peer, tuple(args), tuple(sorted(env))
        )
        log.info(
            "%s: connected from %s (%s)",
            client_id,
            peer,
            f"server {server} {' '.join(args)}".rstrip() if server else "routing by file type",
        )
        return session

    def _gone(self, session: Session, code: int) -> None:
        info = self.info.pop(session, None)
        log.info("%s: gone (exit code %d)", info.id if info else session.client_id, code)

    def rows(self, now: float) -> list[dict[str, Any]]:
        """One row per client for `lspmux/status`."""
        return [
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
            for session, info in self.info.items()
        ]

    def open_documents(self, uris: Any) -> dict[str, Any]:
        """`lspmux/documents`: which clients hold these uris open (all when `uris` is not a
        list), and whether their buffer differs from the file on disk (unsaved changes), so
        that the agent tools never overwrite a file an editor is changing."""
        wanted = {u for u in uris if isinstance(u, str)} if isinstance(uris, list) else None
        found = []
        for session, info in self.info.items():
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
