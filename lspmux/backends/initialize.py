"""A server's `initialize`, as lspmux sends it: built in one place for a backend's start
(`lifecycle.py`) and for a server `lspmux proxy` spawns at launch (`proxy.py`), which is sent
it at once — both must say exactly the same, or the backend does not take the launch's process
(`adopt.py`). Standard library only (and the version): the proxy builds it before the rest of
lspmux is imported.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The id of a backend's first request on its new connection, `initialize`: the one a message
#: sent at launch must have for the backend's connection to take its answer.
FIRST_ID = 1
#: A message sent at launch is written before the event loop runs, blocking: no larger than a
#: pipe takes at once, or a server slow to read would hold the proxy's start.
LAUNCH_LIMIT = 60_000


def initialize_params(
    root: Path, capabilities: Mapping[str, Any], initialization_options: Any
) -> dict[str, Any]:
    """`initialize`'s params for a server serving `root`: this process as its client, the
    capabilities it is told of (`client_caps.for_backend`) and its initializationOptions
    (None: none)."""
    from lspmux import __version__

    root_uri = root.as_uri()
    params: dict[str, Any] = {
        "processId": os.getpid(),
        "clientInfo": {"name": "lspmux", "version": __version__},
        "rootUri": root_uri,
        "rootPath": str(root),
        "workspaceFolders": [{"uri": root_uri, "name": root.name or str(root)}],
        "capabilities": capabilities,
        "trace": "off",
    }
    if initialization_options is not None:
        params["initializationOptions"] = initialization_options
    return params


def launch_message(params: Mapping[str, Any]) -> bytes | None:
    """The framed `initialize` request (id `FIRST_ID`) to write to a server at launch; None when
    it is larger than `LAUNCH_LIMIT` (then its backend sends it)."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": FIRST_ID, "method": "initialize", "params": params}
    ).encode()
    if len(body) > LAUNCH_LIMIT:
        return None
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def says_the_same(a: Any, b: Any) -> bool:
    """Whether two messages (or params) say the same once sent as JSON (a tuple is a list)."""
    return bool(json.loads(json.dumps(a)) == json.loads(json.dumps(b)))
