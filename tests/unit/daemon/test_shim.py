"""The stdio shim (lspmux.daemon.shim): options, the lspMux rewrite, the byte pump, and the
promise that it imports nothing heavy."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from lspmux.daemon import client_options, shim
from lspmux.daemon.address import parse


def framed(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_parse_args_without_argparse() -> None:
    args = shim.parse_args(
        ["--connect", "unix:/x.sock", "--server-path=clangd", "--pass-env", "A", "--", "-v", "x"]
    )
    assert args is not None
    assert (args.connect, args.server_path, args.pass_env) == ("unix:/x.sock", "clangd", ["A"])
    assert args.server_args == ["-v", "x"]
    assert shim.parse_args(["--help"]) is None
    assert shim.parse_args(["--bogus"]) is None
    assert shim.parse_args(["--connect"]) is None


@pytest.mark.parametrize(
    "words",
    [
        ["--connect", "unix:/x", "--server-path", "ra", "--", "a"],
        ["--connect=tcp:h:1", "--token-file", "t", "--no-autostart", "srv-arg"],
        ["--ra-mux-server=clangd", "--pass-env", "A", "--pass-env=B", "--", "--x", "-y"],
        [],
    ],
)
def test_both_readers_of_the_one_option_table_agree(words: list[str]) -> None:
    fast = shim.parse_args(words)
    assert fast is not None
    assert vars(shim.build_parser(remote=False).parse_args(words)) == vars(fast)


def test_argparse_declares_the_same_options() -> None:
    ns = shim.build_parser().parse_args(["--connect", "unix:/x", "--server-path", "ra", "--", "a"])
    fast = shim.parse_args(["--connect", "unix:/x", "--server-path", "ra", "--", "a"])
    assert fast is not None
    for name in ("connect", "server_path", "server_args", "pass_env", "no_autostart"):
        assert getattr(ns, name) == getattr(fast, name), name


def _options(words: list[str], env: dict[str, str], *, rust: bool = False, addr: str = "unix:/s"):  # type: ignore[no-untyped-def]
    args = shim.parse_args(words)
    assert args is not None
    return shim.lspmux_options(
        args, rust_compat=rust, address=parse(addr), environ=env, token=env.get("LSPMUX_TOKEN")
    )


def test_when_the_shim_names_a_server() -> None:
    assert _options([], {}) is None  # `lspmux client`: route by file type, nothing to add
    by_env = _options([], {"LSPMUX_SERVER": "clangd"})
    assert by_env is not None and by_env["server"] == "clangd" and by_env["method"] == "connect"
    rust = _options([], {}, rust=True)  # bare `lspmux`: the Rust lspmux default
    assert rust is not None and rust["server"] == "rust-analyzer"
    given = _options(["--server-path", "ra", "--pass-env", "HOME", "--", "--x"], {"HOME": "/h"})
    assert given is not None
    assert (given["server"], given["args"], given["env"]) == ("ra", ["--x"], {"HOME": "/h"})
    assert given["cwd"] == os.getcwd() and given["version"] == "1"
    tcp = _options([], {"LSPMUX_TOKEN": "t"}, addr="tcp:127.0.0.1:9")
    assert tcp == {"version": "1", "token": "t"}


def test_pass_env_works_without_a_server() -> None:
    """`--pass-env` while routing by file type: the variables reach every server."""
    env = {"VIRTUAL_ENV": "/p/.venv", "OTHER": "x"}
    routed = _options(["--pass-env", "VIRTUAL_ENV", "--pass-env", "MISSING"], env)
    assert routed is not None and "server" not in routed
    assert routed["method"] == "connect" and routed["env"] == {"VIRTUAL_ENV": "/p/.venv"}
    assert routed["cwd"] == os.getcwd()
    assert _options(["--pass-env", "MISSING"], env) is None  # nothing to pass: nothing added


def test_rewrite_initialize_adds_lspmux_and_keeps_the_rest() -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"initializationOptions": {"keep": 1}, "capabilities": {}},
    }
    out = shim.rewrite_initialize(json.dumps(init).encode(), {"version": "1", "server": "x"})
    head, _, body = out.partition(b"\r\n\r\n")
    assert head == b"Content-Length: %d" % len(body)
    msg = json.loads(body)
    assert msg["params"]["initializationOptions"] == {
        "keep": 1,
        "lspMux": {"version": "1", "server": "x"},
    }
    other = json.dumps({"jsonrpc": "2.0", "method": "initialized"}).encode()
    assert shim.rewrite_initialize(other, {"version": "1"}).endswith(other)


def test_read_first_returns_the_first_message_and_what_follows() -> None:
    r, w = os.pipe()
    first = framed({"id": 1, "method": "initialize"})
    second = framed({"method": "initialized"})
    os.write(w, first[:7])
    threading.Timer(0.05, lambda: (os.write(w, first[7:] + second[:5]), os.close(w))).start()
    got = shim.read_first(r)
    assert got is not None
    assert json.loads(got[0]) == {"id": 1, "method": "initialize"}
    assert got[1] == second[:5]
    assert shim.read_first(r) is None
    os.close(r)


def test_pump_copies_both_ways_until_the_daemon_closes() -> None:
    ours, daemon_side = socket.socketpair()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    result: list[int] = []
    t = threading.Thread(target=lambda: result.append(shim.pump(ours, b"FIRST", in_r, out_w)))
    t.start()
    os.write(in_w, b"from-editor")
    os.close(in_w)  # the editor leaves: the daemon sees end of input
    received = b""
    while True:
        data = daemon_side.recv(100)
        if not data:
            break
        received += data
    assert received == b"FIRSTfrom-editor"
    daemon_side.sendall(b"from-daemon")
    daemon_side.close()
    t.join(5)
    os.close(out_w)
    assert os.read(out_r, 100) == b"from-daemon"
    assert result == [0]


def test_read_first_exact_reads_nothing_past_the_first_message() -> None:
    """What follows the first message stays in the pipe for the daemon, which reads the
    editor's stdin itself once it was passed."""
    r, w = os.pipe()
    first = framed({"id": 1, "method": "initialize"})
    second = framed({"method": "initialized"})
    os.write(w, first + second)
    got = shim.read_first(r, exact=True)
    assert got is not None and json.loads(got[0])["method"] == "initialize" and got[1] == b""
    assert os.read(r, 1000) == second
    os.close(r)
    os.close(w)


class PassingShim:
    """`shim.pump` offering stdio, in a thread, against the test as its daemon: the test's
    end of the socket, and the editor's ends of the shim's stdin and stdout pipes."""

    def __init__(self) -> None:
        ours, self.daemon = socket.socketpair()
        self.in_r, self.to_shim = os.pipe()
        self.from_shim, self.out_w = os.pipe()
        self.code: list[int] = []
        self.thread = threading.Thread(
            target=lambda: self.code.append(
                shim.pump(ours, b"FIRST", self.in_r, self.out_w, passing=True)
            )
        )
        self.thread.start()
        data, self.fds, _flags, _addr = socket.recv_fds(self.daemon, 100, 2)
        assert data == b"FIRST" and len(self.fds) == 2

    def end(self) -> int:
        """The editor leaves, then the daemon closes the connection: the shim's exit code.
        A copying shim's stdin thread must have ended before its descriptors are closed: a
        thread left reading would read whatever reuses their numbers (the next test's
        socket, once)."""
        os.close(self.to_shim)
        if not self.fds:  # copying: its stdin thread ends at the editor's end, and says so
            assert self.daemon.recv(100) == b""
        self.daemon.close()
        self.thread.join(5)
        for fd in (self.in_r, self.from_shim, self.out_w, *self.fds):
            os.close(fd)
        [code] = self.code
        return code


def test_a_daemon_that_does_not_take_stdio_is_relayed_to() -> None:
    """A daemon that drops the passed descriptors (one from before stdio passing, or one that
    cannot use them) answers over the socket: the shim copies both ways as before."""
    run = PassingShim()
    for fd in run.fds:  # an old daemon's plain recv: the kernel closes them
        os.close(fd)
    run.fds = []
    run.daemon.sendall(b"Content-Length: 2\r\n\r\n{}")
    assert os.read(run.from_shim, 100) == b"Content-Length: 2\r\n\r\n{}"
    os.write(run.to_shim, b"from-editor")  # now the shim reads stdin and copies it
    assert run.daemon.recv(100) == b"from-editor"
    assert run.end() == 0


def test_a_daemon_that_takes_stdio_leaves_the_shim_waiting_for_its_end() -> None:
    run = PassingShim()
    run.daemon.sendall(shim.STDIO_TAKEN[:5])  # the word may come in pieces
    run.daemon.sendall(shim.STDIO_TAKEN[5:])
    os.write(run.to_shim, b"for-the-daemon")
    assert os.read(run.fds[0], 100) == b"for-the-daemon"  # the shim did not read it
    os.write(run.fds[1], b"for-the-editor")
    assert os.read(run.from_shim, 100) == b"for-the-editor"
    assert run.thread.is_alive()
    assert run.end() == 0  # the session ended


def test_stdio_is_passed_only_where_the_daemons_loop_can_serve_it(tmp_path: Path) -> None:
    r, w = os.pipe()
    a, b = socket.socketpair()
    c, d = socket.socketpair()
    path = tmp_path / "file"
    path.write_text("")
    file = os.open(path, os.O_RDONLY)
    try:
        assert shim.passable(r, w)  # an editor's pipes
        assert shim.passable(a.fileno(), c.fileno())  # libuv's: a socket pair per stream
        assert not shim.passable(a.fileno(), a.fileno())  # socat's EXEC: one for both
        assert not shim.passable(file, w)  # `lspmux client < requests`
        assert not shim.passable(r, 12345)  # closed
    finally:
        for fd in (r, w, file):
            os.close(fd)
        for s in (a, b, c, d):
            s.close()


def test_run_if_client_decides_by_the_first_word(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[list[str], bool]] = []
    monkeypatch.setattr(
        shim, "main", lambda argv, rust_compat=False: calls.append((list(argv), rust_compat)) or 0
    )
    assert shim.run_if_client(["client", "--connect", "unix:/x"]) == 0
    assert shim.run_if_client(["--server-path", "clangd"]) == 0
    assert shim.run_if_client(["proxy"]) is None
    assert shim.run_if_client(["--help"]) is None
    assert shim.run_if_client(["status"]) is None
    assert calls == [(["--connect", "unix:/x"], False), (["--server-path", "clangd"], True)]


HEAVY = ("asyncio", "lsprotocol", "orjson", "attrs", "logging", "lspmux.config", "lspmux.session")
HEAVY += ("argparse", "typing", "pathlib", "platformdirs")


@pytest.mark.parametrize("entry", ["-m lspmux client", "lspmux.cli"])
def test_the_client_path_imports_nothing_heavy(entry: str, tmp_path: Path) -> None:
    # Run the real entry points against a missing daemon, then list what got imported.
    probe = (
        "import atexit, sys, runpy\n"
        "before = set(sys.modules)\n"
        # at exit: a process with nothing registered there ends without its teardown (cli.main)
        "atexit.register(lambda: print(' '.join(sorted(set(sys.modules) - before))))\n"
        "sys.argv = ['lspmux', 'client', '--no-autostart', '--connect', 'unix:/nonexistent/s']\n"
        "try:\n"
        + (
            "    runpy.run_module('lspmux', run_name='__main__')\n"
            if entry.startswith("-m")
            else "    from lspmux.cli import main; main()\n"
        )
        + "except SystemExit:\n    pass\n"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", probe],  # no site: no editable install's hook (pathlib …)
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    loaded = set(out.stdout.split())
    assert "lspmux.daemon.shim" in loaded, out.stderr
    heavy = {m for m in loaded if m.startswith(HEAVY)}
    assert not heavy, f"the client imported {sorted(heavy)}"


def test_connect_options_before_a_command_stay_that_command() -> None:
    assert shim.command_first(["--connect", "unix:/x", "status"]) == [
        "status",
        "--connect",
        "unix:/x",
    ]
    assert shim.command_first(["--connect=unix:/x", "--token-file", "t", "reload", "D"]) == [
        "reload",
        "--connect=unix:/x",
        "--token-file",
        "t",
        "D",
    ]
    assert shim.command_first(["--connect", "unix:/x", "client"])[0] == "client"
    assert shim.command_first(["--connect", "unix:/x", "stop"]) == ["stop", "--connect", "unix:/x"]
    # a server's arguments are not commands
    assert shim.command_first(["--server-path", "x", "status"]) == ["--server-path", "x", "status"]
    assert shim.command_first(["status"]) == ["status"]


@pytest.mark.parametrize("value", [b"7" * 4301, b"+5", b"x", b""])
def test_a_first_message_with_a_junk_length_is_an_error_not_a_traceback(value: bytes) -> None:
    r, w = os.pipe()
    os.write(w, b"Content-Length: " + value + b"\r\n\r\n{}")
    os.close(w)
    with pytest.raises(shim.ShimError, match="the client's first message"):
        shim.read_first(r)
    os.close(r)


@pytest.mark.parametrize(
    "words",
    [
        [],
        ["--json"],
        ["-v", "--connect", "unix:/x"],
        ["--verbose", "--json", "--connect=tcp:127.0.0.1:1", "--token-file", "t"],
    ],
)
def test_both_readers_of_the_status_options_agree(words: list[str]) -> None:
    from lspmux.cli import build_parser

    fast = client_options.parse_status_args(words)
    assert fast is not None
    parsed = vars(build_parser(agent_help=False).parse_args(["status", *words]))
    assert parsed.pop("command") == "status"
    assert parsed == vars(fast)


@pytest.mark.parametrize(
    "words", [["--help"], ["-x"], ["--json=1"], ["--connect"], ["extra"], ["--remote", "ssh://h/p"]]
)
def test_status_leaves_help_mistakes_and_remotes_to_argparse(words: list[str]) -> None:
    assert client_options.parse_status_args(words) is None
