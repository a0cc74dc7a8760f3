"""A server's configured `settings` reach the real pylsp (python-lsp-server) through `lspmux
proxy`. pylsp never asks for its settings (`workspace/configuration`): it takes them only from
`workspace/didChangeConfiguration`, which lspmux pushes after `initialized` unless the server
asks for everything configured (lspmux.backends.lifecycle, the pulled-sections record in the
cache). So the push must happen on the first start here (empty cache: lspmux watches what the
server asks for and records it) and on every later one (the record says: nothing).

What shows that the settings arrived: `pylsp.plugins.pycodestyle.maxLineLength = 200` silences
pycodestyle's E501 on an 86-character line, while pyflakes still reports the file's unused
import (so pylsp did lint the file, with those settings). The control run, without the
setting, gets E501 for the same file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t

from lspmux.backends.capabilities import load_pulled
from tests.e2e.conftest import Proxy, proxy_env, stop_proxy
from tests.tools import require_tool

#: pylsp alone on .py files (the other Python servers off), so that every diagnostic is its.
PYLSP_ONLY = """
[servers.pylsp]
disabled = false

[servers.basedpyright]
disabled = true

[servers.pyright]
disabled = true

[servers.ruff]
disabled = true
"""

#: pylsp's key (python-lsp-server's CONFIGURATION.md): pycodestyle's max-line-length.
LONG_LINES_ALLOWED = (
    PYLSP_ONLY
    + """
[servers.pylsp.settings]
pylsp = { plugins = { pycodestyle = { maxLineLength = 200 } } }
"""
)

#: An unused import (pyflakes) and a line of 86 characters (pycodestyle E501 at 79).
SOURCE = (
    "import os\n"
    "\n"
    "\n"
    "def greet(name):\n"
    '    return "hello, " + name + ", this line is longer than the seventy-nine characters"\n'
)


class Published(dict[str, Any]):
    """The client's diagnostics by uri (pytest-lsp keeps the last publication of each) that
    also keeps every publication, in order: no E501 may have been published at any time."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[tuple[str, list[t.Diagnostic]]] = []

    def __setitem__(self, uri: str, diags: Any) -> None:
        self.history.append((uri, list(diags)))
        super().__setitem__(uri, diags)


def e501(diags: list[t.Diagnostic]) -> list[t.Diagnostic]:
    return [d for d in diags if d.source == "pycodestyle" and d.code == "E501"]


def unused_import(diags: list[t.Diagnostic]) -> bool:
    return any(d.source == "pyflakes" and "'os' imported but unused" in d.message for d in diags)


async def lint(proxy: Proxy) -> tuple[list[t.Diagnostic], list[list[t.Diagnostic]]]:
    """Open the file and wait for the publication of pylsp's lint run (pyflakes and
    pycodestyle come in one publication): that one, and every one of the file until then."""
    proxy.client.diagnostics = published = Published()
    uri = proxy.open("greet.py", "python", SOURCE)
    diags = await proxy.diagnostics_where(uri, unused_import)
    assert {u for u, _ in published.history} == {uri}
    return diags, [ds for _, ds in published.history]


def pulled(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> frozenset[str] | None:
    """What the cache of the proxy's `env` records pylsp asked for (None: no record, pylsp
    never started with it)."""
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    return load_pulled("pylsp")


async def test_settings_reach_pylsp_on_its_first_and_later_starts(
    proxy_factory: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_tool("pylsp")
    env = proxy_env(tmp_path)
    assert pulled(env, monkeypatch) is None  # an empty cache: pylsp's first start here
    first: Proxy = await proxy_factory(config=LONG_LINES_ALLOWED, env=env)
    diags, history = await lint(first)
    assert not e501(diags) and not [ds for ds in history if e501(ds)], history
    # The first start recorded that pylsp asked for no section (it never pulls its settings).
    assert pulled(env, monkeypatch) == frozenset()
    await stop_proxy(first, tmp_path)

    # Restarted on the same cache: the record is read, and the settings are pushed again.
    second: Proxy = await proxy_factory(config=LONG_LINES_ALLOWED, env=env)
    diags, history = await lint(second)
    assert not e501(diags) and not [ds for ds in history if e501(ds)], history
    assert pulled(env, monkeypatch) == frozenset()


async def test_without_the_setting_pylsp_reports_the_long_line(
    proxy_factory: Callable[..., Any],
) -> None:
    """The control: the same file, pylsp without maxLineLength, gets E501 on line 5."""
    require_tool("pylsp")
    proxy: Proxy = await proxy_factory(config=PYLSP_ONLY)
    diags, _history = await lint(proxy)
    assert [d.range.start.line for d in e501(diags)] == [4], diags
