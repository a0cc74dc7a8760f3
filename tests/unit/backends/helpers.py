"""Helpers for tests that start a real Backend."""

from __future__ import annotations

from typing import Any

from lspmux.backends.backend import Backend
from lspmux.backends.pool import Pool
from lspmux.routing.table import SERVER_DISPATCH

#: The head of a stdlib-only server run by `python -c`: `send(msg)` writes a message; the loop
#: reads each message into `msg` (until stdin ends) — a script goes on with the loop's body,
#: indented four spaces (`break` on `exit`).
SERVER_LOOP = """
import json, os, sys, time
def send(msg):
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    sys.stdout.buffer.flush()
while True:
    length = None
    while (line := sys.stdin.buffer.readline().strip()):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if length is None:
        break
    msg = json.loads(sys.stdin.buffer.read(length))
"""


class NullHost:
    """A backend's host with no client: server messages are routed by the method table in a
    pool without sessions (registrations recorded, configuration from the settings, anything
    for a client answered null)."""

    def __init__(self) -> None:
        self.pool = Pool(dispatch=SERVER_DISPATCH)

    def server_request(self, backend: Backend, msg: Any, reply: Any) -> None:
        self.pool.server_request(backend, msg, reply)

    def server_notification(self, backend: Backend, msg: Any) -> None:
        self.pool.server_notification(backend, msg)  # what a server instance keeps of it

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        pass
