"""Watching files for backends whose client does not: `watchfiles` under the workspace roots.

`Watcher` keeps each backend's `workspace/didChangeWatchedFiles` registrations (through
`globs.Registrations`), watches the workspace roots (and the bases of `RelativePattern`s outside
them) with the `watchfiles` library in one named thread, drops noise (version-control internals,
dependency and cache folders unless a registered glob names them, editor swap and backup
files), lets `watchfiles` group a burst of events (`debounce_ms`), and calls
`on_changes(backend, params)` on the event loop with the ready `didChangeWatchedFiles` params of
each backend that asked for some of the events. The callback may return an awaitable; it is
awaited before the next batch. `start()` / `stop()` are idempotent; `stop()` joins the thread.
The thread is restarted when the set of watched folders changes (a root or a base is added).

The watches are set up in the thread, some time after a registration: `await ready()` says
when they are in place (a file written earlier may go unseen). When the OS refuses a watch
(inotify's per-user limits on instances or watches, shared by every process of the user: an
editor, node-based servers and lspmux all take some), `watchfiles` raises; the watcher then logs
a warning naming the limit and polls the folders instead (`polling`, every `POLL_MS`: a walk of
the whole tree each time), rather than watching nothing. Folders it may not read are skipped
(logged), the rest is still watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic

from lspmux.workspace.globs import FileChangeType, K, Registrations

log = logging.getLogger(__name__)

OnChanges = Callable[[K, dict[str, Any]], Awaitable[None] | None]

# Folders whose insides are noise unless a registered glob names them.
NOISE_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache",
     ".pytest_cache", ".tox", ".hypothesis", ".venv", ".direnv"}
)  # fmt: skip
# How often folders are polled when the OS refuses to watch them.
POLL_MS = 300
# Editor swap, backup and lock files: vim (.swp, .swo, ~, 4913), emacs (.#x, #x#), JetBrains.
_SWAP = re.compile(r"(\.sw[a-px]|~|\.___jb_\w+___)\Z|\A(\.#.*|#.*#|4913)\Z")


@dataclass
class _Run:
    """One watching thread's state: told to stop by `stop`; `settled` once it watches (then
    `watching`, by `polling` or not) or gave up."""

    stop: threading.Event = field(default_factory=threading.Event)
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    watching: bool = False
    polling: bool = False


def is_noise(path: str, named: Callable[[str], bool] = lambda _: False) -> bool:
    """Is an event on `path` noise? `named(dir)` says whether some glob names a noise folder
    (then events inside it are kept)."""
    parts = path.split("/")
    if _SWAP.search(parts[-1]):
        return True
    return any(part in NOISE_DIRS and not named(part) for part in parts)


def watched_folders(roots: Iterable[str], bases: Iterable[str]) -> list[str]:
    """The folders to watch: existing roots and bases, none inside another."""
    found = sorted({os.path.abspath(p) for p in (*roots, *bases) if os.path.isdir(p)})
    out: list[str] = []
    for folder in found:
        if not any(folder == o or folder.startswith(o.rstrip("/") + "/") for o in out):
            out.append(folder)
    return out


class Watcher(Generic[K]):
    """File watching for the registrations of several backends, under `roots` (folder paths)."""

    def __init__(
        self,
        on_changes: OnChanges[K],
        roots: Iterable[str] = (),
        *,
        debounce_ms: int = 200,
        step_ms: int = 50,
    ) -> None:
        self.registrations: Registrations[K] = Registrations()
        self._on_changes = on_changes
        self._roots: list[str] = list(roots)
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[list[tuple[str, int]]] = asyncio.Queue()
        self._consumer: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None
        self._run_state = _Run()
        self._folders: list[str] = []

    # registrations -------------------------------------------------------------------------

    def register(self, backend: K, registration_id: str, options: Mapping[str, Any] | None) -> None:
        """A backend's `workspace/didChangeWatchedFiles` registration (its registerOptions)."""
        self.registrations.register(backend, registration_id, options)
        self._refresh()

    def unregister(self, backend: K, registration_id: str) -> bool:
        found = self.registrations.unregister(backend, registration_id)
        self._refresh()
        return found

    def forget(self, backend: K) -> None:
        """The backend stopped: drop all its registrations."""
        self.registrations.forget(backend)
        self._refresh()

    def add_root(self, path: str) -> None:
        if path not in self._roots:
            self._roots.append(path)
            self._refresh()

    @property
    def folders(self) -> list[str]:
        """The folders being watched now."""
        return list(self._folders)

    @property
    def polling(self) -> bool:
        """Are the folders polled (the OS refused to watch them)?"""
        return self._thread is not None and self._run_state.polling

    async def ready(self) -> bool:
        """Wait until the watches on `folders` are in place: True; or until the thread gave up
        (logged): False. True at once when nothing is to be watched. Files written after it
        returned True are seen."""
        while self._thread is not None:
            run = self._run_state
            await run.settled.wait()
            if run is self._run_state:  # not restarted meanwhile
                return run.watching
        return True

    # lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        if self._consumer is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._consumer = asyncio.create_task(self._consume(), name="lspmux-watch-consumer")
        self._refresh()

    async def stop(self) -> None:
        thread = self._stop_thread()
        if thread is not None:  # joined off the event loop: other clients go on meanwhile
            await asyncio.to_thread(thread.join, 5)
            if thread.is_alive():
                log.warning("the file watcher thread did not stop within 5 s")
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await consumer
        self._loop = None

    def _wanted_folders(self) -> list[str]:
        if not self.registrations:
            return []  # nobody asked: watch nothing
        bases = [w.base for w in self.registrations.watchers() if w.base is not None]
        return watched_folders(self._roots, bases)

    def _refresh(self) -> None:
        """(Re)start the thread when the folders to watch changed."""
        if self._loop is None:
            return
        folders = self._wanted_folders()
        if folders == self._folders and (self._thread is not None) == bool(folders):
            return
        self._stop_thread()
        self._folders = folders
        if folders:
            self._run_state = _Run()
            self._thread = threading.Thread(
                target=self._run, args=(folders, self._run_state), name="lspmux-watch", daemon=True
            )
            self._thread.start()
            log.debug("watching %s", folders)

    def _stop_thread(self) -> threading.Thread | None:
        """Tell the thread to stop (it does within `rust_timeout`); the caller may join it —
        never on the event loop, where a join would stall every client."""
        thread, self._thread = self._thread, None
        self._folders = []
        if thread is not None:
            self._run_state.stop.set()
        return thread

    # the thread ----------------------------------------------------------------------------

    def _run(self, folders: list[str], run: _Run) -> None:
        loop = self._loop
        assert loop is not None
        try:
            self._watch(folders, run, loop)
        finally:  # watching until stopped, or given up: `ready()` waits no more
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(run.settled.set)

    def _watch(self, folders: list[str], run: _Run, loop: asyncio.AbstractEventLoop) -> None:
        import watchfiles  # here, not at start: only a watching session needs it
        from watchfiles._rust_notify import WatchfilesRustInternalError

        # Unreadable folders are skipped only once a watch without skipping was refused:
        # watchfiles' `ignore_permission_denied` hides every refused watch (inotify's watch limit
        # too), and the watcher would report ready with nothing watched.
        polling = skip_unreadable = False
        while not run.stop.is_set():
            try:
                batches = watchfiles.watch(
                    *folders,
                    watch_filter=None,
                    debounce=self._debounce_ms,
                    step=self._step_ms,
                    stop_event=run.stop,
                    rust_timeout=200,
                    yield_on_timeout=True,  # a first (maybe empty) batch: the watches are set
                    raise_interrupt=False,
                    force_polling=polling,
                    poll_delay_ms=POLL_MS,
                    ignore_permission_denied=skip_unreadable,
                )
                for n, batch in enumerate(batches):
                    if n == 0:
                        run.watching, run.polling = True, polling
                        loop.call_soon_threadsafe(run.settled.set)
                    events = [(path, int(change)) for change, path in batch]
                    if events and not run.stop.is_set():
                        loop.call_soon_threadsafe(self._queue.put_nowait, events)
                return
            except (OSError, WatchfilesRustInternalError) as err:  # the OS refused a watch
                if run.stop.is_set():
                    return
                run.watching = False
                if isinstance(err, PermissionError) and not skip_unreadable:
                    log.warning("unreadable folders under %s are not watched: %s", folders, err)
                    skip_unreadable = True
                    continue
                if polling:
                    log.error("the file watcher cannot poll %s either: %s", folders, err)
                    return
                log.warning(
                    "the OS refused to watch %s (%s); polling them every %d ms instead. "
                    "inotify's limits are per user, shared by all of its processes: raise "
                    "fs.inotify.max_user_instances / fs.inotify.max_user_watches (sysctl) "
                    "to watch them without polling",
                    folders,
                    err,
                    POLL_MS,
                )
                polling = skip_unreadable = True
            except Exception:  # the watcher dies alone; lspmux goes on without it
                run.watching = False
                log.exception("the file watcher on %s failed", folders)
                return

    # on the loop ---------------------------------------------------------------------------

    async def _consume(self) -> None:
        while True:
            events = await self._queue.get()
            try:
                await self.deliver(events)
            except Exception:
                log.exception("delivering file events failed")

    async def deliver(self, events: list[tuple[str, int]]) -> None:
        """Route raw (path, FileChangeType) events to the backends that asked for them."""
        named = self.registrations.names
        events = [
            (p, c)
            for p, c in with_contents(coalesce(events))
            if not is_noise(self._inside(p), named)
        ]
        for backend, params in self.registrations.route(events, self._roots).items():
            log.debug("file events for %s: %s", backend, params["changes"])
            result = self._on_changes(backend, params)
            if inspect.isawaitable(result):
                await result

    def _inside(self, path: str) -> str:
        """`path` relative to the watched folder holding it (noise is judged inside it)."""
        for folder in self._folders or self._roots:
            if path.startswith(folder.rstrip("/") + "/"):
                return path[len(folder.rstrip("/")) + 1 :]
        return path


def with_contents(events: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The events, where everything inside a created folder is created: files written right
    after their folder was made (a checkout, an unpacked archive) come before the watch on the
    new folder is set up, so their creation is missed (at best a change is seen)."""
    out = dict(events)
    for path, change in events:
        if change != FileChangeType.CREATED or not os.path.isdir(path):
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if d not in NOISE_DIRS]
            for name in (*dirs, *files):
                inner = os.path.join(folder, name)
                if out.get(inner) != FileChangeType.DELETED:
                    out[inner] = FileChangeType.CREATED
    return list(out.items())


def coalesce(events: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """One event per path. A batch is a set (its order is lost), so a path with several kinds
    is judged by the disk: gone → deleted; created in the batch → created; else changed."""
    kinds: dict[str, set[int]] = {}
    for path, change in events:
        kinds.setdefault(path, set()).add(int(change))
    out: list[tuple[str, int]] = []
    for path, seen in kinds.items():
        if len(seen) == 1:
            out.append((path, next(iter(seen))))
        elif not Path(path).exists():
            out.append((path, FileChangeType.DELETED))
        elif FileChangeType.CREATED in seen:
            out.append((path, FileChangeType.CREATED))
        else:
            out.append((path, FileChangeType.CHANGED))
    return out
