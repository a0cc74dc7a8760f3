"""The Rust lspmux's command-line names and configuration, as `python -m lspmux` obeys them.

Each subprocess runs with private XDG folders (config, runtime, data), so neither the user's
files nor a running daemon of theirs are seen. docs/sharing.md's table against the Rust
lspmux names these tests for its rows marked "same".
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lspmux import __version__
from lspmux.backends.pool import Pool
from lspmux.cli_common import log_levels
from lspmux.config.loader import load_config
from lspmux.config.model import ServerConfig
from lspmux.daemon import reload, shim
from lspmux.daemon.address import parse
from lspmux.daemon.server import Daemon


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    runtime = Path(tempfile.mkdtemp(prefix="lmxr-", dir="/tmp"))  # short: socket paths
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("LSPMUX_", "RA_MUX"))}
    environ.pop("RUST_LOG", None)
    environ.update(
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_RUNTIME_DIR=str(runtime),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    yield environ
    shutil.rmtree(runtime, ignore_errors=True)


def user_config(env: dict[str, str], text: str) -> Path:
    path = Path(env["XDG_CONFIG_HOME"]) / "lspmux" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def lspmux(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lspmux", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


# -- names ---------------------------------------------------------------------------------


def test_ra_mux_server_and_its_option_name_the_server() -> None:
    def server(words: list[str], environ: dict[str, str]) -> str | None:
        args = shim.parse_args(words)
        assert args is not None
        options = shim.lspmux_options(
            args, rust_compat=False, address=parse("unix:/s"), environ=environ, token=None
        )
        return None if options is None else options["server"]

    assert server([], {"RA_MUX_SERVER": "/opt/ra"}) == "/opt/ra"
    assert server([], {"RA_MUX_SERVER": "/opt/ra", "LSPMUX_SERVER": "/new/ra"}) == "/new/ra"
    assert server(["--ra-mux-server", "clangd"], {"LSPMUX_SERVER": "x"}) == "clangd"
    assert server(["--ra-mux-server=clangd"], {}) == "clangd"
    parsed = shim.build_parser().parse_args(["--ra-mux-server", "clangd", "--", "-a"])
    assert parsed.server_path == "clangd" and parsed.server_args == ["-a"]


def test_version_and_help_as_clap_has_them(env: dict[str, str]) -> None:
    for flag in ("-V", "--version"):
        out = lspmux(env, flag)
        assert (out.returncode, out.stdout) == (0, f"lspmux {__version__}\n"), out.stderr
    out = lspmux(env, "help", "status")
    assert out.returncode == 0 and out.stdout.startswith("usage: lspmux status"), out.stderr
    assert "--verbose" in out.stdout
    out = lspmux(env, "help", "reload")
    assert out.returncode == 0 and "--all" in out.stdout
    out = lspmux(env, "help")
    assert out.returncode == 0 and "usage: lspmux" in out.stdout and "reload" in out.stdout
    out = lspmux(env, "help", "hover")
    assert out.returncode == 0 and out.stdout.startswith("usage: lspmux hover"), out.stderr


@pytest.mark.parametrize("command", ["config", "capabilities"])
def test_a_closed_stdout_ends_quietly(env: dict[str, str], tmp_path: Path, command: str) -> None:
    """`lspmux config | head`: the reader is gone before anything is written. (`capabilities`
    runs a private `lspmux proxy`, which closes its own stdout at the end: no error either.)"""
    read, write = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "lspmux", command],
        cwd=str(tmp_path),
        env=env,
        stdout=write,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    os.close(write)
    os.close(read)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()


def test_status_exits_non_zero_without_a_daemon(env: dict[str, str]) -> None:
    out = lspmux(env, "status")
    assert out.returncode == 1 and "no daemon answers" in out.stderr


# -- RUST_LOG and log_filters --------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "environ", "filters", "expected"),
    [
        (None, {}, None, {"lspmux": "info"}),
        (None, {}, "warn", {"lspmux": "warning"}),
        (None, {"RUST_LOG": "debug"}, "warn", {"lspmux": "debug"}),  # RUST_LOG wins
        (
            None,
            {"RUST_LOG": "lspmux::daemon=trace"},
            None,
            {"lspmux.daemon": "debug", "lspmux": "info"},
        ),
        (None, {"RUST_LOG": "x=nonsense"}, "error", {"lspmux": "error"}),  # passed over
        (None, {"LSPMUX_LOG": "warning", "RUST_LOG": "debug"}, None, {"lspmux": "warning"}),
        (None, {"LSPMUX_LOG": "loud", "RUST_LOG": "debug"}, None, {"lspmux": "debug"}),
        ("error", {"RUST_LOG": "debug"}, "debug", {"lspmux": "error"}),  # the flag wins
    ],
)
def test_log_levels_come_from_the_flag_lspmux_log_rust_log_then_log_filters(
    flag: str | None, environ: dict[str, str], filters: str | None, expected: dict[str, str]
) -> None:
    assert log_levels(flag, filters, environ) == expected


# -- listen and connect from the Rust file -------------------------------------------------


@pytest.fixture
def served(env: dict[str, str]) -> Iterator[tuple[dict[str, str], Path]]:
    """`lspmux server` started with no address: it takes `listen` from the user file."""
    sock = Path(env["XDG_RUNTIME_DIR"]) / "mux" / "ra-mux.sock"
    user_config(env, f'listen = "{sock}"\nconnect = "{sock}"\ninstance_timeout = false\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "lspmux", "server"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not sock.exists():
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the daemon did not listen on `listen`"
            time.sleep(0.05)
        yield env, sock
    finally:
        proc.terminate()
        proc.wait(20)


def test_the_daemon_listens_on_listen_and_clients_find_it_at_connect(
    served: tuple[dict[str, str], Path],
) -> None:
    env, sock = served
    out = lspmux(env, "status")  # no --connect: the file's `connect`
    assert out.returncode == 0, out.stderr
    assert f"on unix:{sock}" in out.stdout
    assert lspmux(env, "status", "--json").returncode == 0
    assert '"instance_timeout": null' in lspmux(env, "status", "--json").stdout
    # the command line and LSPMUX_ADDRESS still win over the file
    elsewhere = {**env, "LSPMUX_ADDRESS": f"unix:{sock}.other"}
    assert lspmux(elsewhere, "status").returncode == 1


def test_a_bad_connect_is_named_with_its_file(env: dict[str, str]) -> None:
    path = user_config(env, 'connect = "relative.sock"\n')
    out = lspmux(env, "status")
    assert out.returncode == 1
    assert f"{path}: connect: 'relative.sock': a socket path must be absolute" in out.stderr


# -- instance_timeout = false, gc_interval ---------------------------------------------------


def test_instance_timeout_false_keeps_instances_and_gc_interval_paces_the_checks(
    tmp_path: Path,
) -> None:
    def daemon(text: str) -> Daemon:
        path = tmp_path / "c.toml"
        path.write_text(text)
        config = load_config(None, [path], user_config=None)
        return Daemon(parse(f"unix:{tmp_path}/s.sock"), lambda _root: config)

    never = daemon("instance_timeout = false\ngc_interval = 2\n")
    backend = never.pool.get(ServerConfig(name="s", command=(sys.executable,)), tmp_path)
    assert backend is not None
    assert never.reap(0.0) == [] and never.reap(10.0**9) == []
    assert never.pool.backends and never.reap_interval() == 2.0
    assert daemon("").reap_interval() == 10.0  # the Rust default gc_interval
    assert daemon("instance_timeout = 1\n").reap_interval() == 0.25  # a short timeout is kept
    assert daemon("instance_timeout = 300\ngc_interval = 60\n").reap_interval() == 60.0


# -- which instances a reload concerns -------------------------------------------------------


def test_reload_picks_each_servers_innermost_instance_containing_the_folder(
    tmp_path: Path,
) -> None:
    pool = Pool(shared=True)
    outer, inner, other = tmp_path / "ws", tmp_path / "ws" / "b", tmp_path / "other"
    for folder in (outer / "b" / "src", other):
        folder.mkdir(parents=True)
    ra = ServerConfig(name="rust-analyzer", command=("rust-analyzer",))
    clangd = ServerConfig(name="clangd", command=("clangd",))
    made = {
        (s.name, str(r)): pool.get(s, r)
        for s, r in ((ra, outer), (ra, inner), (clangd, outer), (ra, other))
    }
    backends = list(pool.backends.values())
    chosen = reload.for_folder(backends, str(inner / "src"))
    assert {(b.name, str(b.root)) for b in chosen} == {
        ("rust-analyzer", str(inner)),
        ("clangd", str(outer)),
    }
    assert reload.for_folder(backends, str(outer)) == [
        made[("rust-analyzer", str(outer))],
        made[("clangd", str(outer))],
    ]
    assert reload.for_folder(backends, str(tmp_path / "w")) == []  # "ws" is no prefix of "w"
    message = reload.no_instance(str(tmp_path), backends).message
    assert f"no instance's workspace root contains {tmp_path}" in message
    assert f"clangd for {outer}" in message and f"rust-analyzer for {other}" in message
    assert "the daemon runs no instance" in reload.no_instance("/x", []).message
    assert reload.soft_method(made[("rust-analyzer", str(outer))]) == (
        "rust-analyzer/reloadWorkspace"
    )
    assert reload.soft_method(made[("clangd", str(outer))]) is None


async def test_the_rust_reload_handshake_answers_no_instance_found(running: Daemon) -> None:
    """The Rust client's `reload`: `initialize` with `lspMux.method = "reload"` and its cwd."""
    from tests.unit.daemon.test_server import exchange, framed

    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "initializationOptions": {"lspMux": {"version": "1", "method": "reload", "cwd": "/x"}}
        },
    }
    reply, _ = await exchange(running, framed(init))
    assert reply is not None and reply["id"] == 0
    assert "no instance's workspace root contains /x" in reply["error"]["message"]
    await asyncio.sleep(0)


NO_SUCH_METHOD = """\
import json, sys
def read():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        if not line.strip():
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))
def write(msg):
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    sys.stdout.buffer.flush()
while True:
    msg = read()
    if msg.get("method") == "exit":
        sys.exit(0)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        write({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {}}})
    elif msg["method"] == "shutdown":
        write({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    else:
        write({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
"""


async def test_a_server_without_the_reload_request_is_restarted_instead(tmp_path: Path) -> None:
    """A server named rust-analyzer that answers "method not found" is restarted; one that
    answers the request keeps its process (tests/servers/scripted.py answers null)."""
    scripted = Path(__file__).resolve().parents[2] / "servers" / "scripted.py"
    script = tmp_path / "no_such_method.py"
    script.write_text(NO_SUCH_METHOD)
    (tmp_path / "other").mkdir()
    pool = Pool(shared=True)
    refusing = pool.get(
        ServerConfig(name="rust-analyzer", command=(sys.executable, str(script))), tmp_path
    )
    answering = pool.get(
        ServerConfig(name="rust-analyzer", command=(sys.executable, str(scripted), "hang")),
        tmp_path / "other",
    )
    assert refusing is not None and answering is not None
    try:
        assert await refusing.ensure_running() and await answering.ensure_running()
        before = (refusing.pid, answering.pid)
        restarted = await reload.reload_one(refusing, restart=False)
        assert restarted["method"] == reload.RESTART and restarted["running"] is True
        assert refusing.pid != before[0] and refusing.state == "running"
        soft = await reload.reload_one(answering, restart=False)
        assert soft["method"] == "rust-analyzer/reloadWorkspace" and soft["running"] is True
        assert answering.pid == before[1]
        forced = await reload.reload_one(answering, restart=True)
        assert forced["method"] == reload.RESTART and answering.pid != before[1]
    finally:
        await pool.stop_all()
