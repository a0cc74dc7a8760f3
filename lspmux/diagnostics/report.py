"""`lspmux diagnostics FILE...`: the merged diagnostics of files, from the command line.

A tiny headless LSP client: it starts `lspmux proxy` (or `lspmux client --no-autostart` when a
daemon answers on its socket) as a subprocess, initializes it for the project, opens every file
with its text from disk, waits until all diagnostics are in, and prints them grouped by file,
`path:line:col severity source code message` (1-based), sorted by severity then position, with
a summary line. `--json` prints one object instead.

When "all diagnostics are in" (the rule, also in docs/linters.md): every file's expected
sources have reported for the text that was opened (lspmux's own `lspmux/diagnosticStatus`
says which servers and linters it still waits for: a linter running, a pull unanswered, a
server that has not published yet — a failed server or linter is not waited for), no
`$/progress` begun by a server is still open, and no `publishDiagnostics` has arrived for a
quiet period (1.5 s). All of it bounded by `--timeout` (60 s): what arrived by then is printed,
with a warning naming the sources that never reported.
"""

from __future__ import annotations

import asyncio
import glob
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

SEVERITY_NAMES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
SEVERITY_LEVELS = {"error": 1, "warning": 2, "information": 3, "info": 3, "hint": 4}
LANGUAGE_IDS = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".sh": "shellscript",
    ".bash": "shellscript",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".swift": "swift",
    ".json": "json",
    ".md": "markdown",
}
QUIET = 1.5
STATUS_METHOD = "lspmux/diagnosticStatus"


class ReportError(Exception):
    """The run could not produce a report (the proxy did not start, a path matched nothing)."""


def expand(patterns: list[str]) -> list[Path]:
    """Files named by paths or glob patterns, each once, in the order given."""
    out: dict[Path, None] = {}
    for pattern in patterns:
        if any(c in pattern for c in "*?["):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise ReportError(f"{pattern!r} matches no file")
            for m in matches:
                if os.path.isfile(m):
                    out[Path(m).resolve()] = None
        else:
            path = Path(pattern)
            if not path.is_file():
                raise ReportError(f"{pattern}: no such file")
            out[path.resolve()] = None
    return list(out)


class HeadlessClient:
    """Speaks LSP to a child process over its stdin/stdout (stdlib + orjson)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        self.last_publish = time.monotonic()
        self.progress: set[Any] = set()
        self.messages: list[tuple[int, str]] = []
        self._reader = asyncio.ensure_future(self._read())

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = orjson.dumps({"jsonrpc": "2.0", **msg})
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    async def request(self, method: str, params: Any, timeout: float = 30) -> Any:
        self._ids += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[self._ids] = fut
        self.send({"id": self._ids, "method": method, "params": params})
        return await asyncio.wait_for(fut, timeout)

    async def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while True:
                length = 0
                while True:
                    line = await stdout.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await stdout.readexactly(length)
                self._handle(orjson.loads(body))
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(ReportError("lspmux exited before answering"))

    def _handle(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method is None:
            fut = self._waiting.pop(msg.get("id"), None)  # type: ignore[arg-type]
            if fut is not None and not fut.done():
                if "error" in msg:
                    fut.set_exception(ReportError(str((msg["error"] or {}).get("message"))))
                else:
                    fut.set_result(msg.get("result"))
            return
        params = msg.get("params") or {}
        if "id" in msg:  # a request to the client: answer what a plain client would
            result: Any = None
            if method == "workspace/configuration":
                result = [None for _ in params.get("items") or ()]
            elif method == "workspace/workspaceFolders":
                result = []
            self.send({"id": msg["id"], "result": result})
            return
        if method == "textDocument/publishDiagnostics":
            self.diagnostics[params.get("uri", "")] = list(params.get("diagnostics") or [])
            self.last_publish = time.monotonic()
        elif method == "$/progress":
            value = params.get("value") or {}
            if value.get("kind") == "begin":
                self.progress.add(params.get("token"))
            elif value.get("kind") == "end":
                self.progress.discard(params.get("token"))
        elif method in ("window/logMessage", "window/showMessage"):
            self.messages.append((int(params.get("type") or 4), str(params.get("message"))))

    async def close(self) -> None:
        try:
            await self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
        except (ReportError, TimeoutError, ConnectionError):
            pass
        try:
            await asyncio.wait_for(self.proc.wait(), 15)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()


def daemon_running() -> bool:
    """Whether an lspmux daemon answers on its default socket (env LSPMUX_ADDRESS)."""
    try:
        from lspmux.daemon.address import resolve
        from lspmux.daemon.shim import open_socket
    except ImportError:
        return False
    try:
        address = resolve(None)
        if not address.is_unix:
            return False
        open_socket(address, timeout=0.5).close()
    except Exception:
        return False
    return True


def command(configs: list[Path], *, use_daemon: bool) -> list[str]:
    """The argv of the LSP endpoint: the daemon's client shim, or a private proxy."""
    if use_daemon:
        return [sys.executable, "-m", "lspmux", "client", "--no-autostart"]
    argv = [sys.executable, "-m", "lspmux", "proxy", "--log-level", "warning"]
    for cfg in configs:
        argv += ["--config", str(cfg)]
    return argv


async def collect(
    files: list[Path],
    *,
    root: Path,
    argv: list[str],
    timeout: float = 60.0,
    quiet: float = QUIET,
    log: Callable[[str], None] | None = None,
) -> tuple[dict[Path, list[dict[str, Any]]], list[str]]:
    """Open `files` in an lspmux at `argv`; their merged diagnostics, and warnings (sources
    that failed or never reported)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=None,
        cwd=root,
        limit=1 << 24,
    )
    client = HeadlessClient(proc)
    warnings: list[str] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "window": {"workDoneProgress": True},
                    "textDocument": {
                        "publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
                        "synchronization": {"didSave": True},
                    },
                    "workspace": {"configuration": True, "workspaceFolders": True},
                },
                "clientInfo": {"name": "lspmux diagnostics"},
            },
            timeout=max(1.0, timeout),
        )
        client.notify("initialized", {})
        uris: dict[str, Path] = {}
        for path in files:
            uri = path.as_uri()
            uris[uri] = path
            text = path.read_text(encoding="utf-8", errors="replace")
            client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": LANGUAGE_IDS.get(path.suffix, path.suffix.lstrip(".")),
                        "version": 1,
                        "text": text,
                    }
                },
            )
        pending = await _wait(client, list(uris), deadline, quiet)
        for uri, names in pending.items():
            warnings.append(
                f"{uris[uri]}: no diagnostics from {', '.join(names)} within {timeout:g}s"
            )
        for kind, text in client.messages:
            if kind <= 2 and text.startswith("lspmux"):
                warnings.append(text)
        result = {path: client.diagnostics.get(uri, []) for uri, path in uris.items()}
    finally:
        await client.close()
    return result, list(dict.fromkeys(warnings))


async def _wait(
    client: HeadlessClient, uris: list[str], deadline: float, quiet: float
) -> dict[str, list[str]]:
    """Wait by the rule in the module docstring; the sources still pending at the deadline."""
    loop = asyncio.get_running_loop()
    pending: dict[str, list[str]] = {}
    while True:
        pending = {}
        for uri in uris:
            status = await client.request(STATUS_METHOD, {"uri": uri}, timeout=30)
            names = list((status or {}).get("pending") or [])
            if names:
                pending[uri] = names
        settled = not pending and not client.progress
        if settled and time.monotonic() - client.last_publish >= quiet:
            return {}
        if loop.time() >= deadline:
            return pending
        await asyncio.sleep(0.1)


# -- output -----------------------------------------------------------------------------------


def severity_name(diag: dict[str, Any]) -> str:
    return SEVERITY_NAMES.get(int(diag.get("severity") or 1), "error")


def rows(
    results: dict[Path, list[dict[str, Any]]], *, min_severity: int = 4, cwd: Path | None = None
) -> list[dict[str, Any]]:
    """One flat, sorted row per diagnostic at or above `min_severity` (1 error … 4 hint)."""
    out: list[dict[str, Any]] = []
    for path, diags in results.items():
        shown = _shown(path, cwd)
        for d in diags:
            severity = int(d.get("severity") or 1)
            if severity > min_severity:
                continue
            start = (d.get("range") or {}).get("start") or {}
            code = d.get("code")
            out.append(
                {
                    "path": shown,
                    "line": int(start.get("line", 0)) + 1,
                    "column": int(start.get("character", 0)) + 1,
                    "severity": SEVERITY_NAMES.get(severity, "error"),
                    "source": str(d.get("source") or ""),
                    "code": "" if code is None else str(code),
                    "message": str(d.get("message") or ""),
                }
            )
    out.sort(key=lambda r: (r["path"], SEVERITY_LEVELS[r["severity"]], r["line"], r["column"]))
    return out


def _shown(path: Path, cwd: Path | None) -> str:
    if cwd is not None:
        try:
            return str(path.relative_to(cwd))
        except ValueError:
            pass
    return str(path)


def format_text(table: list[dict[str, Any]], files: int) -> str:
    lines: list[str] = []
    current = None
    for r in table:
        if r["path"] != current:
            if current is not None:
                lines.append("")
            current = r["path"]
        message = " ".join(r["message"].split())
        code = r["code"] or "-"
        lines.append(
            f"{r['path']}:{r['line']}:{r['column']} {r['severity']} {r['source'] or '-'} "
            f"{code} {message}"
        )
    counts = {name: 0 for name in ("error", "warning", "information", "hint")}
    for r in table:
        counts[r["severity"]] += 1
    summary = ", ".join(f"{n} {name}{'s' if n != 1 else ''}" for name, n in counts.items() if n)
    if lines:
        lines.append("")
    lines.append(f"{summary or 'no problems'} in {files} file{'s' if files != 1 else ''}")
    return "\n".join(lines)
