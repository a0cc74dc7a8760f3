"""The links of `lspmux client --remote`: the far `lspmux client` run through the transport,
read, dropped, and reconnected with backoff and a replay.

A `Link` is one run of the transport (ssh or the `--remote-exec` command). `Links` keeps the
current one: it spawns it, reads its messages (handed to `from_remote`, which the relay
implements), notices when it ends, and then — once the session has started — answers what was
in flight (`link_lost`), tells the editor, and reconnects with backoff (`BACKOFF`). A new link
replays the editor's `initialize` and then what `replay_messages` gives (`initialized` and a
`didOpen` of every open document's current text) before it carries the editor's messages
again (`ready`), with nothing awaited in between so that no edit slips past the replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import sys
from typing import Any

import orjson

from lspmux.remote.target import Target
from lspmux.wire.framing import FrameError, FrameParser, encode

log = logging.getLogger("lspmux.remote")

#: Seconds between reconnection attempts (the last one repeats).
BACKOFF = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
#: How long a new link may take to answer the replayed `initialize`.
INIT_TIMEOUT = 120.0
#: Bytes read at a time from a link or the editor.
CHUNK = 1 << 16
#: The id prefix of the relay's own requests (the replayed `initialize`).
OWN_ID = "lspmux-remote:"


class Link:
    """One run of the transport: the far `lspmux client` as a subprocess."""

    def __init__(self, generation: int, proc: asyncio.subprocess.Process) -> None:
        self.generation = generation
        self.proc = proc
        self.parser = FrameParser()

    def send(self, msg: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(encode(msg))

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()

    def kill(self) -> None:
        self.close()
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()


class Links:
    """The current link and its life: spawn, read, drop, reconnect, replay.

    The relay subclasses it and gives the message side: `from_remote` (a far message),
    `link_lost` (answer what was in flight), `notify_editor` and `replay_messages`.
    """

    def __init__(self, target: Target, client_args: list[str]) -> None:
        self.target = target
        self.client_args = client_args
        self.link: Link | None = None
        self.ready = False  # the link carries the editor's messages
        self.reconnecting = False
        self.generation = 0
        self.session_up = False  # a first initialize was answered: drops are reconnected
        self.init_params: dict[str, Any] | None = None  # the editor's, mapped: replayed
        self.own: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.closing = False
        self.done = asyncio.Event()
        self.exit_code = 0
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- what the relay gives --------------------------------------------------------------------

    def from_remote(self, link: Link, msg: dict[str, Any], body: bytes | None = None) -> None:
        raise NotImplementedError

    def link_lost(self, code: int) -> None:
        """The link ended with `code`: answer what was in flight on it."""
        raise NotImplementedError

    def notify_editor(self, kind: int, text: str) -> None:
        raise NotImplementedError

    def replay_messages(self) -> list[dict[str, Any]]:
        """What a new link gets after the replayed `initialize` is answered (mapped)."""
        raise NotImplementedError

    # -- the link --------------------------------------------------------------------------------

    def up_link(self) -> Link | None:
        """The link when it carries the editor's messages (not while a new one replays)."""
        return self.link if self.ready else None

    def own_answer(self, msg: dict[str, Any]) -> bool:
        """Whether `msg` answers one of the relay's own requests (then it is taken here)."""
        msg_id = msg.get("id")
        if "method" in msg or not isinstance(msg_id, str) or msg_id not in self.own:
            return False
        fut = self.own.pop(msg_id)
        if not fut.done():
            fut.set_result(msg)
        return True

    async def open_link(self) -> Link:
        self.generation += 1
        argv = self.target.client_command(self.client_args)
        log.info("link %d: %s", self.generation, " ".join(argv))
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # ssh's and the far side's complaints reach the editor's log
            limit=1 << 20,
        )
        link = Link(self.generation, proc)
        self.link = link
        self.spawn(self._read_link(link))
        return link

    async def _read_link(self, link: Link) -> None:
        stdout = link.proc.stdout
        assert stdout is not None
        while True:
            data = await stdout.read(CHUNK)
            if not data:
                break
            for body in link.parser.feed(data):
                if isinstance(body, FrameError):
                    log.error("from %s: %s", self.target.label, body)
                    continue
                try:
                    msg = orjson.loads(body)
                except orjson.JSONDecodeError:
                    log.error("from %s: not JSON: %.200r", self.target.label, body)
                    continue
                if isinstance(msg, dict):
                    try:
                        self.from_remote(link, msg, bytes(body))
                    except Exception:  # one odd message must not end the session
                        log.exception("from %s: cannot relay %.200r", self.target.label, msg)
        code = await link.proc.wait()
        if link is self.link:
            self._dropped(code)

    def _dropped(self, code: int) -> None:
        self.link = None
        self.ready = False
        for fut in self.own.values():
            if not fut.done():
                fut.set_exception(ConnectionError(f"the link ended (code {code})"))
        self.own.clear()
        self.link_lost(code)
        if not self.session_up and (code != 0 or not self.closing):
            print(
                f"lspmux: the remote side ({self.target.label}) ended with code {code} before "
                "the session started; see the messages above",
                file=sys.stderr,
            )
            self.finish(1)
            return
        if self.closing:
            self.finish(0)
            return
        if self.reconnecting:  # a failed attempt: the loop sees its replay fail, tries again
            return
        self.notify_editor(2, f"lost the connection to {self.target.label}; reconnecting")
        self.spawn(self._reconnect())

    # -- reconnecting ----------------------------------------------------------------------------

    async def _reconnect(self) -> None:
        self.reconnecting = True
        try:
            await self._attempts()
        finally:
            self.reconnecting = False

    async def _attempts(self) -> None:
        attempt = 0
        while not self.closing:
            await asyncio.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            attempt += 1
            link = await self.open_link()
            try:
                await self._replay(link)
            except (ConnectionError, TimeoutError) as exc:
                log.warning("reconnect %d to %s failed: %s", attempt, self.target.label, exc)
                if link is self.link:
                    link.kill()
                    self.link = None
                continue
            self.notify_editor(3, f"reconnected to {self.target.label}")
            return

    async def _replay(self, link: Link) -> None:
        """initialize, then `replay_messages()`, on a fresh link."""
        key = f"{OWN_ID}{link.generation}"
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.own[key] = fut
        link.send({"jsonrpc": "2.0", "id": key, "method": "initialize",
                   "params": copy.deepcopy(self.init_params)})  # fmt: skip
        answer = await asyncio.wait_for(fut, INIT_TIMEOUT)
        if "error" in answer:
            raise ConnectionError(str(answer["error"].get("message")))
        if link is not self.link:
            raise ConnectionError("the link ended during the replay")
        # from here to `ready` nothing awaits: an edit cannot slip between replay and relay
        for msg in self.replay_messages():
            link.send(msg)
        self.ready = True

    # -- running ---------------------------------------------------------------------------------

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def finish(self, code: int) -> None:
        self.exit_code = code
        self.done.set()

    def editor_closed(self) -> None:
        """End of the editor's input: let the far side see it too, then stop."""
        self.closing = True
        if self.link is not None:
            self.link.close()
        else:
            self.finish(0)
