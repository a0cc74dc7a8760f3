"""When command-line linters run: per (uri, linter), changes are debounced, open and save run
at once, and a newer run kills the older one; results go to a callback.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lspmux.config.model import LinterConfig
from lspmux.diagnostics.linters.runner import Event, LinterRun
from lspmux.text import Encoding

log = logging.getLogger(__name__)


class _Slot:
    """The state of one (uri, linter): a pending debounce timer and a running task."""

    __slots__ = ("task", "timer")

    def __init__(self) -> None:
        self.timer: asyncio.TimerHandle | None = None
        self.task: asyncio.Task[None] | None = None


class LinterScheduler:
    """Per (linter, uri): debounce changes, run on open/save/change per config.run_on, a newer
    run cancels (kills) an older one, reports results via a callback.

    `on_result(uri, linter_name, diagnostics, error)` gets the diagnostics and None, or None
    and a message for the user. A cancelled run reports nothing.
    """

    def __init__(
        self,
        on_result: Callable[[str, str, list[dict[str, Any]] | None, str | None], None],
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        encoding: Encoding = "utf-16",
    ) -> None:
        self._on_result = on_result
        self._loop = loop
        self._encoding = encoding
        self._slots: dict[tuple[str, str], _Slot] = {}
        self._last: dict[tuple[str, str], LinterRun] = {}
        #: Runs started so far (for status and tests).
        self.started = 0

    def schedule(
        self,
        config: LinterConfig,
        *,
        uri: str,
        path: str,
        text_provider: Callable[[], str | None],
        root: Path,
        event: Event,
    ) -> None:
        """Lint `uri` for `event`: a change waits `config.debounce` seconds (a newer event
        restarts the wait); open and save run now. The text is read when the run starts; a
        provider returning None (the document was closed) skips the run."""
        if config.disabled or event not in config.run_on:
            return
        loop = self._loop or asyncio.get_running_loop()
        key = (uri, config.name)
        slot = self._slots.setdefault(key, _Slot())
        if slot.timer is not None:
            slot.timer.cancel()
            slot.timer = None
        args = (key, config, path, text_provider, Path(root))
        if event == "change" and config.debounce > 0:
            slot.timer = loop.call_later(config.debounce, self._start, *args)
        else:
            self._start(*args)

    def cancel(self, uri: str) -> None:
        """Forget `uri` (didClose): drop pending runs, kill running ones."""
        for key in [k for k in self._slots if k[0] == uri]:
            slot = self._slots.pop(key)
            if slot.timer is not None:
                slot.timer.cancel()
            if slot.task is not None:
                slot.task.cancel()
            self._last.pop(key, None)

    def running(self, uri: str | None = None) -> int:
        """How many runs are in progress (for `uri`, or in all)."""
        return sum(
            1
            for (u, _), slot in self._slots.items()
            if (uri is None or u == uri) and slot.task is not None and not slot.task.done()
        )

    def busy(self, uri: str) -> bool:
        """Whether a run for `uri` is waiting for its debounce or in progress."""
        return any(
            u == uri
            and (slot.timer is not None or (slot.task is not None and not slot.task.done()))
            for (u, _), slot in self._slots.items()
        )

    def busy_with(self, uri: str, linter: str) -> bool:
        """Whether `linter`'s run for `uri` is waiting for its debounce or in progress."""
        slot = self._slots.get((uri, linter))
        return slot is not None and (
            slot.timer is not None or (slot.task is not None and not slot.task.done())
        )

    def last_run(self, uri: str, linter: str) -> LinterRun | None:
        """The latest finished run of `linter` on `uri`."""
        return self._last.get((uri, linter))

    async def aclose(self) -> None:
        """Kill everything and wait until the processes are gone."""
        tasks = []
        for slot in self._slots.values():
            if slot.timer is not None:
                slot.timer.cancel()
            if slot.task is not None and not slot.task.done():
                slot.task.cancel()
                tasks.append(slot.task)
        self._slots.clear()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _start(
        self,
        key: tuple[str, str],
        config: LinterConfig,
        path: str,
        text_provider: Callable[[], str | None],
        root: Path,
    ) -> None:
        slot = self._slots.get(key)
        if slot is None:  # cancelled meanwhile
            return
        slot.timer = None
        if slot.task is not None and not slot.task.done():
            slot.task.cancel()  # the older run's process is killed as the task unwinds
        loop = self._loop or asyncio.get_running_loop()
        slot.task = loop.create_task(
            self._run(key, config, path, text_provider, root),
            name=f"lint {config.name} {key[0]}",
        )

    async def _run(
        self,
        key: tuple[str, str],
        config: LinterConfig,
        path: str,
        text_provider: Callable[[], str | None],
        root: Path,
    ) -> None:
        uri, name = key
        text = text_provider()
        if text is None:
            return
        self.started += 1
        run = await LinterRun.execute(
            config, uri=uri, path=path, text=text, root=root, encoding=self._encoding
        )
        if self._slots.get(key) is None:  # closed while the tool was finishing
            return
        self._last[key] = run
        if run.error is not None:
            log.info("linter %s on %s failed: %s", name, path, run.error)
        else:
            log.debug(
                "linter %s on %s: %d diagnostics in %.3fs",
                name,
                path,
                len(run.diagnostics or ()),
                run.duration,
            )
        try:
            self._on_result(
                uri, name, run.diagnostics, None if run.error is None else str(run.error)
            )
        except Exception:
            log.exception("linter result callback failed for %s on %s", name, uri)
