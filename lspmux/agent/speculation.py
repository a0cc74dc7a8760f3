"""What an edit does to the diagnostics: `check_edit` (before anything is written) and the
`check` of the writing tools (after they wrote).

Both compare the problems of the files an edit touches before and after it, by file, source,
code, message and the text of their line (patches.difference), so a problem that only moved is
not new. `speculate` shows the new texts to the servers and linters as this session's unsaved
change and restores the old ones (through the daemon other clients keep their own text: they
are answered for it and never see these diagnostics); `check_written` reads the diagnostics of
what a tool just wrote. Each source's status (`lspmux/diagnosticStatus`) says when it reported
for the new text; one that did not is named (`unchecked`), never taken for "no problem".
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

from lspmux.agent import render
from lspmux.agent.checking import SEVERITIES, diagnostic_row, gather
from lspmux.agent.edits import Plan
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp
from lspmux.agent.patches import difference
from lspmux.agent.paths import uri_to_path
from lspmux.agent.tools import Result
from lspmux.diagnostics import coverage
from lspmux.headless import LspError

#: Quiet period after a new text is shown: the sources' statuses say when each has reported
#: for that version; this only lets a second publish of the same version arrive.
QUIET = 0.05
#: Seconds a writing tool's check waits for every source.
CHECK_TIMEOUT = 60.0


def problem_rows(lsp: AgentLsp, results: dict[Path, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Diagnostic rows with the text of their line, labelled against the text lspmux holds."""
    out: list[dict[str, Any]] = []
    for path, diags in results.items():
        for d in diags:
            row = diagnostic_row(lsp, path, d)
            row["line_text"] = lsp.line(path.as_uri(), int(d["range"]["start"]["line"])) or ""
            out.append(row)
    out.sort(key=lambda r: (r["path"], SEVERITIES[r["severity"]], r["line"], r["column"]))
    return out


class Speculation:
    """What an edit changes in its files' diagnostics."""

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

    def lines(self, title: str = "Introduced", *, fixed: bool = True) -> list[str]:
        """`Introduced N problems:` with one `path:line:col severity source code message`
        each, the same for the fixed ones, then the sources that did not check the text."""
        from lspmux.diagnostics.report import format_text

        def block(head: str, rows: list[dict[str, Any]]) -> list[str]:
            if not rows:
                return [f"{head} no problems."]
            body = format_text(rows, 1).rpartition("\n")[0].rstrip("\n")
            return [f"{head} {render.plural(len(rows), 'problem')}:", body]

        out = block(title, self.introduced)
        if fixed:
            out += block("Fixed", self.fixed)
        out += coverage.grouped_lines(self.unchecked, note=False)
        return out


def _renamed(lsp: AgentLsp, plan: Plan, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of files the plan moves, under their new names (a moved problem is not new)."""
    moves = {
        lsp.label_path(uri_to_path(old)): lsp.label_path(uri_to_path(new))
        for old, new in plan.renames
    }
    return [{**r, "path": moves.get(r["path"], r["path"])} for r in rows]


#: Per session: the problems of each file for the text a speculation restored, valid while no
#: document of the session changed since (its documents' versions are the stamp) — the next
#: check of the same text need not wait for the servers to analyse it again.
_RESTORED: weakref.WeakKeyDictionary[AgentLsp, tuple[Any, dict[str, tuple[str, list[Any]]]]] = (
    weakref.WeakKeyDictionary()
)


def _stamp(lsp: AgentLsp) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((uri, doc.version) for uri, doc in lsp.docs.items()))


async def _rows_before(lsp: AgentLsp, paths: list[Path], *, timeout: float) -> dict[str, Any]:
    """uri → problem rows of each file's current text (synced from disk)."""
    docs = [await lsp.sync(p) for p in paths]
    stamp, known = _RESTORED.get(lsp, (None, {}))
    if stamp == _stamp(lsp) and all(known.get(d.uri, ("", []))[0] == d.text for d in docs):
        return {d.uri: known[d.uri][1] for d in docs}
    results, _ = await gather(lsp, paths, timeout=timeout, quiet=QUIET)
    return {p.as_uri(): problem_rows(lsp, {p: found}) for p, found in results.items()}


async def baseline(lsp: AgentLsp, plan: Plan, *, timeout: float) -> list[dict[str, Any]]:
    """The problems of the files the plan touches, for the text it was computed on."""
    per_file = await _per_file_baseline(lsp, plan, timeout=timeout)
    return _renamed(lsp, plan, [r for rows in per_file.values() for r in rows])


async def _per_file_baseline(lsp: AgentLsp, plan: Plan, *, timeout: float) -> dict[str, Any]:
    """uri → problem rows of each file the plan changes, which must still hold the text the
    plan was computed on."""
    existing = [uri_to_path(c.uri) for c in plan.touched() if c.before is not None]
    rows = await _rows_before(lsp, existing, timeout=timeout)
    for change in plan.touched():
        doc = lsp.docs.get(change.uri)
        if change.before is not None and (doc is None or doc.text != change.before):
            label = lsp.label_path(uri_to_path(change.uri))
            raise ToolError(f"{label} changed since the edit was computed; compute it again",
                            file=label)  # fmt: skip
    return rows


async def _now(
    lsp: AgentLsp, uris: list[str], *, timeout: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The problems of `uris` for the text lspmux holds now, and the sources that did not
    report for it."""
    from lspmux.diagnostics.report import source_status

    await lsp.settle(uris, timeout=timeout, quiet=QUIET)
    try:
        states = await source_status(lsp.client, uris)
    except LspError:
        states = {}
    paths = {u: uri_to_path(u) for u in uris}
    rows = problem_rows(lsp, {paths[u]: list(lsp.client.diagnostics.get(u, [])) for u in uris})
    unchecked = [
        {"path": lsp.label_path(paths[u]), **row}
        for u in uris
        for row in coverage.verdict(states.get(u), timeout=timeout).unchecked
    ]
    return rows, unchecked


async def speculate(lsp: AgentLsp, plan: Plan, *, timeout: float) -> Speculation:
    """Show every new text of `plan` as this session's unsaved change, collect, restore."""
    per_file = await _per_file_baseline(lsp, plan, timeout=timeout)
    before = _renamed(lsp, plan, [r for rows in per_file.values() for r in rows])
    changes = [c for c in plan.touched() if c.after is not None]
    try:
        for change in changes:
            assert change.after is not None
            lsp.show(uri_to_path(change.uri), change.after)
        after, unchecked = await _now(lsp, [c.uri for c in changes], timeout=timeout)
    finally:
        for change in changes:
            if change.before is None:
                lsp.forget(change.uri)
            elif not lsp.client.closed:
                lsp.show(uri_to_path(change.uri), change.before)
    texts = {u: lsp.docs[u].text for u in per_file if u in lsp.docs}
    _RESTORED[lsp] = (_stamp(lsp), {u: (texts[u], per_file[u]) for u in texts})
    introduced, fixed = difference(before, after)
    return Speculation(introduced, fixed, unchecked)


async def check_written(
    lsp: AgentLsp, plan: Plan, before: list[dict[str, Any]], *, timeout: float
) -> Speculation:
    """After `plan` was written: the problems its files have now that `before` had not."""
    uris = []
    for change in plan.touched():
        if change.after is not None:
            uris.append((await lsp.sync(uri_to_path(change.uri))).uri)
    after, unchecked = await _now(lsp, uris, timeout=timeout)
    introduced, fixed = difference(before, after)
    return Speculation(introduced, fixed, unchecked)


async def check_edit(
    lsp: AgentLsp,
    at: str | None = None,
    new_text: str | None = None,
    diff: str | None = None,
    edits: list[dict[str, Any]] | str | None = None,
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
    assert not isinstance(edits, str)
    plan = await edit_forms.plan(lsp, at=at, new_text=new_text, diff=diff, edits=edits)
    if plan.empty:
        raise ToolError("check_edit: the edit changes nothing")
    spec = await speculate(lsp, plan, timeout=float(timeout))
    files = [lsp.label_path(uri_to_path(c.uri)) for c in plan.touched()]
    lines = spec.lines()
    lines.append(f"Nothing was written ({', '.join(files)} unchanged on disk).")
    return Result("\n".join(lines), {**spec.data(), "files": files, "written": False})
