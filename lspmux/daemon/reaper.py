"""Shutting down the shared instances nobody used for `instance_timeout`.

An instance is idle from the first check that finds no session on it; once idle for the
timeout it leaves the pool (a client arriving then gets a fresh instance) and is stopped.
`instance_timeout = false` (None) keeps every instance.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from lspmux.backends.backend import Backend
from lspmux.backends.pool import Pool
from lspmux.config.model import Config

log = logging.getLogger("lspmux.daemon")


def reap_interval(config: Config) -> float:
    """Seconds between two checks: `gc_interval` at most, and a quarter of `instance_timeout`
    when that is shorter (so a short timeout is kept to within 25%)."""
    timeout = config.instance_timeout
    if timeout is None:
        return config.gc_interval
    return min(max(timeout / 4, 0.1), config.gc_interval)


class Reaper:
    """Remembers since when each instance of `pool` has had no client."""

    def __init__(self, pool: Pool, spawn: Callable[[Coroutine[Any, Any, Any]], None]) -> None:
        self.pool = pool
        self.spawn = spawn
        self.idle_since: dict[Backend, float] = {}

    def reap(self, timeout: float | None, now: float) -> list[Backend]:
        """Shut down the instances that had no client for `timeout` seconds (none when it is
        None); the ones stopped."""
        if timeout is None:
            self.idle_since.clear()
            return []
        reaped = []
        for backend in list(self.pool.backends.values()):
            if self.pool.sessions_of(backend):
                self.idle_since.pop(backend, None)
                continue
            since = self.idle_since.setdefault(backend, now)
            if now - since >= timeout:
                self.idle_since.pop(backend, None)
                self.pool.remove(backend)  # a client arriving now gets a fresh instance
                log.info(
                    "%s: no client for %.0fs (instance_timeout); shutting it down",
                    backend.label,
                    now - since,
                )
                self.spawn(backend.stop("no client"))
                reaped.append(backend)
        return reaped
