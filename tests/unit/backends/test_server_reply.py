"""A server→client request gets exactly one answer: the first reply is sent, a second is refused
and logged (before, a registration was answered by the backend and again by the pool)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from lspmux.backends.backend import ServerReply
from lspmux.backends.pool import Pool
from lspmux.errors import RequestFailed
from lspmux.routing.table import SERVER_DISPATCH


class Conn:
    closed = False

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any, Any]] = []

    def respond(self, msg_id: Any, value: Any) -> None:
        self.sent.append(("result", msg_id, value))

    def respond_error(self, msg_id: Any, err: Any) -> None:
        self.sent.append(("error", msg_id, err))


def test_a_second_answer_is_refused_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    conn = Conn()
    reply = ServerReply("s[w]", conn, {"id": 4, "method": "client/registerCapability"})  # type: ignore[arg-type]
    reply(None)
    with caplog.at_level(logging.WARNING, "lspmux.backend"):
        reply({"late": True})
        reply(RequestFailed("later still"))
    assert conn.sent == [("result", 4, None)]
    assert "already answered" in caplog.text and "client/registerCapability" in caplog.text


class _Backend:
    """What the registrations family touches of a backend."""

    name = "s"
    label = "s[w]"
    capabilities: dict[str, Any] = {}

    def __init__(self) -> None:
        self.registrations: dict[str, tuple[str, Any]] = {}

    def register(self, regs: Any) -> None:
        for reg_id, method, options in regs:
            self.registrations[reg_id] = (method, options)

    def unregister(self, ids: Any) -> None:
        for reg_id in ids:
            self.registrations.pop(reg_id, None)


class _Session:
    client_id = "c"
    last_active = 0.0
    state = "running"

    def __init__(self) -> None:
        self.heard: list[Any] = []

    def backend_request(self, backend: Any, msg: Any, reply: Any) -> None:
        self.heard.append(msg["method"])
        reply("a session's answer")  # must never reach the server: the pool answered

    def backend_notification(self, backend: Any, msg: Any) -> None: ...

    def backend_event(self, backend: Any, event: str, detail: str) -> None: ...


def test_a_registration_is_answered_once_and_every_session_hears_of_it(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    pool = Pool(shared=True, dispatch=SERVER_DISPATCH)
    backend, a, b = _Backend(), _Session(), _Session()
    pool.attach(backend, a)  # type: ignore[arg-type]
    pool.attach(backend, b)  # type: ignore[arg-type]
    conn = Conn()
    msg = {
        "id": 9,
        "method": "client/registerCapability",
        "params": {"registrations": [{"id": "r1", "method": "textDocument/formatting"}]},
    }
    pool.server_request(backend, msg, ServerReply("s[w]", conn, msg))  # type: ignore[arg-type]
    assert conn.sent == [("result", 9, None)]
    assert backend.registrations == {"r1": ("textDocument/formatting", None)}
    assert a.heard == b.heard == ["client/registerCapability"]
