"""The delta bridge against a real basedpyright, which has no semantic token deltas of its own
(it answers `semanticTokens/full/delta` with -32601, which froze Neovim's highlighting): lspmux
asks it for full results and hands the client edits that rebuild the new tokens."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types as t

from lspmux.backends.backend import Backend
from lspmux.backends.client_caps import LSPMUX_CLIENT_CAPABILITIES
from lspmux.backends.documents import HeldText
from lspmux.config.model import ServerConfig
from lspmux.errors import JsonRpcError
from lspmux.routing import semantic_tokens as st_
from tests.unit.backends.helpers import NullHost

pytestmark = pytest.mark.skipif(
    shutil.which("basedpyright-langserver") is None, reason="basedpyright is not installed"
)

BEFORE = "import os\n\n\nclass A:\n    def f(self, x: int) -> int:\n        return x\n"
AFTER = "import os\n\n\nclass A:\n    def f(self, x: int) -> int:\n        y = os.sep\n        return x\n"


async def test_deltas_for_a_server_without_them(tmp_path: Path) -> None:
    config = ServerConfig(name="basedpyright", command=("basedpyright-langserver", "--stdio"))
    argv = config.resolve_command(tmp_path)
    assert argv is not None
    backend = Backend(
        config, tmp_path, argv, host=NullHost(), client_capabilities=LSPMUX_CLIENT_CAPABILITIES
    )
    path = tmp_path / "a.py"
    path.write_text(BEFORE)
    uri = path.as_uri()
    params = {"textDocument": {"uri": uri}}
    holder = HeldText(BEFORE)
    bridge = st_.DeltaBridge()
    try:
        assert await backend.ensure_running()
        provider = backend.capabilities["semanticTokensProvider"]
        assert provider["full"] is True  # no delta: the bug's precondition
        with pytest.raises(JsonRpcError):  # what the client got before the bridge
            await backend.call(
                t.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, {**params, "previousResultId": "1"}
            )
        backend.open_document(holder, uri, "python", 1, BEFORE)
        full = t.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL  # what families/semantic_tokens asks
        first = bridge.full(uri, await backend.call(full, params))
        assert first is not None and first["data"]
        change = {"text": AFTER}
        holder.text = AFTER
        backend.change_document(holder, uri, 2, [change])
        fresh = await backend.call(full, params)  # a delta request is asked as a full one
        delta = bridge.delta(uri, first["resultId"], fresh)
        assert delta is not None and "edits" in delta
        assert st_.apply(first["data"], delta["edits"]) == fresh["data"]
        assert fresh["data"] != first["data"]  # the edit added tokens (y, os, sep)
        assert sum(len(e["data"]) for e in delta["edits"]) < len(fresh["data"])  # a real delta
    finally:
        await backend.stop()
