"""Writing a plan from a session: refused while another client of the daemon has unsaved
changes in one of its files, checked and written atomically (`apply.write_plan`), then the
servers told (didChange + didSave for open documents, didChangeWatchedFiles for the rest) so
the next query sees the new text.
"""

from __future__ import annotations

import time
from typing import Any

from lspmux.agent import paths
from lspmux.agent.apply import write_plan
from lspmux.agent.edits import Plan
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp


async def unsaved_elsewhere(lsp: AgentLsp, uris: list[str]) -> list[str]:
    """The uris another client of the daemon holds open with unsaved changes."""
    if lsp.daemon_query is None or not uris:
        return []
    from lspmux.daemon.dial import ShimError

    try:
        result = await lsp.daemon_query("lspmux/documents", {"uris": uris})
    except (OSError, ShimError) as exc:
        raise ToolError(
            f"cannot ask the lspmux daemon whether an editor has unsaved changes ({exc}); "
            "nothing was written"
        ) from exc
    return sorted({d["uri"] for d in (result or {}).get("documents") or () if d.get("unsaved")})


async def write(lsp: AgentLsp, plan: Plan) -> list[str]:
    """Write a plan (checked: inside the root, unchanged on disk, not being edited in
    another client) and tell the servers; the labels of the files written."""
    dirty = await unsaved_elsewhere(lsp, [c.uri for c in plan.touched()])
    if dirty:
        names = ", ".join(lsp.label_path(paths.uri_to_path(u)) for u in dirty)
        raise ToolError(
            f"{names} is open with unsaved changes in another client of the lspmux daemon "
            "(an editor); nothing was written. Save or revert it there, then ask again",
            unsaved=[lsp.label_path(paths.uri_to_path(u)) for u in dirty],
        )
    written = write_plan(plan, lsp.root)
    notify_written(lsp, plan)
    return [lsp.label_path(p) for p in written]


def notify_written(lsp: AgentLsp, plan: Plan) -> None:
    """Tell the servers what changed on disk: open documents get didChange + didSave,
    the rest a didChangeWatchedFiles (created 1, changed 2, deleted 3)."""
    events: list[dict[str, Any]] = []
    for change in plan.files.values():
        doc = lsp.docs.get(change.uri)
        if change.after is None:
            lsp.forget(change.uri)
            events.append({"uri": change.uri, "type": 3})
        elif doc is not None and change.after != doc.text:
            doc.version += 1
            doc.text, doc.synced = change.after, time.monotonic()
            td = {"uri": change.uri, "version": doc.version}
            lsp.client.notify(
                "textDocument/didChange",
                {"textDocument": td, "contentChanges": [{"text": change.after}]},
            )
            lsp.client.notify("textDocument/didSave", {"textDocument": {"uri": change.uri}})
            events.append({"uri": change.uri, "type": 2})
        elif doc is None and change.before != change.after:
            events.append({"uri": change.uri, "type": 1 if change.before is None else 2})
    if events:
        lsp.client.notify("workspace/didChangeWatchedFiles", {"changes": events})
