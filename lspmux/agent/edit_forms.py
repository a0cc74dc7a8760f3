"""The three ways an agent states an edit, as one `edits.Plan` (the files' texts before and
after; nothing written):

- `at` + `new_text`: the range a Locate string matches (`app.py:main@<|>x = 1<|>`, the
  text after `@` without a marker, or a symbol `app.py:Greeter.greet`) is replaced; a
  position (`app.py:12:5`, or one `<|>`: `app.py:main@<|>greeter =`) gets the text inserted;
- `diff`: a unified diff of one or more files (patches.py applies it to the current text);
- `edits`: a list of `{file, range, new_text}` (an LSP range, 0-based, in the session's
  encoding, as the tools' structured results give it) or `{at, new_text}`, over one or more
  files.
"""

from __future__ import annotations

from typing import Any

from lspmux.agent import edits as edit_plans
from lspmux.agent import patches
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp


async def plan(
    lsp: AgentLsp,
    *,
    at: str | None = None,
    new_text: str | None = None,
    diff: str | None = None,
    edits: list[dict[str, Any]] | None = None,
) -> edit_plans.Plan:
    """The plan of exactly one of the three forms; ToolError saying what is wrong."""
    given = [name for name, v in (("at", at), ("diff", diff), ("edits", edits)) if v is not None]
    if len(given) != 1:
        raise ToolError(
            "give the edit one way: `at` with `new_text`, or `diff` (a unified diff), or "
            f"`edits` (a list of {{file, range, new_text}} or {{at, new_text}}); got "
            f"{', '.join(given) or 'none'}"
        )
    if at is not None:
        if new_text is None:
            raise ToolError("`at` needs `new_text`: the text that replaces what `at` matches")
        return await from_edits(lsp, [{"at": at, "new_text": new_text}])
    if diff is not None:
        return await from_diff(lsp, diff)
    assert edits is not None
    return await from_edits(lsp, edits)


async def _text_edit(lsp: AgentLsp, item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(uri, LSP TextEdit) of one `{file, range, new_text}` or `{at, new_text}`."""
    if not isinstance(item, dict):
        raise ToolError(f"each edit is an object {{file, range, new_text}} or {{at, new_text}}; "
                        f"got {item!r}")  # fmt: skip
    text = item.get("new_text", item.get("newText"))
    if not isinstance(text, str):
        raise ToolError(f"edit {item!r} has no `new_text` (a string)")
    if "at" in item:
        at = str(item["at"])  # one <|> marks a position: insert there; else replace the match
        target = await lsp.target(at, want_range=at.count("<|>") != 1)
        rng = target.range or {"start": target.position, "end": target.position}
        return target.uri, {"range": rng, "newText": text}
    if "file" in item and isinstance(item.get("range"), dict):
        doc = await lsp.sync(lsp.path(str(item["file"])))
        return doc.uri, {"range": item["range"], "newText": text}
    raise ToolError(f"edit {item!r} needs `at`, or `file` and `range`")


async def from_edits(lsp: AgentLsp, items: list[dict[str, Any]]) -> edit_plans.Plan:
    if not isinstance(items, list) or not items:
        raise ToolError("`edits` is a non-empty list of {file, range, new_text} or {at, new_text}")
    by_uri: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        uri, edit = await _text_edit(lsp, item)
        by_uri.setdefault(uri, []).append(edit)
    return edit_plans.plan_edit({"changes": by_uri}, lsp.text_of, lsp.encoding)


async def from_diff(lsp: AgentLsp, diff: str) -> edit_plans.Plan:
    out = edit_plans.Plan()
    for patch in patches.parse_diff(diff):
        name = patch.new or patch.old
        assert name is not None
        path = lsp.path(name, must_exist=patch.old is not None)
        label = lsp.label_path(path)
        before = (await lsp.sync(path)).text if patch.old is not None else None
        if patch.new is None:
            out.files[path.as_uri()] = edit_plans.FileChange(path.as_uri(), before, None)
            continue
        if before is None and path.exists():
            raise ToolError(f"diff creates {label}, which exists", file=label)
        after = patches.apply_hunks(before or "", patch.hunks, label)
        out.files[path.as_uri()] = edit_plans.FileChange(path.as_uri(), before, after)
    return out
