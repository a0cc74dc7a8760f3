"""The `diagnostics` tool (never a false all-clear), and the collecting it shares with
`check_edit` (speculation.py).

`diagnostics` answers for the files' current text on disk, merged over every server and
linter, and says "OK" only when every source that applies to each file diagnosed that text
(lspmux/diagnostics/coverage.py has the rule); otherwise it names each source that did not
report and why (not installed — with the install command; crashed — with its stderr's last
lines; still analysing — after `timeout` seconds). `"*"` and `"**"` are the whole workspace:
project checks where the table has them, the other files opened (lspmux/diagnostics/project.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lspmux.agent import render
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp
from lspmux.agent.tools import SEVERITIES, Result, expand_files
from lspmux.diagnostics import coverage
from lspmux.headless import LspError, ReportError


def diagnostic_row(lsp: AgentLsp, path: Path, d: dict[str, Any]) -> dict[str, Any]:
    """One diagnostic as the tools print it: `path:line:col`, severity, source, code, message."""
    from lspmux.diagnostics.report import SEVERITY_NAMES

    label = lsp.label(path.as_uri(), d["range"]["start"])
    _, line, column = label.rsplit(":", 2)
    code = d.get("code")
    return {
        "path": lsp.label_path(path),
        "line": int(line),
        "column": int(column),
        "label": label,
        "range": d["range"],
        "severity": SEVERITY_NAMES.get(int(d.get("severity") or 1), "error"),
        "source": str(d.get("source") or ""),
        "code": "" if code is None else str(code),
        "message": str(d.get("message") or ""),
    }


async def gather(
    lsp: AgentLsp, files: list[Path], *, timeout: float, quiet: float = 1.0
) -> tuple[dict[Path, list[dict[str, Any]]], dict[Path, list[dict[str, Any]] | None]]:
    """Open (or re-sync) `files`, wait for their sources, and return each file's merged
    diagnostics and its source rows."""
    from lspmux.diagnostics.report import source_status

    docs = [await lsp.sync(p) for p in files]
    uris = [d.uri for d in docs]
    await lsp.settle(uris, timeout=timeout, quiet=quiet)
    try:
        states = await source_status(lsp.client, uris)
    except LspError:  # an lspmux that does not know the method: each file is "not said"
        states = {}
    except ReportError as exc:
        raise ToolError(f"lspmux could not say which sources reported: {exc}") from exc
    results = {d.path: list(lsp.client.diagnostics.get(d.uri, [])) for d in docs}
    return results, {d.path: states.get(d.uri) for d in docs}


async def diagnostics(
    lsp: AgentLsp, file: str, severity: str = "hint", timeout: int = 60
) -> Result:
    """Merged diagnostics of every server and linter, for the files' current text, with the
    sources that did not report named."""
    from lspmux.diagnostics.project import is_workspace_pattern

    if severity not in SEVERITIES:
        raise ToolError(f"severity is one of error, warning, information, hint (got {severity!r})")
    if is_workspace_pattern(file):
        results, sources = await _workspace(lsp, float(timeout))
    else:
        files = await asyncio.to_thread(expand_files, lsp, file)
        results, sources = await gather(lsp, files, timeout=float(timeout))
    return report(lsp, results, sources, severity=severity, timeout=float(timeout))


async def _workspace(
    lsp: AgentLsp, timeout: float
) -> tuple[dict[Path, list[dict[str, Any]]], dict[Path, list[dict[str, Any]] | None]]:
    from lspmux.agent import install
    from lspmux.diagnostics import project
    from lspmux.diagnostics.report import MAX_OPEN

    config = await asyncio.to_thread(install.load, lsp.root, lsp.configs)
    checks, to_open = await asyncio.to_thread(project.plan, lsp.root, config)
    results, sources = await project.run_checks(config, checks, timeout=timeout)
    opened, left = to_open[:MAX_OPEN], to_open[MAX_OPEN:]
    if opened:
        more, more_sources = await gather(lsp, opened, timeout=timeout)
        results.update(more)
        sources.update(more_sources)
    for path in left:
        results[path], sources[path] = [], [project.not_opened(MAX_OPEN)]
    return results, sources


def report(
    lsp: AgentLsp,
    results: dict[Path, list[dict[str, Any]]],
    sources: dict[Path, list[dict[str, Any]] | None],
    *,
    severity: str,
    timeout: float,
) -> Result:
    """The answer: the problems, then what was not checked and why; "OK" only when every
    file was checked and nothing was found."""
    from lspmux.diagnostics.report import format_report

    table: list[dict[str, Any]] = []
    for path, diags in results.items():
        for d in diags:
            if int(d.get("severity") or 1) <= SEVERITIES[severity]:
                table.append(diagnostic_row(lsp, path, d))
    table.sort(key=lambda r: (r["path"], SEVERITIES[r["severity"]], r["line"], r["column"]))
    unchecked: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for path, rows in sources.items():
        v = coverage.verdict(rows, timeout=timeout)
        unchecked += [{"path": lsp.label_path(path), **row} for row in v.unchecked]
        notes += [{"path": lsp.label_path(path), **row} for row in v.notes]
    n = len(results)
    if not table and not unchecked:
        text = f"OK: no problems in {render.plural(n, 'file')}"
        if notes:
            text = format_report([], n, [], notes).rpartition("\n")[0] + "\n" + text
    else:
        text = format_report(table, n, unchecked, notes)
    data = {
        "files": [lsp.label_path(p) for p in results],
        "checked": not unchecked,
        "diagnostics": table,
        "unchecked": unchecked,
        "notes": notes,
    }
    return Result(text, data)
