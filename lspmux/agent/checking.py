"""The checking tools: `diagnostics` (never a false all-clear) and what they share.

`diagnostics` answers for the files' current text on disk, merged over every server and
linter, and says "OK" only when every source that applies to each file diagnosed that text
(lspmux/diagnostics/coverage.py has the rule); otherwise it names each source that did not
report and why (not installed — with the install command; crashed — with its stderr's last
lines; still analysing — after `timeout` seconds). `"*"` and `"**"` are the whole workspace:
project checks where the table has them, the other files opened (lspmux/diagnostics/project.py).
"""

from __future__ import annotations

import asyncio
import json
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
    lsp: AgentLsp, files: list[Path], *, timeout: float
) -> tuple[dict[Path, list[dict[str, Any]]], dict[Path, list[dict[str, Any]] | None]]:
    """Open (or re-sync) `files`, wait for their sources, and return each file's merged
    diagnostics and its source rows."""
    from lspmux.diagnostics.report import source_status

    docs = [await lsp.sync(p) for p in files]
    uris = [d.uri for d in docs]
    await lsp.settle(uris, timeout=timeout)
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


# -- check before writing -----------------------------------------------------------------------

#: Quiet period after the speculative text is shown: the sources' statuses say when each has
#: reported for that version; this only lets a second publish of the same version arrive.
SPECULATIVE_QUIET = 0.3


def problem_rows(lsp: AgentLsp, results: dict[Path, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Diagnostic rows with the text of their line (compared across an edit that moves them),
    labelled against the text lspmux holds now."""
    out: list[dict[str, Any]] = []
    for path, diags in results.items():
        for d in diags:
            row = diagnostic_row(lsp, path, d)
            row["line_text"] = lsp.line(path.as_uri(), int(d["range"]["start"]["line"])) or ""
            out.append(row)
    out.sort(key=lambda r: (r["path"], SEVERITIES[r["severity"]], r["line"], r["column"]))
    return out


class Speculation:
    """What an edit would change in its files' diagnostics (nothing written)."""

    def __init__(
        self,
        introduced: list[dict[str, Any]],
        fixed: list[dict[str, Any]],
        unchecked: list[dict[str, Any]],
    ) -> None:
        self.introduced, self.fixed, self.unchecked = introduced, fixed, unchecked

    def data(self) -> dict[str, Any]:
        return {
            "introduced": self.introduced,
            "fixed": self.fixed,
            "checked": not self.unchecked,
            "unchecked": self.unchecked,
        }

    def lines(self, *, fixed: bool = True) -> list[str]:
        """`Introduced N problems:` with one `path:line:col severity source code message` each,
        the same for the fixed ones, then what could not check the new text."""
        from lspmux.diagnostics.report import format_text

        def block(title: str, rows: list[dict[str, Any]]) -> list[str]:
            if not rows:
                return [f"{title} no problems."]
            body = format_text(rows, 1).rpartition("\n")[0].rstrip("\n")
            return [f"{title} {render.plural(len(rows), 'problem')}:", body]

        out = block("Introduced", self.introduced)
        if fixed:
            out += block("Fixed", self.fixed)
        out += coverage.grouped_lines(self.unchecked, note=False)
        return out


async def speculate(lsp: AgentLsp, plan: Any, *, timeout: float) -> Speculation:
    """Show every file of `plan` (edits.Plan) with its new text to its servers and linters as
    this session's unsaved change, collect their diagnostics for it, restore the text, and
    compare with the diagnostics of the text before. Other clients of the daemon keep theirs."""
    from lspmux.agent.patches import difference
    from lspmux.agent.paths import uri_to_path
    from lspmux.diagnostics.report import source_status

    changes = [c for c in plan.touched() if c.after is not None]
    paths = {c.uri: uri_to_path(c.uri) for c in changes}
    existing = [paths[c.uri] for c in changes if c.before is not None]
    base, _ = await gather(lsp, existing, timeout=timeout)
    for c in changes:
        doc = lsp.docs.get(c.uri)
        if c.before is not None and (doc is None or doc.text != c.before):
            raise ToolError(
                f"{lsp.label_path(paths[c.uri])} changed since the edit was computed; "
                "compute it again", file=lsp.label_path(paths[c.uri]),
            )  # fmt: skip
    before = problem_rows(lsp, base)
    try:
        for c in changes:
            lsp.show(paths[c.uri], c.after)
        uris = list(paths)
        await lsp.settle(uris, timeout=timeout, quiet=SPECULATIVE_QUIET)
        try:
            states = await source_status(lsp.client, uris)
        except LspError:
            states = {}
        after = problem_rows(lsp, {paths[u]: list(lsp.client.diagnostics.get(u, [])) for u in uris})
        unchecked = [
            {"path": lsp.label_path(paths[u]), **row}
            for u in uris
            for row in coverage.verdict(states.get(u), timeout=timeout).unchecked
        ]
    finally:
        for c in changes:
            if c.before is None:
                lsp.forget(c.uri)
            elif not lsp.client.closed:
                lsp.show(paths[c.uri], c.before)
    introduced, fixed = difference(before, after)
    return Speculation(introduced, fixed, unchecked)


async def check_edit(
    lsp: AgentLsp,
    at: str | None = None,
    new_text: str | None = None,
    diff: str | None = None,
    edits: list[dict[str, Any]] | None = None,
    timeout: int = 60,
) -> Result:
    """The problems an edit would introduce and fix, from every server and linter of the
    files it touches; nothing is written."""
    from lspmux.agent import edit_forms

    if isinstance(edits, str):
        try:
            edits = json.loads(edits)
        except ValueError as exc:
            raise ToolError(f"`edits` is not JSON: {exc}") from exc
    plan = await edit_forms.plan(lsp, at=at, new_text=new_text, diff=diff, edits=edits)
    if plan.empty:
        raise ToolError("check_edit: the edit changes nothing")
    spec = await speculate(lsp, plan, timeout=float(timeout))
    files = [lsp.label_path(edit_forms.path_of(c.uri)) for c in plan.touched()]
    lines = spec.lines()
    lines.append(f"Nothing was written ({', '.join(files)} unchanged on disk).")
    return Result("\n".join(lines), {**spec.data(), "files": files, "written": False})
