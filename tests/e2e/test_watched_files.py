"""Servers hear about files changing on disk, through lspmux, with real `ruff server`.

ruff registers watchers for `**/pyproject.toml`, `**/ruff.toml`, `**/.ruff.toml`. A client that
takes dynamic watched-file registrations (VS Code) gets them relayed, under lspmux's own ids,
and its file events reach ruff; a client that does not (Neovim's profile here) is served by
lspmux's own watcher. Either way, editing ruff.toml on disk changes ruff's diagnostics for an
open file without reopening it. Before: the registrations stopped at the backend and nothing
watched, so ruff kept its old configuration until restarted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t

from .conftest import Proxy, eventually

pytestmark = pytest.mark.e2e

CODE = "import os\nx = 1;\n"  # F401 (unused import) and E703 (useless semicolon)


def ruff_codes(diags: list[t.Diagnostic]) -> set[str]:
    return {str(d.code) for d in diags if (d.source or "").lower() == "ruff"}


async def test_lspmux_watches_for_a_client_that_does_not(
    proxy_factory: Any, workspace: Path
) -> None:
    (workspace / "ruff.toml").write_text('[lint]\nselect = ["F"]\n')
    proxy: Proxy = await proxy_factory(capabilities="neovim")
    uri = proxy.open("watched.py", "python", text=CODE)
    await proxy.diagnostics_where(uri, lambda ds: ruff_codes(ds) == {"F401"})
    (workspace / "ruff.toml").write_text('[lint]\nselect = ["E7"]\n')
    await proxy.diagnostics_where(uri, lambda ds: ruff_codes(ds) == {"E703"}, timeout=30)
    # ruff's watchers never reached this client: lspmux watched for it.
    assert not [
        p
        for m, p in proxy.server_requests
        if m == t.CLIENT_REGISTER_CAPABILITY
        and any(r.method == t.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in p.registrations)
    ]


async def test_a_client_that_watches_gets_the_servers_watchers(
    proxy_factory: Any, workspace: Path
) -> None:
    (workspace / "ruff.toml").write_text('[lint]\nselect = ["F"]\n')
    proxy: Proxy = await proxy_factory(capabilities="visual-studio-code")
    uri = proxy.open("watched.py", "python", text=CODE)
    await proxy.diagnostics_where(uri, lambda ds: ruff_codes(ds) == {"F401"})

    def watchers() -> list[Any]:
        return [
            r
            for m, p in proxy.server_requests
            if m == t.CLIENT_REGISTER_CAPABILITY
            for r in p.registrations
            if r.method == t.WORKSPACE_DID_CHANGE_WATCHED_FILES
        ]

    [registration] = await eventually(watchers, "ruff's watchers relayed to the client", timeout=30)
    globs = str(registration.register_options)
    assert "ruff.toml" in globs and "pyproject.toml" in globs
    assert registration.id.startswith("lspmux")  # an id lspmux minted, not ruff's
    # The client (as a watching editor would) reports the change; ruff hears of it.
    (workspace / "ruff.toml").write_text('[lint]\nselect = ["E7"]\n')
    proxy.client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(
            [t.FileEvent(uri=(workspace / "ruff.toml").as_uri(), type=t.FileChangeType.Changed)]
        )
    )
    await proxy.diagnostics_where(uri, lambda ds: ruff_codes(ds) == {"E703"}, timeout=30)
