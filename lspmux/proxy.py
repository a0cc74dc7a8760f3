"""`lspmux proxy`: one client on stdin/stdout, a private pool of backends.

Owns the process-level lifecycle: connects the Session to the stdio pipes, stops every backend
when the client exits, disconnects or the process is asked to terminate, so that no server
outlives the proxy.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

from lspmux import proxy_registry
from lspmux.backends.pool import Pool
from lspmux.serving import CLIENT_WRITE_LIMIT, settle_heap
from lspmux.session.session import ConfigLoader, Session
from lspmux.wire.stdio import StdioBridge

log = logging.getLogger("lspmux.proxy")


async def run_proxy(load_config: ConfigLoader) -> int:
    loop = asyncio.get_running_loop()
    pool = Pool(shared=False)
    done: asyncio.Future[int] = loop.create_future()

    async def on_shutdown(_session: Session) -> None:
        await pool.stop_all()

    def on_exit(_session: Session, code: int) -> None:
        if not done.done():
            done.set_result(code)

    session = Session(
        pool, load_config, client_id="stdio", on_shutdown=on_shutdown, on_exit=on_exit
    )
    # A client that stops reading is cut off past CLIENT_WRITE_LIMIT queued, as by the daemon
    # (what a server floods meanwhile is dropped first: session/relay.py).
    conn = session.connection("client", duplex=False, max_write_buffer=CLIENT_WRITE_LIMIT)
    # stdin/stdout may be a file or /dev/null (`lspmux proxy < /dev/null`): bridged to pipes.
    stdio = StdioBridge(sys.stdin.buffer, sys.stdout.buffer)
    # The writer first: a message read before it exists would be answered into the void.
    writer, _ = await loop.connect_write_pipe(asyncio.Protocol, stdio.writer)
    conn.attach_writer(writer)  # type: ignore[arg-type]
    await loop.connect_read_pipe(lambda: conn, stdio.reader)
    listed = await proxy_registry.register(session)  # `lspmux status` finds and asks it
    settle_heap()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, on_exit, session, 128 + sig)
    try:
        code = await done
    finally:
        listed.close()
        await pool.stop_all()
        if stdio.threads:  # what was written reaches the file before the process ends
            writer.close()
            await asyncio.to_thread(stdio.close)
    log.info("proxy exiting with code %d", code)
    return code
