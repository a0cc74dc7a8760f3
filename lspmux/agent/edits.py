"""WorkspaceEdits as an agent sees them: new file texts and a unified diff (pure functions).

`plan_edit` turns an LSP `WorkspaceEdit` (`changes` or `documentChanges`, with create/rename/
delete operations) into a `Plan`: per file, the text the edit was computed on and the text it
produces, plus the file operations in order. A create or rename onto an existing file is
refused (`ToolError`) unless the operation says `overwrite`, and skipped with
`ignoreIfExists`, as LSP clients do. `unified_diff` prints a plan as `--- a/path` /
`+++ b/path` hunks. Writing a plan is `apply.py`'s job.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from lspmux.agent.errors import ToolError
from lspmux.text import Encoding, line_starts, position_to_offset


class FileChange:
    """One file's texts: `before` (None: created by the edit) and `after` (None: deleted)."""

    __slots__ = ("after", "before", "uri")

    def __init__(self, uri: str, before: str | None, after: str | None) -> None:
        self.uri, self.before, self.after = uri, before, after


class Plan:
    """What an edit does: file contents by uri (in first-touched order) and renames."""

    def __init__(self) -> None:
        self.files: dict[str, FileChange] = {}
        self.renames: list[tuple[str, str]] = []

    def touched(self) -> list[FileChange]:
        return [c for c in self.files.values() if c.before != c.after]

    @property
    def empty(self) -> bool:
        return not self.touched() and not self.renames


def apply_text_edits(text: str, edits: list[dict[str, Any]], encoding: Encoding) -> str:
    """`text` with LSP `TextEdit`s applied (all ranges refer to the original text)."""
    starts = line_starts(text)
    spans: list[tuple[int, int, int, str]] = []
    for i, edit in enumerate(edits):
        rng = edit["range"]
        a = position_to_offset(
            text, starts, rng["start"]["line"], rng["start"]["character"], encoding
        )
        b = position_to_offset(text, starts, rng["end"]["line"], rng["end"]["character"], encoding)
        spans.append((min(a, b), max(a, b), i, str(edit.get("newText", ""))))
    spans.sort()
    out: list[str] = []
    pos = 0
    for a, b, _, new in spans:
        if a < pos:  # overlapping edits: the spec forbids them; keep the first
            continue
        out.append(text[pos:a])
        out.append(new)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def plan_edit(
    edit: dict[str, Any] | None, read: Callable[[str], str | None], encoding: Encoding
) -> Plan:
    """The plan of a `WorkspaceEdit`; `read(uri)` gives a file's current text (None: missing)."""
    plan = Plan()
    if not edit:
        return plan

    def current(uri: str) -> FileChange:
        change = plan.files.get(uri)
        if change is None:
            text = read(uri)
            change = plan.files[uri] = FileChange(uri, text, text)
        return change

    if edit.get("documentChanges"):
        for op in edit["documentChanges"]:
            kind = op.get("kind")
            if kind == "create":
                change = current(op["uri"])
                if change.after is not None and not _may_replace(op, op["uri"], "creates"):
                    continue  # ignoreIfExists
                change.after = ""
            elif kind == "rename":
                old, new = current(op["oldUri"]), current(op["newUri"])
                if old.after is None:
                    raise ToolError(
                        f"the edit renames {op['oldUri']}, which does not exist; nothing was "
                        "written",
                        uri=op["oldUri"],
                    )
                if new.after is not None and not _may_replace(op, op["newUri"], "renames onto"):
                    continue  # ignoreIfExists
                new.after, old.after = old.after, None
                plan.renames.append((op["oldUri"], op["newUri"]))
            elif kind == "delete":
                current(op["uri"]).after = None
            else:
                change = current(op["textDocument"]["uri"])
                change.after = apply_text_edits(change.after or "", op.get("edits") or [], encoding)
    else:
        for uri, edits in (edit.get("changes") or {}).items():
            change = current(uri)
            change.after = apply_text_edits(change.after or "", edits or [], encoding)
    return plan


def _may_replace(op: dict[str, Any], uri: str, verb: str) -> bool:
    """Whether a create or rename may replace the existing file `uri`: True with `overwrite`
    (which wins over `ignoreIfExists`, as the protocol says), False with `ignoreIfExists` (the
    operation is skipped); refused otherwise, as LSP clients do."""
    options = op.get("options") or {}
    if options.get("overwrite"):
        return True
    if options.get("ignoreIfExists"):
        return False
    raise ToolError(
        f"the edit {verb} {uri}, which exists, without `overwrite` or `ignoreIfExists`; "
        "nothing was written (an LSP client refuses it too)",
        uri=uri,
        exists=True,
    )


def unified_diff(plan: Plan, label: Callable[[str], str]) -> str:
    """The plan as one unified diff; `label(uri)` names a file (relative to the root)."""
    parts: list[str] = []
    renamed_to = {new: old for old, new in plan.renames}
    for change in plan.files.values():
        if change.uri in dict(plan.renames) and change.after is None:
            continue  # shown under its new name
        origin = renamed_to.get(change.uri)
        before = change.before
        if origin is not None:
            before = plan.files[origin].before
        if before == change.after and origin is None:
            continue
        a = "/dev/null" if before is None else f"a/{label(origin or change.uri)}"
        b = "/dev/null" if change.after is None else f"b/{label(change.uri)}"
        lines = list(
            difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                (change.after or "").splitlines(keepends=True),
                a,
                b,
            )
        )
        if not lines:  # a pure rename
            lines = [f"--- {a}\n", f"+++ {b}\n"]
        for line in lines:
            parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(parts)
