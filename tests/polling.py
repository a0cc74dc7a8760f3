"""Waiting in tests: poll a condition with a deadline, never a bare sleep; and an event loop
whose clock a test does not wait for (`VirtualClockLoop`)."""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Callable
from typing import Any


async def eventually(
    probe: Callable[[], Any], what: str, *, timeout: float = 10, step: float = 0.05
) -> Any:
    """Poll `probe` until it returns something truthy, and return that; fail naming `what`
    (and the last value seen) when `timeout` seconds pass first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = probe()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"{what}: not seen within {timeout:g}s (last: {value!r})")
        await asyncio.sleep(step)


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock jumps ahead whenever it would only wait for a timer: a test
    in memory runs lspmux's timers (a 0.3 s retry, a 5 s request timeout, a 20 ms poll) at
    once and in order, and "this did not happen" can be shown by letting time pass
    (`asyncio.sleep(30)` returns at once, after every timer due by then has fired).

    It only jumps while nothing real could happen meanwhile: no file descriptor registered but
    the loop's own wake-up pipe (no socket, no subprocess pipe) and no executor job running.
    Otherwise it waits in real time, as any loop does."""

    def __init__(self) -> None:
        super().__init__(selector=_JumpingSelector())
        assert isinstance(self._selector, _JumpingSelector)  # type: ignore[attr-defined]
        self._selector.loop = self  # type: ignore[attr-defined]
        self.skipped = 0.0  # seconds the clock jumped
        self._jobs = 0  # executor jobs running

    def time(self) -> float:
        return super().time() + self.skipped

    def run_in_executor(self, executor: Any, func: Any, *args: Any) -> asyncio.Future[Any]:
        fut = super().run_in_executor(executor, func, *args)
        self._jobs += 1

        def done(_f: asyncio.Future[Any]) -> None:
            self._jobs -= 1

        fut.add_done_callback(done)
        return fut

    async def shutdown_default_executor(self, *args: Any) -> None:
        """Joined in a thread of its own, not an executor job: real time too (else its timeout,
        300 s in `asyncio.run` since 3.12, is jumped past and it warns that the executor's
        threads did not join)."""
        self._jobs += 1
        try:
            await super().shutdown_default_executor(*args)
        finally:
            self._jobs -= 1

    def _may_jump(self, registered: int) -> bool:
        return self._jobs == 0 and registered <= 1  # only the wake-up pipe


class _JumpingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    loop: VirtualClockLoop | None = None

    def select(self, timeout: float | None = None) -> Any:
        loop = self.loop
        if (
            loop is None
            or timeout is None
            or timeout <= 0
            or not loop._may_jump(len(self.get_map()))
        ):
            return super().select(timeout)
        ready = super().select(0)
        if not ready:
            loop.skipped += timeout  # the next timer is due now
        return ready
