"""Linters inside a Session: results land in the store only for the version they linted,
failures reach the client once per (linter, kind), and code actions get per-source params."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from lspmux.backends.documents import BackendDocuments
from lspmux.backends.pool import Pool
from lspmux.config.model import Config, LinterConfig
from lspmux.session.families import code_actions
from lspmux.session.linting import pending_sources, store_source
from lspmux.session.session import Session


class _Transport:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        while data:
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.split(b":")[1])
            self.messages.append(orjson.loads(rest[:length]))
            data = rest[length:]

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


def _linter(name: str, code: str, **kw: Any) -> LinterConfig:
    return LinterConfig(
        name=name,
        command=(sys.executable, "-c", code),
        file_types=(".txt",),
        format="regex",
        regex=r"^(?P<line>\d+): (?P<message>.+)$",
        input="stdin",
        **{"debounce": 0.05, **kw},
    )


def _session(tmp_path: Path, *linters: LinterConfig) -> tuple[Session, _Transport]:
    config = Config(linters={lt.name: lt for lt in linters})
    session = Session(Pool(shared=False), lambda _root: config)
    session.config = config
    session.roots = [tmp_path]
    session.state = "running"
    conn = session.connection("test", duplex=False)
    transport = _Transport()
    conn.attach_writer(transport)  # type: ignore[arg-type]
    return session, transport


def _open(session: Session, uri: str, text: str, version: int = 1) -> None:
    session.dispatch.on_message(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "text", "version": version, "text": text}
            },
        }
    )


def _change(session: Session, uri: str, version: int, text: str) -> None:
    session.dispatch.on_message(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}],
            },
        }
    )


async def _until(predicate: Any, timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def _publishes(transport: _Transport) -> list[dict[str, Any]]:
    return [
        m["params"]
        for m in transport.messages
        if m.get("method") == "textDocument/publishDiagnostics"
    ]


async def test_linter_result_is_published_for_the_version_it_linted(tmp_path: Path) -> None:
    # The tool echoes its stdin's first line as a finding on line 1.
    echo = _linter("echo", "import sys; print('1: ' + sys.stdin.readline().strip())")
    session, transport = _session(tmp_path, echo)
    uri = (tmp_path / "a.txt").as_uri()
    _open(session, uri, "first\n")
    assert pending_sources(session, uri) == ["echo"]
    await _until(lambda: _publishes(transport))
    pub = _publishes(transport)[-1]
    assert pub["version"] == 1
    assert [d["message"] for d in pub["diagnostics"]] == ["first"]
    assert pub["diagnostics"][0]["source"] == "echo"
    assert pending_sources(session, uri) == []
    _change(session, uri, 2, "second\n")
    await _until(lambda: _publishes(transport)[-1]["diagnostics"][0]["message"] == "second")
    assert _publishes(transport)[-1]["version"] == 2
    await session.linting.aclose()


async def test_a_result_for_an_older_version_is_dropped(tmp_path: Path) -> None:
    echo = _linter("echo", "import time; time.sleep(0.3); print('1: x')", run_on=("open",))
    session, transport = _session(tmp_path, echo)
    uri = (tmp_path / "a.txt").as_uri()
    _open(session, uri, "one\n")
    await asyncio.sleep(0.1)  # the run has read version 1
    _change(session, uri, 2, "two\n")  # no run on change: none replaces it
    await _until(lambda: session.linting.scheduler.last_run(uri, "echo") is not None)
    await asyncio.sleep(0.05)
    assert _publishes(transport) == []
    assert session.store.slice(uri, store_source("echo")) == []
    assert session.store.sources(uri) == []
    await session.linting.aclose()


async def test_a_failing_linter_is_reported_once_and_others_still_publish(tmp_path: Path) -> None:
    ghost = LinterConfig(
        name="ghost",
        command=("lspmux-no-such-tool-xyz", "${file}"),
        file_types=(".txt",),
        format="regex",
        regex=r"^(?P<line>\d+): (?P<message>.+)$",
        debounce=0.01,
    )
    echo = _linter("echo", "print('1: fine')", debounce=0.01)
    session, transport = _session(tmp_path, ghost, echo)
    uri = (tmp_path / "a.txt").as_uri()
    _open(session, uri, "x\n")
    for version in range(2, 5):
        _change(session, uri, version, f"x{version}\n")
        await asyncio.sleep(0.2)
    await _until(lambda: not session.linting.busy(uri))
    logs = [m["params"] for m in transport.messages if m.get("method") == "window/logMessage"]
    assert len(logs) == 1, logs
    assert logs[0]["type"] == 1
    assert "ghost" in logs[0]["message"] and "not found" in logs[0]["message"]
    assert "a.txt" in logs[0]["message"]
    assert _publishes(transport)[-1]["diagnostics"][0]["message"] == "fine"
    await session.linting.aclose()


async def test_close_kills_a_running_linter(tmp_path: Path) -> None:
    sleepy = _linter("sleepy", "import time; time.sleep(30)")
    session, transport = _session(tmp_path, sleepy)
    uri = (tmp_path / "a.txt").as_uri()
    _open(session, uri, "x\n")
    await asyncio.sleep(0.3)
    assert session.linting.busy(uri)
    await session.release_backends()
    assert not session.linting.busy(uri)
    assert _publishes(transport) == []


def test_code_action_params_carry_each_backends_own_diagnostics(tmp_path: Path) -> None:
    session, _ = _session(tmp_path)
    uri = "file:///w/a.py"
    session.store.set_version(uri, 1)
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 2}}
    ruff = {"range": rng, "message": "unused", "code": "F401", "source": "Ruff", "data": {"r": 1}}
    pyright = {"range": rng, "message": "not accessed", "code": "X", "data": {"p": 2}}
    lint = {"range": rng, "message": "style", "code": "S1", "source": "biome"}
    session.store.update(uri, "ruff", [ruff], 1)
    session.store.update(uri, "basedpyright", [pyright], 1)
    session.store.update(uri, store_source("biome"), [lint], 1)
    shown = session.store.merged(uri)
    sent = [{k: v for k, v in d.items() if k != "data"} for d in shown]  # a client dropping data

    class _B:
        def __init__(self, name: str) -> None:
            self.name = name

    params = {"textDocument": {"uri": uri}, "range": rng, "context": {"diagnostics": sent}}
    per = code_actions._own_diagnostics(session, params, [_B("ruff"), _B("basedpyright")])  # type: ignore[list-item]
    assert per is not None
    assert per["ruff"]["context"]["diagnostics"] == [ruff]
    assert per["basedpyright"]["context"]["diagnostics"] == [pyright]
    assert per["ruff"]["range"] == rng


class _PullBackend:
    """Just enough of a Backend for the Puller: it answers pulls with a fixed report."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.name = "puller"
        self.label = "puller[test]"
        self.position_encoding = "utf-16"
        self.state = "running"
        self.capabilities: dict[str, Any] = {"diagnosticProvider": {"identifier": "p"}}
        self.registered: set[str] = set()
        self.documents = BackendDocuments(self)
        self.items = items
        self.pulls: list[dict[str, Any]] = []

        class _Cfg:
            request_timeout = 5.0

            @staticmethod
            def feature_enabled(_feature: str) -> bool:
                return True

        self.config = _Cfg()

    def notify(self, method: str, params: Any) -> None:
        pass

    def request(self, method: str, params: Any, callback: Any, **_kw: Any) -> int:
        self.pulls.append(params)
        loop = asyncio.get_running_loop()
        n = len(self.pulls)
        loop.call_soon(
            callback, {"id": n, "result": {"kind": "full", "resultId": str(n), "items": self.items}}
        )
        return n


async def test_workspace_diagnostic_refresh_is_answered_and_pulls_again(tmp_path: Path) -> None:
    session, transport = _session(tmp_path)
    session.client_capabilities = {"workspace": {"diagnostics": {"refreshSupport": True}}}
    uri = (tmp_path / "a.txt").as_uri()
    _open(session, uri, "x\n")
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    backend = _PullBackend([{"range": rng, "message": "old"}])
    backend.documents.open(session, uri, "text", 1, "x\n")  # it holds this session's text
    replies: list[Any] = []
    refresh = {"jsonrpc": "2.0", "id": 7, "method": "workspace/diagnostic/refresh"}
    session.pool.attach(backend, session)  # type: ignore[arg-type]
    session.pool.server_request(backend, refresh, replies.append)  # type: ignore[arg-type]
    assert replies == [None]  # answered by lspmux at once, once
    await _until(lambda: session.store.slice(uri, "puller"))
    assert _publishes(transport)[-1]["diagnostics"][0]["message"] == "old"
    backend.items = [{"range": rng, "message": "new"}]
    session.backend_request(backend, {**refresh, "id": 8}, replies.append)  # type: ignore[arg-type]
    await _until(lambda: _publishes(transport)[-1]["diagnostics"][0]["message"] == "new")
    assert backend.pulls[-1]["previousResultId"] == "1"  # resultIds kept per (server, document)
    # The client, which supports refresh, is asked to pull again too.
    sent = [m for m in transport.messages if m.get("method") == "workspace/diagnostic/refresh"]
    assert len(sent) == 2


async def test_the_linters_of_a_document_are_matched_once_per_open_not_per_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Matching a file against every linter's globs cost a third of a didChange; it is done
    at open, again only when the configuration changes, and forgotten at close."""
    session, _transport = _session(tmp_path, _linter("lint", "pass", debounce=60.0))
    asked: list[str] = []
    real = Config.linters_for

    def counting(self: Config, path: str, language_id: str | None = None) -> Any:
        asked.append(path)
        return real(self, path, language_id)

    monkeypatch.setattr(Config, "linters_for", counting)
    uri = (tmp_path / "a.txt").as_uri()
    session.documents.open(uri, "plaintext", 1, "x\n")
    session.linting.opened(uri, "plaintext")
    for _ in range(5):
        session.linting.changed(uri)
    assert len(asked) == 1
    session.config = Config(linters=dict(session.config.linters))  # a reloaded configuration
    session.linting.changed(uri)
    assert len(asked) == 2
    session.linting.closed(uri)
    session.linting.opened(uri, "plaintext")
    assert len(asked) == 3
    assert session.linting.busy(uri)  # and the runs were scheduled all along
    await session.linting.aclose()
