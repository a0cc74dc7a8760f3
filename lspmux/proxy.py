"""`lspmux proxy`: one client on stdin/stdout, a private pool of backends.

Owns the process-level lifecycle: connects the Session to the stdio pipes, stops every backend
when the client exits, disconnects or the process is asked to terminate, so that no server
outlives the proxy.

Its start (`main`) is ordered so that the servers boot while lspmux loads: the client's first
message is read with the standard library (`read_first`) before asyncio, the session or the
backends are imported; when it is `initialize`, the configuration is loaded for its workspace
(once: the session is given that same load) and the servers the workspace needs are spawned
at once (`spawn_needed`: the choice the `initialize` answer makes, `config/needs.py`), each
sent at once the `initialize` its backend would send (`send_initialize`), so that it boots and
initializes while lspmux loads. Only then is the rest imported; the bytes already read are the
first the session's connection receives, and each backend takes over the process started for
it, with its `initialize` under way (`backends/adopt.py`) — a process nobody takes, or sent
another `initialize` than its backend's, is killed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: this module is the proxy's start path
if TYPE_CHECKING:
    import argparse
    import subprocess
    from typing import Any

    from lspmux.config.model import Config
    from lspmux.session.session import ConfigLoader

#: How long after the `initialize` answer a server spawned at launch may wait for its backend
#: (which asks for it at the answer or right after); then it is killed (`Prespawned.discard`).
UNTAKEN_AFTER = 5.0

#: A server spawned before the event loop: (argv, folder, its configured environment, process,
#: the `initialize` message it was sent then or None).
Early = tuple[list[str], Path, dict[str, str], "subprocess.Popen[bytes]", "dict[str, Any] | None"]


def read_first(fd: int) -> tuple[bytes, dict[str, Any] | None]:
    """The bytes read from `fd` up to the end of the client's first message (perhaps a little
    beyond), and that message when it is a JSON object; (what was read, None) when the input
    ends first or is not a message: the session's reader says what is wrong with it."""
    import json

    from lspmux.wire.blocking import BlockingPeer, WireError

    raw = bytearray()

    def recv(n: int) -> bytes:
        data = os.read(fd, n)
        raw.extend(data)
        return data

    try:
        body = BlockingPeer("the client's first message", recv).read_body()
        msg = json.loads(body) if body is not None else None
    except (WireError, ValueError):
        msg = None
    return bytes(raw), msg if isinstance(msg, dict) else None


def spawn_needed(config: Config, roots: list[Path], params: dict[str, Any]) -> list[Early]:
    """The servers the workspace of `roots` needs, spawned as their backends would spawn them
    (the argv, folder and environment `Pool.get` gives them, in their restricted mode where the
    workspace is not trusted): the servers `initialize` starts, or starts right after. Each is
    sent at once the `initialize` its backend would send, for the client's `initialize`
    `params` (`send_initialize`)."""
    import subprocess

    from lspmux.backends.watchdog import WATCHDOG
    from lspmux.config.needs import servers_for_workspace
    from lspmux.config.restricted import for_root
    from lspmux.wire.stdio import widen
    from lspmux.workspace.roots import root_for

    root = roots[0]
    runnable = {
        s.name for s in config.servers.values() if not s.disabled and s.resolve_command(root)
    }
    spawned: list[tuple[list[str], Path, dict[str, str], subprocess.Popen[bytes], Any]] = []
    for name, found in servers_for_workspace(config, root, runnable).items():
        server = config.servers[name]
        folder = Path(os.path.realpath(root_for(server, found, roots)))
        runs = for_root(server, folder)
        argv = runs.resolve_command(folder) if runs is not None else None
        if runs is None or argv is None:
            continue  # the backend says why
        env = dict(runs.env)
        try:
            popen = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=folder, env={**os.environ, **env}, start_new_session=True,
            )  # fmt: skip
        except OSError:
            continue  # started again by its backend, which says why it cannot
        for pipe in (popen.stdin, popen.stdout):  # as a spawned server's (`PIPE_SIZE`)
            if pipe is not None:
                widen(pipe.fileno())
        WATCHDOG.watch(popen.pid)  # no orphan even if lspmux is killed before its loop runs
        spawned.append((argv, folder, env, popen, runs.initialization_options))
    # Sent once all are spawned: each server boots meanwhile, before it reads its input.
    return [
        (argv, folder, env, popen, send_initialize(popen, folder, params, configured))
        for argv, folder, env, popen, configured in spawned
    ]


def send_initialize(
    popen: subprocess.Popen[bytes], folder: Path, params: dict[str, Any], configured: Any
) -> dict[str, Any] | None:
    """Write to `popen` the `initialize` its backend would send for a client that sent
    `params` (`Pool.get`, `Backend`: the client's capabilities as `client_caps.for_backend`
    gives them, its initializationOptions under the `configured` ones); the message sent, or
    None when none was (too large to write before the event loop, or the process is gone)."""
    import json

    from lspmux.backends.client_caps import for_backend, init_options, merge_init_options
    from lspmux.backends.initialize import initialize_params, launch_message

    capabilities = for_backend(
        params.get("capabilities") or {}, position_encoding="utf-16", pull_diagnostics=True
    )
    options = merge_init_options(init_options(params.get("initializationOptions")), configured)
    message = launch_message(initialize_params(folder, capabilities, options))
    if message is None or popen.stdin is None:
        return None
    try:
        popen.stdin.write(message)
        popen.stdin.flush()
    except OSError:
        return None
    sent: dict[str, Any] = json.loads(message.partition(b"\r\n\r\n")[2])
    return sent


def main(args: argparse.Namespace) -> int:
    """`lspmux proxy` (the order of its start is the module doc's)."""
    from lspmux.cli_common import (
        EventLoopChoiceError,
        apply_limits,
        event_loop_choice,
        log_levels,
        run_loop,
        set_levels,
        setup_logging,
    )

    try:  # said before waiting for the client
        event_loop_choice()
    except EventLoopChoiceError as err:
        print(f"lspmux: {err}", file=sys.stderr)
        return 2
    first, msg = read_first(sys.stdin.fileno())
    import logging  # after the read too

    setup_logging(args.log_level, args.log_file)
    logging.getLogger("lspmux.proxy").debug("first message read (%d bytes)", len(first))

    from lspmux.config.loader import ConfigError, load_config

    cwd, extra = Path.cwd(), list(args.config)
    try:  # fail early and loudly on a bad file, before the editor sees anything
        config = load_config(cwd, extra)
    except ConfigError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    apply_limits(config)
    set_levels(log_levels(args.log_level, config.log_filters))

    loaded = {cwd: config}  # the session's first load, when it asks for one of these roots
    early: list[Early] = []
    params = msg.get("params") if msg is not None and msg.get("method") == "initialize" else None
    if isinstance(params, dict):
        from lspmux.config.needs import roots_of

        roots = roots_of(params)
        if roots and roots[0] not in loaded:
            with contextlib.suppress(ConfigError):  # the session's own load fails `initialize`
                loaded[roots[0]] = load_config(roots[0], extra)
        if roots and roots[0] in loaded:
            early = spawn_needed(loaded[roots[0]], roots, params)

    def load(root: Path | None) -> Config:
        key = root or cwd
        config = loaded.pop(key, None)  # once: a later load reads the files again
        return config if config is not None else load_config(key, extra)

    return run_loop(run_proxy(load, first=first, early=early))


async def run_proxy(
    load_config: ConfigLoader,
    *,
    first: bytes = b"",
    early: list[Early] | None = None,
    untaken_after: float = UNTAKEN_AFTER,
) -> int:
    """Serve the client on stdin/stdout until it exits; `first`: what `main` already read from
    stdin; `early`: the servers it spawned, killed when no backend took them `untaken_after`
    seconds after the `initialize` answer."""
    import asyncio
    import logging
    import signal

    from lspmux import proxy_registry
    from lspmux.backends.adopt import Prespawned
    from lspmux.backends.pool import Pool
    from lspmux.memory import tune_heap
    from lspmux.serving import CLIENT_WRITE_LIMIT, settle_heap
    from lspmux.session.session import Session
    from lspmux.wire.stdio import StdioBridge

    log = logging.getLogger("lspmux.proxy")
    loop = asyncio.get_running_loop()
    prespawned = Prespawned(early or ())
    pool = Pool(shared=False, spawn=prespawned.spawn)
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
    if first:  # read before the loop existed: received before anything the pipe brings
        conn.data_received(first)
    await loop.connect_read_pipe(lambda: conn, stdio.reader)

    # What the servers' starts did not take by then is killed, not kept idle for the session.
    def discard_untaken() -> None:
        loop.call_later(untaken_after, prespawned.discard)

    session.when_running(discard_untaken)
    session.when_running(tune_heap)  # glibc's thresholds for large messages (memory.py)
    listed = await proxy_registry.register(session)  # `lspmux status` finds and asks it
    settle_heap()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, on_exit, session, 128 + sig)
    try:
        code = await done
    finally:
        listed.close()
        await pool.stop_all()
        prespawned.discard()
        if stdio.threads:  # what was written reaches the file before the process ends
            writer.close()
            await asyncio.to_thread(stdio.close)
    log.info("proxy exiting with code %d", code)
    return code
