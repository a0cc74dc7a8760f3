"""Large answers fitted to a client in a worker process, off the event loop.

A shared backend was told more than some clients declared, so its answers go through
`routing.adapt` before they reach such a client (markdown to plain text, snippets to text,
links to locations). For a small answer that is a fraction of a millisecond on the event loop.
A large one — a 2.5 MB completion list is 12,000 items to parse, rewrite and encode, ≈ 80 ms —
would hold every other client of the daemon that long, once per client that asked; a thread
would not help, since parsing holds the interpreter lock the event loop needs. So answers
larger than `FIT_ON_LOOP` go to the fitting worker (`lspmux/fit_worker.py`), a child process
started on first use and shared by every session of this process: the loop writes the
backend's bytes to it as they were read (spliced into the request, not re-encoded) and relays
its answer to the client under the client's id, without parsing either.

Most answers never get that far: `Exchange.reply_raw` first scans the bytes
(`routing.fit_raw.needs_fitting`) and relays an answer that holds nothing the client cannot
take as it came. One that does is fitted where it stands (`fit_raw.fit_body`): a completion
list's markdown documentation is rewritten in place, the rest of its bytes copied. When its
bytes have no escapes that takes one regular-expression split and whole-buffer passes (~7 to
12 ms for 2.5 MB on a shared 2-core machine, page faults on the fresh memory included; ~1 ms in
C where the documentation is simple text, `lspmux.speedups`): less
than the round trip of 2.5 MB to the worker and back (~25 ms), so such an answer, large or
not, is fitted on the loop (`fit_off_loop`). The worker gets the rest:
the answer's size with it, so it does not parse it either, and it answers with the fitted
answer's own bytes under its id.

Whatever goes wrong with the worker (it cannot start, crashes, or fails on an answer), the
answer is fitted on the loop instead: the client gets a correct answer, only later.

While an answer is being fitted its client owes lspmux that answer's size
(`Connection.owe`): a client owed more than its backpressure is not read from, as if the
bytes were already queued unread. So a client that stopped reading sends no further requests to
the shared backend while its first large answer is fitted, and the worker never queues work
for it.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import Any, Protocol

import orjson

from lspmux.backends.process import ServerProcess
from lspmux.errors import JsonRpcError, ParseError
from lspmux.routing import fit_raw
from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message, decode, sniff_response

log = logging.getLogger("lspmux.session")

#: Answers up to this size are fitted on the event loop (≈ 1 ms); larger ones by the worker.
FIT_ON_LOOP = 64 * 1024
#: Answers up to this size are fitted on the loop when their bytes allow it without a parse
#: (`fit_raw.fit_in_place`, ~1 to 12 ms per 2.5 MB); a larger one would hold every other client
#: of the daemon too long (over ~25 ms), and goes to the worker.
FIT_IN_PLACE_ON_LOOP = 4 * 1024 * 1024
#: Seconds the worker may take for one answer before it is fitted on the loop instead.
FIT_TIMEOUT = 30.0
#: After the worker failed to start or died, seconds before it is tried again.
RETRY_AFTER = 30.0

#: The package's folder: the worker imports lspmux from here, whatever the current folder.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
#: `-I`: the worker ignores PYTHON* variables and the current folder (a workspace's
#: `sitecustomize.py` is not run); it finds lspmux where this process found it.
WORKER_ARGV = [
    sys.executable,
    "-I",
    "-c",
    f"import sys; sys.path.insert(0, {_PACKAGE_ROOT!r}); "
    "from lspmux.fit_worker import main; sys.exit(main())",
]


class Fittable(Protocol):
    """The request being answered (an `Exchange`)."""

    @property
    def answered(self) -> bool: ...

    @property
    def client_id(self) -> Any: ...

    @property
    def method(self) -> str: ...

    @property
    def fit_kind(self) -> str: ...

    def owe(self, size: int) -> None: ...

    def reply(self, value: Any) -> None: ...

    def reply_error(self, err: JsonRpcError | dict[str, Any]) -> None: ...

    def relay(self, body: bytes, offset: int) -> None: ...


class Fitter:
    """The worker process of one event loop, started when first needed."""

    def __init__(self, argv: list[str] | None = None) -> None:
        self.argv = argv or WORKER_ARGV
        self._proc: ServerProcess | None = None
        self._starting: asyncio.Future[ServerProcess | None] | None = None
        self._failed_at = float("-inf")

    async def process(self) -> ServerProcess | None:
        """The running worker, started if need be; None while it cannot run."""
        proc = self._proc
        if proc is not None and not proc.conn.closed:
            return proc
        if self._starting is None:
            if time.monotonic() - self._failed_at < RETRY_AFTER:
                return None
            self._starting = asyncio.ensure_future(self._start())
        return await asyncio.shield(self._starting)

    async def _start(self) -> ServerProcess | None:
        conn = Connection(
            "fitting worker",
            on_request=lambda msg: None,
            on_notification=lambda msg: None,
            reply_errors=False,
        )
        try:
            proc = await ServerProcess.spawn(
                "fitting worker",
                self.argv,
                cwd=Path("/"),
                env={},
                conn=conn,
                on_exit=self._exited,
            )
        except OSError as exc:
            log.warning("the fitting worker could not start (%s); answers are fitted inline", exc)
            self._failed_at = time.monotonic()
            return None
        finally:
            self._starting = None
        self._proc = proc
        return proc

    def _exited(self, code: int | None) -> None:
        if code:
            log.warning("the fitting worker exited with %s; it restarts when next needed", code)
            self._failed_at = time.monotonic()
        self._proc = None

    async def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.close_stdin()  # it exits at the end of its input
            if not await proc.wait(2.0):
                proc.kill()


_fitters: dict[asyncio.AbstractEventLoop, Fitter] = {}


def fitter() -> Fitter:
    """This event loop's worker (a daemon and a test may run loops one after another)."""
    loop = asyncio.get_running_loop()
    found = _fitters.get(loop)
    if found is None:
        for old in [other for other in _fitters if other.is_closed()]:
            del _fitters[old]
        found = _fitters[loop] = Fitter()
    return found


async def stop() -> None:
    """Stop this event loop's worker, if it runs (the daemon, when it stops)."""
    found = _fitters.pop(asyncio.get_running_loop(), None)
    if found is not None:
        await found.stop()


def fit_on_loop(ex: Fittable, body: bytes, client: dict[str, Any]) -> None:
    """Answer `ex` with `body` (a backend's response, which `fit_raw.needs_fitting` found
    something in) fitted for `client` here: only what the client cannot take is rewritten
    (`routing.fit_raw`), the rest relayed as it came."""
    try:
        out = fit_raw.fit_found(ex.fit_kind, body, client)
    except orjson.JSONDecodeError as exc:
        ex.reply_error(ParseError(f"the server's answer to {ex.method} is not valid JSON: {exc}"))
        return
    _answer(ex, out)


def _answer(ex: Fittable, out: bytes) -> None:
    """Answer `ex` with the fitted response `out`."""
    sniffed = sniff_response(out)
    if sniffed is not None:
        ex.relay(out, sniffed[1])
        return
    msg = decode(out)  # a response that does not start plainly ({"jsonrpc", "id", "result"…})
    if "error" in msg:
        ex.reply_error(msg["error"] or {})
    else:
        ex.reply(msg.get("result"))


def fit_off_loop(ex: Fittable, body: bytes, client: dict[str, Any]) -> None:
    """Answer `ex` with `body` (a backend's result) fitted for `client`: here when the bytes
    allow it and it is not too large (`FIT_IN_PLACE_ON_LOOP`) — a completion list's markdown
    documentation without escapes is rewritten by a split and whole-buffer passes, less than
    the round trip to the worker — else by the worker."""
    if len(body) <= FIT_IN_PLACE_ON_LOOP:
        fitted = fit_raw.fit_in_place(ex.fit_kind, body, client, escaped=False)
        if fitted is not None:
            _answer(ex, fitted)
            return
    size = len(body)
    ex.owe(size)
    task = asyncio.ensure_future(_fit(ex, body, client))
    task.add_done_callback(lambda _t: ex.owe(-size))  # after the write: see the module doc


async def _fit(ex: Fittable, body: bytes, client: dict[str, Any]) -> None:
    try:
        answer = await _ask_worker(ex, body, client)
    except Exception:
        log.exception("the fitting worker could not be asked; fitting inline")
        answer = None
    if ex.answered:  # cancelled, or the client left, meanwhile
        return
    if answer is None:
        fit_on_loop(ex, body, client)
        return
    ex.relay(*answer)


async def _ask_worker(
    ex: Fittable, body: bytes, client: dict[str, Any]
) -> tuple[bytes, int] | None:
    """The worker's response (its body and the offset of its "result"), or None when it
    cannot give one."""
    proc = await fitter().process()
    if proc is None or ex.answered:
        return None
    loop = asyncio.get_running_loop()
    got: asyncio.Future[tuple[bytes, int] | None] = loop.create_future()

    def on_message(msg: Message) -> None:  # an error, or a response that could not be sniffed
        if "error" in msg:
            log.warning("fitting worker: %s; fitting inline", msg["error"].get("message"))
        if not got.done():
            got.set_result(None)

    def on_raw(raw: bytes, offset: int) -> None:
        if not got.done():
            got.set_result((raw, offset) if raw.startswith(b'"result"', offset) else None)

    # The answer goes last, with its size first: the worker reads it without parsing it.
    params = {
        "kind": ex.fit_kind,
        "client": client,
        "size": len(body),
        "answer": orjson.Fragment(body),
    }
    proc.conn.request("lspmux/fit", params, on_message, timeout=FIT_TIMEOUT, raw=on_raw)
    return await got
