"""The agent's LSP connection to lspmux: one session rooted at the workspace.

Responsible for: reaching lspmux (the daemon's socket directly — autostarting it for
`lspmux mcp` — or a private `lspmux proxy` child), initializing it as a capable client,
keeping the documents the tools looked at in sync with the disk (opened once, re-sent
whenever the file changed, so every answer is for the current text), turning `at` into an LSP
position, waiting for servers to settle (diagnostics in, progress ended), and telling the
servers about files the tools wrote. Standard library + orjson only (the CLI verbs start fast).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from lspmux.agent import paths
from lspmux.agent.apply import read_disk
from lspmux.agent.at import LineCol, code_point_index, column_in_line, lsp_character, parse_at
from lspmux.agent.errors import ToolError
from lspmux.agent.reach import DaemonQuery, daemon_client
from lspmux.headless import (
    LANGUAGE_IDS,
    HeadlessClient,
    LspError,
    ReportError,
    initialize_params,
)
from lspmux.text import Encoding, line_end, line_starts


def client_capabilities() -> dict[str, Any]:
    """lspmux's own client capabilities plus what the tools use on top: call hierarchy and
    file operations (imported here: the verbs' fast path never initializes)."""
    import copy

    from lspmux.backends.capabilities import LSPMUX_CLIENT_CAPABILITIES

    caps = copy.deepcopy(LSPMUX_CLIENT_CAPABILITIES)
    caps["textDocument"]["callHierarchy"] = {}
    caps["workspace"]["fileOperations"] = {"willRename": True, "didRename": True}
    caps["window"]["showDocument"] = {"support": False}
    return caps


class Doc:
    """A document this session opened: its version and the text lspmux holds."""

    __slots__ = ("path", "synced", "text", "uri", "version")

    def __init__(self, uri: str, path: Path, version: int, text: str, synced: float) -> None:
        self.uri, self.path, self.version, self.text, self.synced = uri, path, version, text, synced


class Target(NamedTuple):
    """A position an `at` designates: file, LSP position and a 1-based label."""

    path: Path
    uri: str
    position: dict[str, int]
    label: str
    range: dict[str, Any] | None = None


class AgentLsp:
    """One LSP session with lspmux for the tools of one workspace root."""

    def __init__(
        self, root: Path, client: HeadlessClient, *, daemon_query: DaemonQuery | None = None
    ) -> None:
        self.root = root
        self.client = client
        self.daemon_query = daemon_query
        self.via_daemon = daemon_query is not None
        self.encoding: Encoding = "utf-16"
        self.capabilities: dict[str, Any] = {}
        self.docs: dict[str, Doc] = {}
        self.started = time.monotonic()
        self.apply_handler: Any = None  # set by a tool that lets commands edit (code_actions)
        self.configs: list[Path] = []
        self._cache: dict[str, tuple[tuple[Any, ...], str, list[int]]] = {}
        self.name = "lspmux agent"
        self.remote: list[str] | None = None  # `lspmux client` words reaching another machine
        client.on_request = self._server_request

    # -- connecting -------------------------------------------------------------------------

    @classmethod
    async def connect(
        cls,
        root: Path,
        *,
        private: bool = False,
        autostart: bool = False,
        configs: list[Path] | None = None,
        name: str = "lspmux agent",
        remote: list[str] | None = None,
    ) -> AgentLsp:
        """A session for `root`: through the daemon unless `private` (or config files are
        given); the daemon is started when `autostart`, else a private proxy is used when
        none answers."""
        root = Path(os.path.realpath(root))
        client, query = None, None
        if remote:  # the daemon of another machine, through `lspmux client --remote` (remote/)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "lspmux", "client", *remote,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=root,
                limit=1 << 24,
            )  # fmt: skip
            client = HeadlessClient(proc)
        elif not private and not configs:
            client, query = await daemon_client(autostart)
        if client is None:
            argv = [
                sys.executable,
                "-m",
                "lspmux",
                "proxy",
                "--log-level",
                os.environ.get("LSPMUX_AGENT_LOG", "warning"),
            ] + (
                ["--log-file", os.environ["LSPMUX_AGENT_LOGFILE"]]
                if os.environ.get("LSPMUX_AGENT_LOGFILE")
                else []
            )
            for cfg in configs or []:
                argv += ["--config", str(cfg)]
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                cwd=root,
                limit=1 << 24,
            )
            client = HeadlessClient(proc)
        session = cls(root, client, daemon_query=query)
        session.configs, session.name = list(configs or []), name
        session.remote = remote
        await session.initialize()
        return session

    async def initialize(self) -> None:
        try:
            result = await self.client.request(
                "initialize",
                initialize_params(self.root, self.name, **client_capabilities()),
                timeout=60,
            )
        except ReportError as exc:
            await self.close()
            raise ToolError(f"lspmux did not start: {exc}") from exc
        self.capabilities = dict((result or {}).get("capabilities") or {})
        self.encoding = self.capabilities.get("positionEncoding") or "utf-16"
        self.client.notify("initialized", {})

    async def restart(self) -> None:
        """A private session only: stop the proxy (and its servers), start a fresh one and
        open the same documents again."""
        await self.client.close()
        fresh = await AgentLsp.connect(
            self.root, private=not self.remote, configs=self.configs, remote=self.remote
        )
        self.client, self.capabilities, self.encoding = (
            fresh.client,
            fresh.capabilities,
            fresh.encoding,
        )
        self.client.on_request = self._server_request
        reopen = [doc.path for doc in self.docs.values()]
        self.docs.clear()
        for path in reopen:
            if path.is_file():
                await self.sync(path)

    async def close(self) -> None:
        await self.client.close()

    # -- requests ---------------------------------------------------------------------------

    async def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        """One request to lspmux; an error answer becomes a ToolError with its message."""
        try:
            return await self.client.request(method, params, timeout=timeout)
        except LspError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            message = f"{method}: {exc}"
            uri = (
                ((params or {}).get("textDocument") or {}).get("uri")
                if isinstance(params, dict)
                else None
            )
            if "no language server" in str(exc) and isinstance(uri, str):
                from lspmux.agent import install

                missing = install.missing_for(self.root, self.configs, paths.uri_to_path(uri))
                if missing:
                    message += f". Not installed: {install.describe_missing(missing)}"
                    data["missing"] = [{"server": n, "install": h} for n, h in missing]
            raise ToolError(message, code=exc.code, **data) from exc
        except ReportError as exc:
            raise ToolError(f"{method}: {exc}") from exc

    async def _server_request(self, method: str, params: Any) -> Any:
        if method == "workspace/applyEdit":
            if self.apply_handler is None:
                return {"applied": False, "failureReason": "lspmux agent: nothing may be written"}
            return await self.apply_handler(params.get("edit") or {})
        if method == "workspace/configuration":
            return [None for _ in params.get("items") or ()]
        if method == "workspace/workspaceFolders":
            return [{"uri": self.root.as_uri(), "name": self.root.name}]
        if method == "window/showDocument":
            return {"success": False}
        return None

    # -- documents --------------------------------------------------------------------------

    def path(self, given: str, *, must_exist: bool = True) -> Path:
        return paths.confine(self.root, given, must_exist=must_exist)

    def label_path(self, path: Path | str) -> str:
        return paths.relative(self.root, path)

    async def sync(self, path: Path) -> Doc:
        """Open `path` (or re-send it when the disk changed) so lspmux holds the disk text."""
        text = read_disk(path)
        if text is None:
            raise ToolError(f"file not found: {self.label_path(path)}")
        return self.show(path, text)

    def show(self, path: Path, text: str) -> Doc:
        """Make `text` the text lspmux holds for `path` (opened, or changed when it differs):
        the disk's, or — for check_edit — a text nothing wrote (this session's own: other
        clients of the daemon keep theirs)."""
        uri = path.as_uri()
        doc = self.docs.get(uri)
        now = time.monotonic()
        if doc is None:
            language = LANGUAGE_IDS.get(path.suffix, path.suffix.lstrip(".") or "plaintext")
            doc = self.docs[uri] = Doc(uri, path, 1, text, now)
            self.client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
            )
        elif doc.text != text:
            doc.version += 1
            doc.text, doc.synced = text, now
            self.client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": doc.version},
                    "contentChanges": [{"text": text}],
                },
            )
        return doc

    def forget(self, uri: str) -> None:
        if self.docs.pop(uri, None) is not None:
            self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def text_of(self, uri: str) -> str | None:
        """The text positions in `uri` refer to: the open document's, else the disk's."""
        found = self._lines(uri)
        return found[0] if found is not None else None

    def line(self, uri: str, line: int) -> str | None:
        """Line `line` (0-based) of `uri`'s text, without its line break."""
        found = self._lines(uri)
        if found is None:
            return None
        text, starts = found
        if not 0 <= line < len(starts):
            return ""
        return text[starts[line] : line_end(text, starts, line)]

    def _lines(self, uri: str) -> tuple[str, list[int]] | None:
        """Text and line starts, cached per open-document version or per file stat (labels
        of many locations in one big file cost one read and one scan)."""
        doc = self.docs.get(uri)
        if doc is not None:
            key: tuple[Any, ...] = ("doc", doc.version, id(doc.text))
            text: str | None = doc.text
        else:
            if not uri.startswith("file:"):
                return None
            path = paths.uri_to_path(uri)
            try:
                st = os.stat(path)
            except (OSError, ValueError):  # ValueError: a NUL (`%00`) in the server's URI
                return None
            key, text = ("disk", st.st_mtime_ns, st.st_size), None
        cached = self._cache.get(uri)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        if text is None:
            text = read_disk(paths.uri_to_path(uri))
            if text is None:
                return None
        if len(self._cache) > 256:
            self._cache.clear()
        starts = line_starts(text)
        self._cache[uri] = (key, text, starts)
        return text, starts

    async def open_languages(self) -> list[str]:
        """Open one file per language found under the root, so that every server a
        workspace-wide question needs is running; the languages opened."""
        seen: dict[str, Path] = {}
        for doc in self.docs.values():
            seen.setdefault(LANGUAGE_IDS.get(doc.path.suffix, ""), doc.path)
        # a thread: inside the daemon (hosted verbs) a big tree must not stall other clients
        seen = await asyncio.to_thread(paths.one_file_per_language, self.root, seen)
        for path in seen.values():
            if path.as_uri() not in self.docs:
                await self.sync(path)
        return [k for k in seen if k]

    # -- positions --------------------------------------------------------------------------

    async def target(
        self, at: str, symbol: str | None = None, *, want_range: bool = False
    ) -> Target:
        """Where `at` points (see at.py), with the file open and in sync."""
        parsed = parse_at(at, symbol)
        if isinstance(parsed, LineCol):
            path = self.path(parsed.path)
            doc = await self.sync(path)
            starts = line_starts(doc.text)
            if parsed.line > len(starts):
                raise ToolError(
                    f"line {parsed.line} is past the end of {self.label_path(path)} "
                    f"({len(starts)} lines)",
                    line=parsed.line,
                    line_count=len(starts),
                )
            line = parsed.line - 1
            line_text = doc.text[starts[line] : line_end(doc.text, starts, line)]
            index = column_in_line(line_text, parsed)
            position = {"line": line, "character": lsp_character(line_text, index, self.encoding)}
            label = f"{self.label_path(path)}:{line + 1}:{index + 1}"
            return Target(path, doc.uri, position, label)
        return await self._locate(parsed.spec, want_range)

    async def _locate(self, spec: str, want_range: bool) -> Target:
        candidate = paths.locate_file(self.root, spec)
        if candidate is not None:
            await self.sync(candidate)
        method = "locate/resolveRange" if want_range else "locate/resolve"
        result = await self.request(method, {"locate": spec})
        path = paths.uri_to_path(result["uri"])
        real = Path(os.path.realpath(path))
        if not paths.inside(self.root, real):
            raise ToolError(f"{spec!r} lies outside the workspace root {self.root}")
        doc = await self.sync(real)
        rng = result.get("range")
        position = result.get("position") or (rng or {}).get("start")
        assert position is not None
        return Target(real, doc.uri, position, self.label(doc.uri, position), rng)

    def label(self, uri: str, position: dict[str, int]) -> str:
        """`path:line:col`, 1-based, the column in code points, the path relative to root."""
        line, character = int(position["line"]), int(position["character"])
        found = self.line(uri, line)
        col = character
        if found is not None:
            col = code_point_index(found, character, self.encoding)
        return f"{self.label_path(paths.uri_to_path(uri))}:{line + 1}:{col + 1}"

    # -- waiting ----------------------------------------------------------------------------

    async def settle(self, uris: list[str], *, timeout: float = 60, quiet: float = 1.0) -> None:
        """Wait until every uri's diagnostics are in for its current text and no progress
        is open (the quiet period only right after the documents were synced)."""
        from lspmux.diagnostics.report import wait_settled

        last_sync = max((self.docs[u].synced for u in uris if u in self.docs), default=0.0)
        wait_quiet = max(0.0, min(quiet, last_sync + quiet - time.monotonic()))
        loop = asyncio.get_running_loop()
        try:
            await wait_settled(self.client, uris, loop.time() + timeout, wait_quiet)
        except LspError:  # an lspmux without lspmux/diagnosticStatus: progress and quiet only
            await self.idle(timeout=timeout)

    async def idle(self, *, timeout: float = 60, quiet: float = 0.3) -> None:
        """Wait until no `$/progress` is open and none began or ended for `quiet` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            if not self.client.progress and time.monotonic() - self.client.last_progress >= quiet:
                return
            await asyncio.sleep(0.05)
