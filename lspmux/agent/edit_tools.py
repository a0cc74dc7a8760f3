"""The editing tools: rename, rename_file, code_actions, format.

Each computes a WorkspaceEdit from the servers and shows it as a unified diff; nothing is
written unless `apply` is given, and then through `AgentLsp.write` (inside the root only,
atomically, only when the files still hold the text the edit was computed on, never over an
editor's unsaved buffer; the servers are told afterwards).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lspmux.agent import edits, render, speculation, writing
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp
from lspmux.agent.paths import uri_to_path
from lspmux.agent.tools import Result

PREVIEW_NOTE = "Preview only: nothing was written. Call again with apply=true to write it."


def make_plan(lsp: AgentLsp, edit: dict[str, Any] | None) -> edits.Plan:
    return edits.plan_edit(edit, lsp.text_of, lsp.encoding)


def diff_of(lsp: AgentLsp, plan: edits.Plan) -> str:
    return edits.unified_diff(plan, lambda uri: lsp.label_path(uri_to_path(uri)))


async def show_or_write(
    lsp: AgentLsp,
    plan: edits.Plan,
    apply: bool,
    what: str,
    *,
    check: bool = False,
    after_write: Callable[[], Any] | None = None,
) -> Result:
    """The diff of a plan; with `apply`, the plan written (and the servers told). With
    `check`, the problems it introduces in the files it touches (speculation.py): those it
    would introduce for a preview, those the written files have for a write."""
    diff = diff_of(lsp, plan)
    files = [lsp.label_path(uri_to_path(c.uri)) for c in plan.touched()]
    data: dict[str, Any] = {"diff": diff, "files": files, "applied": False}
    if plan.empty:
        return Result(f"{what}: no change", data)
    if not apply:
        note = PREVIEW_NOTE
        dirty = await writing.unsaved_elsewhere(lsp, [c.uri for c in plan.touched()])
        if dirty:
            names = ", ".join(lsp.label_path(uri_to_path(u)) for u in dirty)
            note += (
                f" Warning: {names} has unsaved changes in another client (an editor); the "
                "servers may have computed this edit on that buffer, and apply will refuse it "
                "until it is saved."
            )
            data["unsaved"] = [lsp.label_path(uri_to_path(u)) for u in dirty]
        text = f"{diff}\n{note}"
        if check:
            spec = await speculation.speculate(lsp, plan, timeout=speculation.CHECK_TIMEOUT)
            text += "\n" + _check_text(spec, data, "Would introduce")
        return Result(text, data)
    before = None
    if check:
        before = await speculation.baseline(lsp, plan, timeout=speculation.CHECK_TIMEOUT)
    written = await writing.write(lsp, plan)
    data.update(applied=True, written=written)
    if after_write is not None:
        after_write()
    text = f"{diff}\nApplied: wrote {render.plural(len(files), 'file')}."
    if before is not None:
        spec = await speculation.check_written(lsp, plan, before, timeout=speculation.CHECK_TIMEOUT)
        text += "\n" + _check_text(spec, data, "Introduced")
    return Result(text, data)


def _check_text(spec: speculation.Speculation, data: dict[str, Any], title: str) -> str:
    """Only the new problems (half-finished code elsewhere is not noise); `data` gets
    `introduced`, `checked` and `unchecked`."""
    data.update(introduced=spec.introduced, checked=not spec.unchecked, unchecked=spec.unchecked)
    return "\n".join(spec.lines(title, fixed=False))


async def rename(
    lsp: AgentLsp,
    at: str,
    new_name: str,
    symbol: str | None = None,
    apply: bool = False,
    check: bool = True,
) -> Result:
    """Rename the symbol at `at` everywhere the servers know it."""
    if not new_name:
        raise ToolError("new_name is empty: give the symbol's new name")
    target = await lsp.target(at, symbol)
    await lsp.settle([target.uri], quiet=0.0)  # a cold server would miss other files' uses
    where = {"textDocument": {"uri": target.uri}, "position": target.position}
    edit = await lsp.request("textDocument/rename", {**where, "newName": new_name})
    if not edit:
        raise ToolError(f"the servers cannot rename anything at {target.label}", at=target.label)
    result = await show_or_write(lsp, make_plan(lsp, edit), apply, "rename", check=check)
    result.data.update(at=target.label, position=target.position, new_name=new_name)
    return result


async def rename_file(
    lsp: AgentLsp, from_: str, to: str, apply: bool = False, check: bool = True
) -> Result:
    """Move a file; the servers' `workspace/willRenameFiles` edits (imports) come with it."""
    old = lsp.path(from_)
    new = lsp.path(to, must_exist=False)
    if new.exists():
        raise ToolError(f"{lsp.label_path(new)} already exists; choose another name")
    await lsp.sync(old)
    await lsp.open_languages()
    files = [{"oldUri": old.as_uri(), "newUri": new.as_uri()}]
    try:
        edit = await lsp.request("workspace/willRenameFiles", {"files": files})
    except ToolError:
        edit = None  # no server takes part in file operations: a plain move
    plan = make_plan(lsp, edit)
    change = plan.files.get(old.as_uri())
    content = change.after if change is not None else lsp.text_of(old.as_uri())
    plan.files[old.as_uri()] = edits.FileChange(
        old.as_uri(), change.before if change else content, None
    )
    plan.files[new.as_uri()] = edits.FileChange(new.as_uri(), None, content)
    plan.renames.append((old.as_uri(), new.as_uri()))
    result = await show_or_write(
        lsp, plan, apply, "rename_file", check=check,
        after_write=lambda: lsp.client.notify("workspace/didRenameFiles", {"files": files}),
    )  # fmt: skip
    moved = f"{lsp.label_path(old)} to {lsp.label_path(new)}"
    if result.data["applied"]:
        await lsp.sync(new)
        others = len(result.data["files"]) - 2
        edited = f"; edited {render.plural(others, 'other file')}" if others > 0 else ""
        head, _, checked = result.text.partition("\nApplied: ")
        checked = checked.partition("\n")[2]
        result.text = f"{head}\nApplied: moved {moved}{edited}." + (
            f"\n{checked}" if checked else ""
        )
    result.data.update(**{"from": lsp.label_path(old), "to": lsp.label_path(new)})
    return result


async def code_actions(
    lsp: AgentLsp,
    at: str,
    symbol: str | None = None,
    kind: str | None = None,
    apply: str | int | None = None,
    check: bool = True,
) -> Result:
    """The code actions at a position or Locate range; `apply` picks one (index or title
    substring), resolves it, writes its edit and runs its command."""
    target = await lsp.target(at, symbol, want_range=True)
    rng = target.range or {"start": target.position, "end": target.position}
    await lsp.settle([target.uri], quiet=0.0)
    context: dict[str, Any] = {
        "diagnostics": [
            d for d in lsp.client.diagnostics.get(target.uri, []) if _overlaps(d["range"], rng)
        ]
    }
    if kind:
        context["only"] = [kind]
    actions = await lsp.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": target.uri}, "range": rng, "context": context},
    )
    actions = [a for a in actions or [] if not kind or str(a.get("kind", "")).startswith(kind)]
    listing = [
        {"index": i, "title": a.get("title", ""), "kind": a.get("kind", "")}
        for i, a in enumerate(actions)
    ]
    lines = [f"{a['index']}: [{a['kind'] or 'command'}] {a['title']}" for a in listing]
    data: dict[str, Any] = {"at": target.label, "range": rng, "actions": listing}
    if apply is None or apply == "":
        text = render.counted(f"at {target.label}", len(lines), "code action", lines)
        return Result(text, data)
    chosen = _choose(actions, apply)
    return await _run_action(lsp, chosen, data, check)


def _choose(actions: list[dict[str, Any]], apply: str | int) -> dict[str, Any]:
    titles = [a.get("title", "") for a in actions]
    if isinstance(apply, int) or str(apply).isdigit():
        i = int(apply)
        if 0 <= i < len(actions):
            return actions[i]
        raise ToolError(f"no code action {i}: there are {len(actions)} (0..{len(actions) - 1})")
    hits = [a for a, t in zip(actions, titles, strict=True) if str(apply).lower() in t.lower()]
    if len(hits) != 1:
        found = "matches none" if not hits else f"matches {len(hits)}"
        raise ToolError(
            f"apply={apply!r} {found} of the titles: {titles}; give an index or a longer title",
            titles=titles,
        )
    return hits[0]


async def _run_action(
    lsp: AgentLsp, action: dict[str, Any], data: dict[str, Any], check: bool
) -> Result:
    if "command" in action and isinstance(action["command"], str):  # a bare Command
        action = {"title": action.get("title", ""), "command": action}
    if "edit" not in action and "data" in action:
        action = await lsp.request("codeAction/resolve", action) or action
    diffs: list[str] = []
    written: list[str] = []
    checks: list[tuple[edits.Plan, list[dict[str, Any]]]] = []
    if action.get("edit"):
        plan = make_plan(lsp, action["edit"])
        before = await speculation.baseline(lsp, plan, timeout=60) if check else []
        result = await show_or_write(lsp, plan, True, "code action")
        diffs.append(result.data["diff"])
        written += result.data.get("written", [])
        checks.append((plan, before))
    command = action.get("command")
    if command:

        async def apply_edit(edit: dict[str, Any]) -> dict[str, Any]:
            plan = make_plan(lsp, edit)
            # the server waits for this answer: what its files had, without asking it again
            before = speculation.problem_rows(lsp, {
                uri_to_path(c.uri): list(lsp.client.diagnostics.get(c.uri, []))
                for c in plan.touched() if c.before is not None
            })  # fmt: skip
            try:
                result = await show_or_write(lsp, plan, True, "command")
            except ToolError as exc:
                return {"applied": False, "failureReason": exc.message}
            diffs.append(result.data["diff"])
            written.extend(result.data.get("written", []))
            checks.append((plan, before))
            return {"applied": True}

        lsp.apply_handler = apply_edit
        try:
            await lsp.request(
                "workspace/executeCommand",
                {"command": command["command"], "arguments": command.get("arguments") or []},
            )
        finally:
            lsp.apply_handler = None
    diff = "".join(diffs)
    data.update(applied=action.get("title", ""), diff=diff, written=written)
    head = f"Applied {action.get('title', '')!r}: wrote {render.plural(len(written), 'file')}."
    text = f"{diff}\n{head}" if diff else head
    if check and checks:
        found = [await speculation.check_written(lsp, p, b, timeout=60) for p, b in checks]
        merged = speculation.Speculation(
            [r for f in found for r in f.introduced], [], [r for f in found for r in f.unchecked]
        )
        text += "\n" + _check_text(merged, data, "Introduced")
    return Result(text, data)


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def key(p: dict[str, Any]) -> tuple[int, int]:
        return int(p["line"]), int(p["character"])

    return key(a["start"]) <= key(b["end"]) and key(b["start"]) <= key(a["end"])


async def format(lsp: AgentLsp, file: str, apply: bool = False, check: bool = True) -> Result:
    """The formatting edits of the file's formatter, as a diff."""
    path = lsp.path(file)
    doc = await lsp.sync(path)
    options = {"tabSize": 4, "insertSpaces": True, "trimTrailingWhitespace": True}
    text_edits = await lsp.request(
        "textDocument/formatting", {"textDocument": {"uri": doc.uri}, "options": options}
    )
    plan = make_plan(lsp, {"changes": {doc.uri: text_edits or []}})
    result = await show_or_write(lsp, plan, apply, f"format {lsp.label_path(path)}", check=check)
    result.data["file"] = lsp.label_path(path)
    return result
