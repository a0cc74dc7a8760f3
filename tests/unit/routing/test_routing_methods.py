"""lspmux's own method-name constants are lsprotocol's, spelled out; the proxy's start path
imports none of what the first message does not need (lsprotocol alone costs ~340 ms)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as t

from lspmux.backends import client_caps
from lspmux.routing import methods

ROOT = Path(__file__).resolve().parents[3]

OURS = {k: v for k, v in vars(methods).items() if k.isupper()}


@pytest.mark.parametrize(("name", "value"), sorted(OURS.items()))
def test_each_constant_is_lsprotocols_own(name: str, value: str) -> None:
    assert getattr(t, name) == value


def test_semantic_token_legend_is_lsprotocols() -> None:
    assert tuple(v.value for v in t.SemanticTokenTypes) == client_caps.SEMANTIC_TOKEN_TYPES
    assert tuple(v.value for v in t.SemanticTokenModifiers) == client_caps.SEMANTIC_TOKEN_MODIFIERS


#: What `lspmux proxy` must not load before it reads the client's first message: each is loaded
#: where it is used (typed objects, `locate/*`, a linter to kill, a watched folder, the agent).
NOT_AT_START = ("lsprotocol", "cattrs", "mcp", "watchfiles", "psutil", "ctypes")
LSPMUX_LATE = ("lspmux.locate", "lspmux.agent.mcp_server", "lspmux.daemon.admission")
LSPMUX_LATE += ("lspmux.diagnostics.linters.generic",)


def _modules_after(code: str) -> set[str]:
    """The modules loaded once `code` ran (it prints them) in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return set(out.stdout.split())


def test_the_proxy_start_path_imports_nothing_the_first_message_does_not_need() -> None:
    # what run_proxy imports once the first message is read and the servers are spawned
    code = (
        "import sys\nimport lspmux.cli, lspmux.config.loader, lspmux.proxy\n"
        "import lspmux.backends.adopt, lspmux.backends.pool, lspmux.session.session\n"
        "import lspmux.serving, lspmux.wire.stdio\nprint(' '.join(sorted(sys.modules)))\n"
    )
    loaded = _modules_after(code)
    assert "lspmux.session.session" in loaded
    early = sorted(
        m for m in loaded if m.split(".")[0] in NOT_AT_START or m.startswith(LSPMUX_LATE)
    )
    assert not early, f"the proxy's start path imported {early}"


#: What `lspmux proxy` does not load before it has read the client's first message: the
#: configuration (attrs), asyncio, logging, the session and the backends come after it
#: (proxy.py).
NOT_BEFORE_READING = ("attrs", "attr", "asyncio", "tomllib", "uvloop", "logging", "subprocess")
LSPMUX_AFTER_READING = ("lspmux.config", "lspmux.session", "lspmux.backends", "lspmux.routing")


def test_the_proxy_reads_the_first_message_before_loading_the_rest() -> None:
    """`lspmux proxy` run as the command runs it, stopped where it reads its first message."""
    code = (
        "import sys\nimport lspmux.proxy\n"
        "def read_first(fd):\n"
        "    print(' '.join(sorted(sys.modules)), flush=True)\n"
        "    raise SystemExit(0)\n"
        "lspmux.proxy.read_first = read_first\n"
        "from lspmux.cli import main\n"
        "main(['proxy'])\n"
    )
    loaded = _modules_after(code)
    assert "lspmux.proxy" in loaded and "lspmux.cli" in loaded
    early = sorted(
        m
        for m in loaded
        if m.split(".")[0] in NOT_BEFORE_READING or m.startswith(LSPMUX_AFTER_READING)
    )
    assert not early, f"`lspmux proxy` imported {early} before reading the first message"


#: What `lspmux proxy` does not load before it spawns the servers the workspace needs (their
#: boot starts there, and what lspmux loads before it delays them all: issue 21's first start):
#: argparse and the full command line, the client shim's socket, platformdirs (`lspmux.dirs`'
#: plain XDG rule), attrs (the config model is dataclasses), the routing table, asyncio.
NOT_BEFORE_SPAWNING = ("attrs", "attr", "argparse", "socket", "platformdirs", "asyncio", "uvloop")
NOT_BEFORE_SPAWNING += ("difflib", "tempfile", "lsprotocol", "cattrs")
LSPMUX_AFTER_SPAWNING = ("lspmux.routing.route", "lspmux.routing.table", "lspmux.session")
LSPMUX_AFTER_SPAWNING += ("lspmux.daemon", "lspmux.agent", "lspmux.backends.pool")


def test_the_proxy_spawns_the_servers_before_loading_the_rest(tmp_path: Path) -> None:
    """`lspmux proxy` run as the command runs it, on a workspace with a Python file, stopped
    where it spawns the servers."""
    (tmp_path / "app.py").write_text("x = 1\n")
    home = tmp_path / "home"
    home.mkdir()
    code = (
        "import sys\nimport lspmux.proxy\n"
        "def spawn_needed(config, roots, params):\n"
        "    print(' '.join(sorted(sys.modules)), flush=True)\n"
        "    raise SystemExit(0)\n"
        "lspmux.proxy.spawn_needed = spawn_needed\n"
        "from lspmux.cli import main\n"
        "main(['proxy', '--log-level', 'debug', '--log-file', sys.argv[1]])\n"
    )
    body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, '
        f'"rootUri": "{tmp_path.as_uri()}", "capabilities": {{}}}}}}'
    ).encode()
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "proxy.log")],
        input=b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
        capture_output=True, cwd=tmp_path, check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(home)},
    )  # fmt: skip
    loaded = set(out.stdout.decode().split())
    assert {"lspmux.config.loader", "lspmux.config.needs"} <= loaded, out.stderr
    early = sorted(
        m
        for m in loaded
        if m.split(".")[0] in NOT_BEFORE_SPAWNING or m.startswith(LSPMUX_AFTER_SPAWNING)
    )
    assert not early, f"`lspmux proxy` imported {early} before spawning the servers"
