"""Servers that are sent no document before they loaded their project, and how a backend
tells that they did (`lifecycle.ServerLife._start` holds the documents until then, and the
requests that wait for the server with them).

rust-analyzer (2022-05) puts a document it is sent before its first workspace is in into a
library source root, and publishes no diagnostics for a library file. It moves the document out
only when its load of the workspace creates some other file, which never happens when every
file of the workspace is open already: in tests/e2e/test_rust_analyzer.py, a two-file Cargo
workspace opened while it ran `cargo metadata` got no diagnostics, ever, for either file. Its
first "Fetching" progress ends right after the workspace is in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lspmux.wire.messages import Message

#: By the name a server's `initialize` answer gives: the work-done progress whose first end
#: says it loaded its project.
LOADS_FIRST: dict[str, str] = {"rust-analyzer": "rustAnalyzer/Fetching"}
#: How long documents (and requests) wait for that end; then they go anyway.
LOAD_TIMEOUT = 10.0


def load_token(result: Any, client_capabilities: Mapping[str, Any]) -> list[str]:
    """The progress whose first end says the server that answered `initialize` with `result`
    loaded its project, as a list of none or one: none when it is not in `LOADS_FIRST` or was
    not told it may report progress (it would report none)."""
    info = result.get("serverInfo") if isinstance(result, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    token = LOADS_FIRST.get(name) if isinstance(name, str) else None
    window = client_capabilities.get("window")
    progress = isinstance(window, dict) and window.get("workDoneProgress") is True
    return [token] if token is not None and progress else []


def ends(msg: Message, token: str) -> bool:
    """Whether `msg` is the `end` of the work-done progress `token`."""
    params = msg.get("params")
    if msg.get("method") != "$/progress" or not isinstance(params, dict):
        return False
    value = params.get("value")
    return params.get("token") == token and isinstance(value, dict) and value.get("kind") == "end"
