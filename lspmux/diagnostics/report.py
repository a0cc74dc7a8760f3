"""`lspmux diagnostics FILE...`: the merged diagnostics of files, from the command line.

A tiny headless LSP client: it connects to the daemon's socket when one answers there (else it
starts a private `lspmux proxy`), on run_loop's event loop, initializes it for the project, opens
every file with its text from disk, waits until all diagnostics are in, and prints them grouped by file,
`path:line:col severity source code message` (1-based), sorted by severity then position, with
a summary line. `--json` prints one object instead.

When "all diagnostics are in" (the rule, also in docs/linters.md): every file's expected
sources have reported for the text that was opened (lspmux's own `lspmux/diagnosticStatus`
says which servers and linters it still waits for: a linter running, a pull unanswered, a
server that has not published yet — a failed server or linter is not waited for), no
`$/progress` begun by a server is still open, and no `publishDiagnostics` nor `$/progress`
has arrived for a quiet period (1.5 s) — a progress that just ended does not mean the server is
done: rust-analyzer ends its `cargo check` when it reloads the workspace and begins a new one
some 50 ms later, and the native diagnostics it published before are not rustc's. All of it bounded by `--timeout` (60 s): what arrived by then is printed,
with a warning naming the sources that never reported.
"""

from __future__ import annotations

import asyncio
import glob
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from lspmux.headless import (
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


class Collected(NamedTuple):
    """What a run found: diagnostics per file, warnings, and where each file's sources stand
    (the rows of `lspmux/diagnosticStatus`; None when lspmux did not say)."""

    results: dict[Path, list[dict[str, Any]]]
    warnings: list[str]
    sources: dict[Path, list[dict[str, Any]] | None]


async def connect(argv: list[str] | str, root: Path) -> HeadlessClient:
    """A client of the lspmux at `argv` (a child process), or, given a string, of the daemon
    listening on that Unix socket (reached directly: no `lspmux client` process to start)."""
    if isinstance(argv, str):
        try:
            reader, writer = await asyncio.open_unix_connection(argv, limit=1 << 24)
        except OSError as exc:
            raise ReportError(f"the lspmux daemon at {argv} did not answer: {exc}") from None
        return HeadlessClient(reader=reader, writer=writer)
    proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=None, cwd=root, limit=1 << 24)  # fmt: skip
    return HeadlessClient(proc)


async def collect(
    files: list[Path],
    *,
    root: Path,
    argv: list[str] | str,
    timeout: float = 60.0,
    quiet: float = QUIET,
    log: Callable[[str], None] | None = None,
) -> Collected:
    """Open `files` in an lspmux at `argv` (see `connect`); their merged diagnostics, warnings
    (sources that failed or never reported) and each file's sources."""
    client = await connect(argv, root)
    warnings: list[str] = []
    loop = asyncio.get_running_loop()
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
            timeout=max(60.0, timeout),  # lspmux's own start; `timeout` bounds the sources
        )
        client.notify("initialized", {})
        deadline = loop.time() + timeout
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
        states = await source_status(client, list(uris))
        result = {path: client.diagnostics.get(uri, []) for uri, path in uris.items()}
        sources = {path: states.get(uri) for uri, path in uris.items()}
    finally:
        await client.close()
    return Collected(result, list(dict.fromkeys(warnings)), sources)


async def source_status(
    client: HeadlessClient, uris: list[str]
) -> dict[str, list[dict[str, Any]] | None]:
    """Each uri's source rows from `lspmux/diagnosticStatus` (None: this lspmux did not say)."""
    out: dict[str, list[dict[str, Any]] | None] = {}
    for uri in uris:
        status = await client.request(STATUS_METHOD, {"uri": uri}, timeout=30)
        rows = (status or {}).get("sources")
        out[uri] = list(rows) if isinstance(rows, list) else None
    return out


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
        last = max(client.last_publish, client.last_progress)
        if settled and time.monotonic() - last >= quiet:
            return {}
        if loop.time() >= deadline:
            return pending
        await asyncio.sleep(0.1)


# -- output -----------------------------------------------------------------------------------


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


# -- the whole workspace (`*`, `**`) ----------------------------------------------------------

#: At most this many files of the workspace are opened in lspmux (those that no project check
#: covers); the rest are reported as not checked.
MAX_OPEN = 500


async def collect_workspace(
    root: Path,
    config: Any,
    *,
    argv: list[str] | str,
    timeout: float = 60.0,
    quiet: float = QUIET,
    max_open: int = MAX_OPEN,
) -> Collected:
    """Every file of the workspace: project checks where every source of a file has one,
    lspmux (servers and linters on the opened file) for the rest; merged into one result."""
    from lspmux.diagnostics import project

    checks, to_open = await asyncio.to_thread(project.plan, root, config)
    results, sources = await project.run_checks(config, checks, timeout=timeout)
    warnings: list[str] = []
    opened, left = to_open[:max_open], to_open[max_open:]
    if opened:
        got = await collect(opened, root=root, argv=argv, timeout=timeout, quiet=quiet)
        results.update(got.results)
        sources.update(got.sources)
        warnings += got.warnings
    for path in left:
        results[path], sources[path] = [], [project.not_opened(max_open)]
    ordered = sorted(results)
    return Collected(
        {p: results[p] for p in ordered}, warnings, {p: sources.get(p) for p in ordered}
    )


# -- the command ------------------------------------------------------------------------------


def main(args: Any) -> int:
    """`lspmux diagnostics PATH_OR_GLOB...` (the parsed arguments): print, and the exit
    status of coverage.exit_status."""
    import json
    import sys

    from lspmux.diagnostics import coverage
    from lspmux.diagnostics.project import is_workspace_pattern

    root = Path(args.dir or Path.cwd()).resolve()
    whole = [p for p in args.paths if is_workspace_pattern(p)]
    use_daemon = not args.no_daemon and not args.config and daemon_running()
    try:
        # the configuration is read here only where this process needs it (the whole
        # workspace's project checks) or to fail early (a private proxy reads it too); the
        # daemon reads its own, and the files alone need none of it
        config = _config(root, args.config) if whole or not use_daemon else None
        files = expand([p for p in args.paths if not is_workspace_pattern(p)])
    except ReportError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return coverage.EXIT_NOT_CHECKED
    argv: list[str] | str = command(list(args.config), use_daemon=False)
    if use_daemon:  # its socket, reached directly
        from lspmux.daemon.address import resolve_client

        argv = resolve_client(None).path  # daemon_running: a Unix address that answers
    found: list[Collected] = []

    async def run() -> int:
        got = Collected({}, [], {})
        if whole:
            got = await collect_workspace(root, config, argv=argv, timeout=args.timeout)
        if files or not whole:
            more = await collect(files, root=root, argv=argv, timeout=args.timeout)
            got = Collected({**got.results, **more.results}, got.warnings + more.warnings,
                            {**got.sources, **more.sources})  # fmt: skip
        found.append(got)
        return 0

    from lspmux.cli_common import run_loop

    try:
        if run_loop(run()):  # the event loop of $LSPMUX_EVENT_LOOP; 2: a bad value, said
            return coverage.EXIT_NOT_CHECKED
    except ReportError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return coverage.EXIT_NOT_CHECKED
    got = found[0]
    for warning in got.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    cwd = Path.cwd()
    table = rows(got.results, min_severity=SEVERITY_LEVELS[args.min_severity], cwd=cwd)
    verdicts = {p: coverage.verdict(s, timeout=args.timeout) for p, s in got.sources.items()}
    unchecked = [
        {"path": _shown(p, cwd), **row} for p, v in verdicts.items() for row in v.unchecked
    ]
    notes = [{"path": _shown(p, cwd), **row} for p, v in verdicts.items() for row in v.notes]
    checked = not unchecked
    errors = any(r["severity"] == "error" for r in table)
    n = len(got.results)
    if args.json:
        print(json.dumps({"diagnostics": table, "files": n, "checked": checked,
                          "unchecked": unchecked, "notes": notes,
                          "warnings": got.warnings}))  # fmt: skip
    else:
        print(format_report(table, n, unchecked, notes))
    return coverage.exit_status(errors, checked)


def _config(root: Path, configs: list[Any]) -> Any:
    """The configuration of `root` with the `--config` files; ReportError when one is wrong."""
    from lspmux.config.loader import ConfigError, load_config

    try:
        return load_config(root, [Path(c) for c in configs])
    except ConfigError as exc:
        raise ReportError(str(exc)) from None


def format_report(
    table: list[dict[str, Any]],
    files: int,
    unchecked: list[dict[str, Any]],
    notes: list[dict[str, Any]],
) -> str:
    """The diagnostics, then the files not checked (and why), then the summary line; "no
    problems" only when every file was checked."""
    from lspmux.diagnostics import coverage

    text = format_text(table, files)
    if not unchecked and not notes:
        return text
    body, _, summary = text.rpartition("\n")
    lines = [body] if body else []
    lines += coverage.grouped_lines(notes, note=True)
    lines += coverage.grouped_lines(unchecked, note=False)
    if unchecked:
        count = len({r["path"] for r in unchecked})
        found = summary.rsplit(" in ", 1)[0]
        found = "nothing found" if found == "no problems" else found
        summary = (
            f"NOT CHECKED: {count} of {files} file{'s' if files != 1 else ''} "
            f"(see above); {found} in what was checked"
        )
    lines.append(summary)
    return "\n".join(lines)
