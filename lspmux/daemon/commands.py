"""`lspmux server`, `lspmux client`, `lspmux status`, `lspmux reload`, `lspmux stop`: the
daemon's commands (docs/sharing.md); `status` shows the running proxies too. The client itself is `daemon/shim.py`, reached before any parsing.
"""

from __future__ import annotations

import sys

from lspmux.daemon.client_options import CONNECT_OPTIONS
from lspmux.options import Option, read_args
from lspmux.serving import STATUS

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the commands are imported on the start path
if TYPE_CHECKING:  # argparse and pathlib too: `lspmux status` runs without them
    import argparse
    from collections.abc import Sequence
    from pathlib import Path

    from lspmux.daemon.server import HostedTools, Query

# -- the daemon: server, client, status, reload (docs/sharing.md) ------------------------------


def add_daemon_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pathlib import Path

    from lspmux.cli_common import add_config, add_logging
    from lspmux.daemon.client_options import (
        add_client_options,
        add_connect_options,
        add_status_options,
    )

    server = sub.add_parser(
        "server",
        help="the daemon: share one backend per (server, workspace root) among clients",
        description="Run the lspmux daemon. Each client (`lspmux client`, or a raw socket "
        "speaking LSP) gets its own session; backends are shared per (server, root). "
        "See docs/sharing.md.",
    )
    server.add_argument(
        "--listen",
        metavar="ADDR",
        default=None,
        help="unix:PATH or tcp:127.0.0.1:PORT (TCP admits your own user, others with a token; "
        "env LSPMUX_ADDRESS; default: a Unix socket in $XDG_RUNTIME_DIR/lspmux/)",
    )
    server.add_argument(
        "--token-file",
        metavar="FILE",
        default=None,
        help="for tcp: a 0600 file holding the token clients must send (env LSPMUX_TOKEN)",
    )
    server.add_argument(
        "--idle-timeout",
        metavar="SECONDS",
        type=float,
        default=None,
        help="exit after this long with no client and no server (env LSPMUX_IDLE_TIMEOUT; "
        "default 600; 0: never)",
    )
    add_config(server)
    add_logging(server)

    client = sub.add_parser(
        "client",
        help="pipe stdio to the daemon (start it when needed): the editor's server command",
        description="Pipe stdin/stdout to the lspmux daemon, starting it when none runs. "
        "With --server-path (or LSPMUX_SERVER) it shares exactly that server; without, "
        "it routes each file by type like `lspmux proxy`.",
    )
    add_client_options(client)

    status = sub.add_parser(
        "status",
        help="show the daemon's and the proxies' servers and clients (exit 1: no daemon)",
        description="Ask the daemon for its instances (server, root, pid, clients, open "
        "documents, memory of the server's whole process tree, uptime, state, the progress "
        "it reports now) and clients, and each running `lspmux proxy` for its own. Exits 0 "
        "when the daemon answers within 1 s, 1 when it does not (the proxies still shown).",
    )
    add_status_options(status)  # `lspmux status` reads these without argparse too
    from lspmux.remote.cli import add_remote_options

    add_remote_options(status, mapping=False)

    stop = sub.add_parser(
        "stop",
        help="stop the daemon: its servers shut down cleanly (exit 1: no daemon runs)",
        description="Ask the daemon to stop: every client is disconnected and every server "
        "shut down, then the daemon exits. Returns once it is down: exit 0; 1 when no "
        "daemon runs at the address (nothing to stop); 2 when it did not stop in time.",
    )
    add_connect_options(stop)

    reload = sub.add_parser(
        "reload",
        help="reload the instance of this folder's workspace (--all: every instance)",
        description="Reload the shared instances whose workspace root contains DIR (default: "
        "the current folder), as the Rust lspmux does: rust-analyzer is sent "
        "rust-analyzer/reloadWorkspace (it re-reads the workspace and keeps its caches); a "
        "server without such a request is restarted, its open documents given to the new "
        "process. Exits 1, listing the instances, when no instance's root contains DIR.",
    )
    add_connect_options(reload)
    where = reload.add_mutually_exclusive_group()  # `read_reload` reads the same table
    where.add_argument("dir", nargs="?", type=Path, default=None, metavar="DIR")
    for option in RELOAD_OPTIONS:
        option.add_to(reload if option.dest == "restart" else where)


def _server(args: argparse.Namespace) -> int:
    from lspmux.cli_common import apply_limits, log_levels, run_loop, set_levels, setup_logging
    from lspmux.config.loader import ConfigError, load_config
    from lspmux.daemon.address import AddressError, load_token, resolve
    from lspmux.daemon.lifetime import idle_timeout
    from lspmux.daemon.server import Daemon, DaemonError
    from lspmux.dirs import user_config_file

    setup_logging(args.log_level, args.log_file)
    extra = list(args.config)
    try:
        config = load_config(None, extra)  # a bad file fails here, loudly
        address = resolve(args.listen, configured=config.listen)
        token = None if address.is_unix else load_token(args.token_file)
        idle = idle_timeout(args.idle_timeout)
    except (AddressError, ConfigError, ValueError) as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    apply_limits(config)
    set_levels(log_levels(args.log_level, config.log_filters))

    def load(root: Path | None):  # type: ignore[no-untyped-def]
        return load_config(root, extra)

    daemon = Daemon(
        address,
        load,
        token=token,
        config_file_hint=str(user_config_file()),
        tools=hosted_tools,
        idle_timeout=idle,
    )

    async def serve() -> int:
        try:
            return await daemon.run()
        except DaemonError as exc:
            print(f"lspmux: {exc}", file=sys.stderr)
            return 1

    return run_loop(serve())


def hosted_tools(socket_path: str | None, query: Query) -> HostedTools:
    """The agent tools the daemon runs for `lspmux <verb>`, made on the first `lspmux/tool`
    (imported then: the agent is not loaded by a daemon that never hosts a verb). Passed in
    from here, the command line, so that the daemon does not import the layer above it."""
    from lspmux.agent.hosted import HostedTools as AgentTools

    return AgentTools(socket_path, query)


def _client(args: argparse.Namespace) -> int:  # reached only through parse_args in tests
    from lspmux.daemon import shim

    return shim.main(sys.argv[2:])


def _where(args: argparse.Namespace) -> str:
    from lspmux.daemon.address import AddressError, resolve_client

    try:
        return str(resolve_client(args.connect))
    except AddressError:
        return str(args.connect)


def _daemon_request(args: argparse.Namespace, method: str, params: dict[str, object]) -> object:
    from lspmux.daemon.address import load_token, resolve_client
    from lspmux.daemon.dial import request

    address = resolve_client(args.connect)
    token = None if address.is_unix else load_token(args.token_file)
    timeout = {STATUS: 1.0, "lspmux/stop": STOP_TIMEOUT}.get(method, 120.0)
    return request(address, method, params, token=token, timeout=timeout)


def _status(args: argparse.Namespace) -> int:
    import json

    from lspmux.daemon.address import AddressError
    from lspmux.daemon.dial import ShimError
    from lspmux.daemon.status import no_daemon, render, render_proxies, render_verbose
    from lspmux.proxy_registry import running_proxies

    if args.remote or args.remote_exec:  # the daemon of another machine says it
        from lspmux.remote.cli import remote_status

        far = remote_status(args)
        if far is not None:
            return far
    proxies = running_proxies()
    try:
        result = _daemon_request(args, STATUS, {})
        documents = _daemon_request(args, "lspmux/documents", {}) if args.verbose else None
    except (OSError, ShimError, AddressError) as exc:
        where = _where(args)
        if args.json:  # the one shape: the daemon's keys, its pid null (docs/sharing.md)
            answer = {**no_daemon(where), "proxies": proxies}
            print(json.dumps({**answer, "documents": []} if args.verbose else answer, indent=2))
        elif proxies:  # shown, yet exit 1: scripts ask `status` whether a daemon runs
            print(f"no daemon answers at {where}\n\n{render_proxies(proxies)}")
        print(
            f"lspmux: no daemon answers at {where} ({exc}); start one with `lspmux server` "
            "(or let `lspmux client` start it), or name another with --connect / LSPMUX_ADDRESS",
            file=sys.stderr,
        )
        return 1
    status = result if isinstance(result, dict) else {}
    docs = documents.get("documents", []) if isinstance(documents, dict) else None
    if args.json:
        answer = {**status, "proxies": proxies}
        print(json.dumps(answer if docs is None else {**answer, "documents": docs}, indent=2))
    else:
        daemon = render(status) if docs is None else render_verbose(status, docs)
        print(f"{daemon}\n\n{render_proxies(proxies)}")
    return 0


#: How long `lspmux stop` waits for the daemon to shut its servers down.
STOP_TIMEOUT = 60.0


def _stop(args: argparse.Namespace) -> int:
    from lspmux.daemon.address import AddressError
    from lspmux.daemon.dial import ShimError

    where = _where(args)
    try:
        answer = _daemon_request(args, "lspmux/stop", {})
    except (FileNotFoundError, ConnectionRefusedError) as exc:
        print(f"lspmux: no daemon runs at {where} ({exc}): nothing to stop", file=sys.stderr)
        return 1
    except (OSError, ShimError, AddressError) as exc:
        print(
            f"lspmux: the daemon at {where} did not confirm it stopped within "
            f"{STOP_TIMEOUT:.0f}s ({exc}); see its log, or end it with SIGTERM",
            file=sys.stderr,
        )
        return 2
    pid = answer.get("pid") if isinstance(answer, dict) else None
    print(f"stopped the lspmux daemon at {where} (pid {pid}); its servers are shut down")
    return 0


#: `lspmux reload`'s own options (after the connect options), for both of its readers: argparse
#: (`add_daemon_commands`, where DIR, --root and --all exclude each other) and `read_reload`.
RELOAD_OPTIONS = (
    Option("--root", dest="root", metavar="DIR", help="the same as DIR"),
    Option("--all", dest="all", kind="flag", help="reload every instance"),
    Option(
        "--restart",
        dest="restart",
        kind="flag",
        help="restart the servers instead of a soft reload",
    ),
)


def read_reload(words: Sequence[str]) -> argparse.Namespace | None:
    """`lspmux reload`'s options (the words after `reload`) read without argparse; None when
    argparse must read them (help, a mistake, DIR / --root / --all given together)."""
    args = read_args(words, (*CONNECT_OPTIONS, *RELOAD_OPTIONS), rest="dir")
    if args is None or len(args.dir) + (args.root is not None) + args.all > 1:
        return None
    args.dir = args.dir[0] if args.dir else None
    return args


def fast_reload(words: Sequence[str]) -> int | None:
    """`lspmux reload …` without argparse (one request to the daemon: the standard library
    only); None when argparse must read the words."""
    args = read_reload(words)
    return None if args is None else _reload(args)


def _reload(args: argparse.Namespace) -> int:
    import os

    from lspmux.daemon.address import AddressError
    from lspmux.daemon.dial import ShimError

    params: dict[str, object] = {"restart": True} if args.restart else {}
    if args.all:
        params["all"] = True
    else:
        folder = args.dir or args.root
        params["cwd"] = os.path.realpath(folder) if folder is not None else os.getcwd()
    try:
        result = _daemon_request(args, "lspmux/reload", params)
    except (OSError, ShimError, AddressError) as exc:
        print(f"lspmux: reload failed: {str(exc).removeprefix('lspmux: ')}", file=sys.stderr)
        return 1
    rows = result.get("reloaded", []) if isinstance(result, dict) else []
    failed = False
    for row in rows:
        what = f"{row.get('server')} for {row.get('root')}"
        if row.get("error"):
            failed = True
            print(f"{what}: {row.get('method')} failed: {row['error']}", file=sys.stderr)
        elif row.get("method") == "restart":
            failed = failed or not row.get("running")
            print(f"restarted {what}: {'running' if row.get('running') else 'NOT running'}")
        else:
            print(f"reloaded {what} ({row.get('method')})")
    if not rows:
        print("no instance to reload")
    return 1 if failed else 0


DAEMON_COMMANDS = {
    "server": _server,
    "client": _client,
    "status": _status,
    "reload": _reload,
    "stop": _stop,
}
