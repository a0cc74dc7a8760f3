"""Whether a file was checked: "clean" means every source diagnosed that text (DESIGN 9).

Pure functions over the source rows lspmux reports for a document (`lspmux/diagnosticStatus`
`sources`, or the rows a project check builds): `{name, role, state, detail?, install?,
stderr?}` with `state` one of `reported`, `pending`, `silent`, `failed`, `missing`, `skipped`.

The rule (also in docs/agents.md and `lspmux diagnostics --help`):
- a source that crashed (`failed`), had not reported when the wait ended (`pending`), or was
  not waited for because it has diagnosed nothing since it started (`silent`) leaves the file
  **not checked**;
- a source that is not installed (`missing`) leaves it not checked when no server of the file
  (role "server"; the linters when the file has no server) reported — the default table lists
  alternatives (pyright beside basedpyright) that a user installs one of, so one that did
  report checks the file and the others are notes;
- a file that no server or linter applies to is not checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

#: Exit statuses of `lspmux diagnostics` and the `diagnostics` verb.
EXIT_CLEAN, EXIT_PROBLEMS, EXIT_NOT_CHECKED = 0, 1, 2


class Coverage(NamedTuple):
    """One file's verdict: `unchecked` rows keep it from being clean; `notes` do not."""

    checked: bool
    unchecked: list[dict[str, Any]]
    notes: list[dict[str, Any]]


def verdict(sources: Sequence[dict[str, Any]] | None, *, timeout: float) -> Coverage:
    """The verdict for one file from its source rows (None: lspmux did not say)."""
    if sources is None:
        row = {"source": "lspmux", "state": "unknown",
               "reason": "lspmux did not say which sources reported (an older daemon? "
                         "restart it with `lspmux server --restart`)"}  # fmt: skip
        return Coverage(False, [row], [])
    if not sources:
        row = {"source": "-", "state": "none",
               "reason": "no server or linter is configured for this file type "
                         "(see `lspmux config`)"}  # fmt: skip
        return Coverage(False, [row], [])
    servers = [s for s in sources if s.get("role") == "server"]
    core = servers or list(sources)
    covered = any(s.get("state") == "reported" for s in core)
    unchecked: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for s in sources:
        state = s.get("state")
        if state == "reported":
            continue
        row = explain(s, timeout=timeout)
        if state in ("failed", "pending", "silent") or (state == "missing" and not covered):
            unchecked.append(row)
        else:
            notes.append(row)
    if not covered:  # nothing checked it: what did not run is why
        unchecked, notes = unchecked + notes, []
        if not unchecked:
            unchecked.append({"source": "-", "state": "none", "reason": "no source reported"})
    return Coverage(not unchecked, unchecked, notes)


def explain(source: dict[str, Any], *, timeout: float) -> dict[str, Any]:
    """A row saying why `source` did not report, and what to do."""
    name, state = str(source.get("name") or "?"), source.get("state")
    detail = str(source.get("detail") or "")
    row: dict[str, Any] = {"source": name, "state": state}
    if state == "missing":
        install = source.get("install")
        row["reason"] = "not installed" + (f"; install: {install}" if install else "")
        if install:
            row["install"] = install
    elif state == "failed":
        row["reason"] = f"crashed ({detail})" if detail else "crashed"
    elif state == "pending":
        row["reason"] = f"still analysing: no diagnostics for this text within {timeout:g}s"
        if detail:
            row["reason"] += f" ({detail})"
    else:
        row["reason"] = detail or str(state)
    stderr = [str(line) for line in source.get("stderr") or []][-10:]
    if stderr:
        row["stderr"] = stderr
    return row


def grouped_lines(rows: Sequence[dict[str, Any]], *, note: bool) -> list[str]:
    """`path: not checked by SOURCE: reason` (or `note: SOURCE did not run`), one line per
    (source, reason) naming its files (the first three, and how many more); a crash is
    followed by its stderr's last lines."""
    groups: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for row in rows:
        key = (str(row["source"]), str(row["reason"]), tuple(row.get("stderr") or ()))
        groups.setdefault(key, []).append(str(row["path"]))
    lines: list[str] = []
    for (source, reason, stderr), paths in groups.items():
        where = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        if note:
            lines.append(f"{where}: note: {source} did not run: {reason}")
            continue
        who = f" by {source}" if source != "-" else ""
        lines.append(f"{where}: not checked{who}: {reason}")
        if stderr:
            lines.append("    its stderr ended with:")
            lines += [f"    | {line}" for line in stderr]
    return lines


def exit_status(errors: bool, all_checked: bool) -> int:
    """1 when an error was found (it is there, whatever did not report), else 2 when some
    file was not checked, else 0."""
    if errors:
        return EXIT_PROBLEMS
    return EXIT_CLEAN if all_checked else EXIT_NOT_CHECKED
