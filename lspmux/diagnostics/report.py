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
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lspmux.headless import (  # noqa: F401 (re-exported for older importers)
    LANGUAGE_IDS,
    HeadlessClient,
    ReportError,
    command,
    daemon_running,
)

SEVERITY_NAMES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
SEVERITY_LEVELS = {"error": 1, "warning": 2, "information": 3, "info": 3, "hint": 4}
QUIET = 1.5
STATUS_METHOD = "lspmux/diagnosticStatus"


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
        pending = await wait_settled(client, list(uris), deadline, quiet)
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


async def wait_settled(
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
