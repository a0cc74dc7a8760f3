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


def test_the_proxy_start_path_imports_nothing_the_first_message_does_not_need() -> None:
    code = "import sys\nimport lspmux.cli, lspmux.config.loader, lspmux.proxy\nprint(' '.join(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    loaded = set(out.stdout.split())
    assert "lspmux.session.session" in loaded, out.stderr
    early = sorted(
        m for m in loaded if m.split(".")[0] in NOT_AT_START or m.startswith(LSPMUX_LATE)
    )
    assert not early, f"the proxy's start path imported {early}"
