"""End-to-end harness: a real pytest-lsp client driving `lspmux proxy` over stdio, with the real
language servers installed by scripts/setup-tests.

`proxy` starts one proxy per test on a fresh copy of tests/data/workspace (so tests may edit
files), with private XDG folders (no user config leaks in), and at teardown checks that the
proxy and every server it started are gone.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
import pytest_asyncio
from lsprotocol import types as t
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.polling import eventually

DATA = Path(__file__).resolve().parent.parent / "data"


def plain(value: Any) -> Any:
    """pygls hands results of methods it does not know as namedtuples: make them dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class AnswerCounter:
    """Counts, per request id the client sent, the responses it got back (wraps pygls's
    protocol), so that every test can end by checking that each request was answered once."""

    def __init__(self, client: LanguageClient) -> None:
        self.sent: list[Any] = []
        self.answers: dict[Any, int] = {}
        protocol = client.protocol
        send, handle = protocol._send_data, protocol._handle_response

        def counting_send(data: Any) -> Any:
            method = _field(data, "method")
            msg_id = _field(data, "id")
            if method is not None and msg_id is not None:
                self.sent.append(msg_id)
            return send(data)

        def counting_handle(msg_id: Any, result: Any = None, error: Any = None) -> Any:
            self.answers[msg_id] = self.answers.get(msg_id, 0) + 1
            return handle(msg_id, result, error)

        protocol._send_data = counting_send  # type: ignore[method-assign]
        protocol._handle_response = counting_handle  # type: ignore[method-assign]

    def problems(self) -> dict[Any, int]:
        """Request ids answered other than exactly once (id → answers)."""
        return {i: self.answers.get(i, 0) for i in self.sent if self.answers.get(i, 0) != 1}


def _field(data: Any, name: str) -> Any:
    return data.get(name) if isinstance(data, dict) else getattr(data, name, None)


class Proxy:
    """One proxy process and its client."""

    def __init__(self, client: LanguageClient, workspace: Path) -> None:
        self.client = client
        self.workspace = workspace
        self.env: dict[str, str] = {}
        self.stopped = False
        self.server_requests: list[tuple[str, Any]] = []
        self.versions: dict[str, int] = {}
        self.answers = AnswerCounter(client)

    @property
    def pid(self) -> int:
        assert self.client._server is not None
        return self.client._server.pid

    def descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def uri(self, name: str) -> str:
        return (self.workspace / name).as_uri()

    def open(self, name: str, language_id: str, text: str | None = None) -> str:
        uri = self.uri(name)
        if text is None:
            text = (self.workspace / name).read_text()
        self.versions[uri] = 1
        self.client.text_document_did_open(
            t.DidOpenTextDocumentParams(
                t.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, changes: list[t.TextDocumentContentChangeEvent]) -> int:
        self.versions[uri] += 1
        self.client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                t.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                changes,
            )
        )
        return self.versions[uri]

    async def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        result = await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params), timeout
        )
        return plain(result)

    async def raw_request(self, method: str, params: Any, timeout: float = 60) -> Any:
        """A request whose params pygls would insist on typing (e.g. hover with `locate`
        instead of textDocument + position): sent as the plain dict it is."""
        from concurrent.futures import Future

        protocol = self.client.protocol
        msg_id = f"raw-{len(protocol._request_futures)}-{id(params)}"
        future: Future[Any] = Future()
        protocol._request_futures[msg_id] = future
        protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return plain(await asyncio.wait_for(asyncio.wrap_future(future), timeout))

    async def diagnostics_where(
        self, uri: str, predicate: Callable[[list[t.Diagnostic]], bool], timeout: float = 60
    ) -> list[t.Diagnostic]:
        """Wait until the merged diagnostics of `uri` satisfy `predicate`."""

        def probe() -> tuple[list[t.Diagnostic]] | None:  # a tuple: an empty set may match
            diags = list(self.client.diagnostics.get(uri, []))
            return (diags,) if predicate(diags) else None

        (diags,) = await eventually(probe, f"diagnostics for {uri} matching", timeout=timeout)
        return diags


def sources(diags: list[t.Diagnostic]) -> set[str]:
    return {(d.source or "").lower() for d in diags}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(DATA / "workspace", ws)
    (ws / ".git").mkdir()  # a root marker, as a real project has
    return ws


def proxy_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)  # pytest-lsp's server_env replaces the environment: start from ours
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg-config")
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")  # the trust database: nothing trusted
    # Short: Unix socket paths (Biome's daemon socket lives in the cache folder, lspmux's in
    # the runtime folder) must stay under 108 bytes.
    env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="lspmux-cache-")
    env["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="lspmux-rt-")
    env.pop("LSPMUX_ADDRESS", None)
    return env


async def start_proxy(
    workspace: Path,
    tmp_path: Path,
    *,
    config: str | None = None,
    capabilities: str = "neovim",
    extra_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Proxy:
    """`env`: the proxy's environment (default: a fresh `proxy_env`); a test that restarts
    lspmux on the same cache passes the first one's `proxy.env` again."""
    args = [sys.executable, "-m", "lspmux", "proxy", "--log-level", "debug"]
    args += ["--log-file", str(tmp_path / "lspmux.log")]
    if config is not None:
        cfg = tmp_path / "test-config.toml"
        cfg.write_text(config)
        args += ["--config", str(cfg)]
    args += list(extra_args)
    client = make_test_lsp_client()
    proxy = Proxy(client, workspace)

    @client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def _register(params: Any) -> None:  # pytest-lsp has no default handler for it
        proxy.server_requests.append((t.CLIENT_REGISTER_CAPABILITY, params))

    @client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
    def _ask(params: Any) -> Any:
        proxy.server_requests.append((t.WINDOW_SHOW_MESSAGE_REQUEST, params))
        actions = params.actions or []
        return actions[0] if actions else None

    @client.feature(t.WORKSPACE_APPLY_EDIT)
    def _apply(params: Any) -> Any:
        proxy.server_requests.append((t.WORKSPACE_APPLY_EDIT, params))
        return t.ApplyWorkspaceEditResult(applied=True)

    proxy.env = proxy_env(tmp_path) if env is None else env
    await client.start_io(*args, env=proxy.env, cwd=str(workspace))
    await client.initialize_session(
        t.InitializeParams(
            capabilities=client_capabilities(capabilities),
            root_uri=workspace.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")],
        )
    )
    return proxy


@pytest_asyncio.fixture
async def proxy_factory(tmp_path: Path, workspace: Path) -> AsyncIterator[Callable[..., Any]]:
    started: list[Proxy] = []

    async def factory(**kwargs: Any) -> Proxy:
        proxy = await start_proxy(workspace, tmp_path, **kwargs)
        started.append(proxy)
        return proxy

    yield factory
    for proxy in started:
        await stop_proxy(proxy, tmp_path)


async def stop_proxy(proxy: Proxy, tmp_path: Path) -> None:
    """Shut `proxy` down (once; `proxy_factory` stops those a test left running) and check
    that every request got one answer, that it and its servers are gone, and that its log
    has no traceback."""
    if proxy.stopped:
        return
    proxy.stopped = True
    children = proxy.descendants()
    try:
        await asyncio.wait_for(proxy.client.shutdown_session(), 30)
        # Every request the test sent got exactly one answer (none lost, none twice).
        counter = proxy.answers
        assert counter.sent, "the answer counter saw no request (pygls changed?)"
        await eventually(
            lambda c=counter: not [n for n in c.problems().values() if n == 0],
            "an answer to every request",
            timeout=10,
        )
        assert not proxy.answers.problems(), (
            f"requests not answered exactly once (id: answers): {proxy.answers.problems()}"
        )
    finally:
        await proxy.client.stop()
    _gone, alive = psutil.wait_procs(children, timeout=10)
    leftovers = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    for p in leftovers:
        p.kill()
    assert not leftovers, f"processes survived the proxy: {leftovers}"
    log = tmp_path / "lspmux.log"
    if log.exists():
        text = own_lines(log.read_text(errors="replace"))
        assert "Traceback" not in text, f"lspmux logged a traceback:\n{text[-4000:]}"


#: A line of a server's stderr, which lspmux's log relays (backends/process.py).
_RELAYED = re.compile(r"^\S+ \S+ INFO lspmux\.backend: \S+ stderr: ")


def own_lines(log: str) -> str:
    """lspmux's log without its servers' stderr: pylsp, for one, logs a traceback whenever it
    answers a method it does not know (lspmux's barrier request) with -32601."""
    return "\n".join(line for line in log.splitlines() if not _RELAYED.match(line))


@pytest_asyncio.fixture
async def proxy(proxy_factory: Callable[..., Any]) -> Proxy:
    return await proxy_factory()
