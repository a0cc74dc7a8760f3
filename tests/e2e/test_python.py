"""A Python file through `lspmux proxy` with the real basedpyright and ruff behind it."""

from __future__ import annotations

from lsprotocol import types as t

from lspmux.text import apply_changes
from tests.e2e.conftest import Proxy, sources


def _has_both(diags: list[t.Diagnostic]) -> bool:
    return {"basedpyright", "ruff"} <= sources(diags)


async def test_diagnostics_from_two_servers_are_merged(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    diags = await proxy.diagnostics_where(uri, _has_both)
    by_source = {(d.source or "").lower(): d for d in diags}
    codes = {(d.source or "").lower(): set() for d in diags}
    for d in diags:
        codes[(d.source or "").lower()].add(str(d.code))
    assert "F401" in codes["ruff"]  # `import os` unused, from ruff
    assert "reportUndefinedVariable" in codes["basedpyright"]
    assert by_source["ruff"].range.start.line == 0


async def test_one_source_clearing_keeps_the_other(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    await proxy.diagnostics_where(uri, _has_both)
    # Remove `import os` (ruff's F401 and basedpyright's unused import go away), keep the
    # undefined name that both report.
    proxy.change(
        uri,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(0, 0), t.Position(1, 0)), text=""
            )
        ],
    )
    diags = await proxy.diagnostics_where(
        uri,
        lambda ds: _has_both(ds) and not any(str(d.code) == "F401" for d in ds),
    )
    assert all(d.range.start.line != 0 or str(d.code) != "F401" for d in diags)


async def test_hover_comes_from_the_first_server_that_answers(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    hover = await proxy.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(line=15, character=6))
    )
    assert hover is not None
    text = hover.contents.value if hasattr(hover.contents, "value") else str(hover.contents)
    assert "greeter: Greeter" in text


async def test_definition_crosses_to_the_class(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    result = await proxy.client.text_document_definition_async(
        t.DefinitionParams(t.TextDocumentIdentifier(uri), t.Position(line=15, character=16))
    )
    assert result
    first = result[0]
    target = first.target_range if hasattr(first, "target_range") else first.range
    assert target.start.line == 3  # class Greeter


async def test_completion_lists_members(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    result = await proxy.client.text_document_completion_async(
        t.CompletionParams(t.TextDocumentIdentifier(uri), t.Position(line=16, character=18))
    )
    items = result.items if hasattr(result, "items") else result
    labels = {i.label for i in items}
    assert "greet" in labels
    # The item resolves on the server it came from.
    item = next(i for i in items if i.label == "greet")
    resolved = await proxy.client.completion_item_resolve_async(item)
    assert resolved.label == "greet"


async def test_ruff_code_action_is_resolved_and_applies(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    diags = await proxy.diagnostics_where(uri, _has_both)
    f401 = [d for d in diags if str(d.code) == "F401"]
    actions = await proxy.client.text_document_code_action_async(
        t.CodeActionParams(
            t.TextDocumentIdentifier(uri),
            f401[0].range,
            t.CodeActionContext(diagnostics=f401, only=[t.CodeActionKind.QuickFix]),
        )
    )
    assert actions, "no code actions"
    titles = [a.title for a in actions]
    fix = next(
        (a for a in actions if isinstance(a, t.CodeAction) and "Remove unused import" in a.title),
        None,
    )
    assert fix is not None, f"ruff's fix is missing from {titles}"
    if fix.edit is None:
        fix = await proxy.client.code_action_resolve_async(fix)
    assert fix.edit is not None
    edits = []
    if fix.edit.document_changes:
        for change in fix.edit.document_changes:
            edits.extend(change.edits)
    else:
        edits = list(fix.edit.changes[uri])
    text = (proxy.workspace / "app.py").read_text()
    for e in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        text = apply_changes(
            text,
            [
                {
                    "range": {
                        "start": {"line": e.range.start.line, "character": e.range.start.character},
                        "end": {"line": e.range.end.line, "character": e.range.end.character},
                    },
                    "text": e.new_text,
                }
            ],
        )
    assert "import os" not in text
    assert "class Greeter" in text


async def test_formatting_reaches_ruff_through_its_dynamic_registration(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python", text="x  =  [1,2 ,3]\n")
    edits = await proxy.client.text_document_formatting_async(
        t.DocumentFormattingParams(t.TextDocumentIdentifier(uri), t.FormattingOptions(4, True))
    )
    assert edits, "ruff registers formatting dynamically; lspmux must route to it"
    assert any("[1, 2, 3]" in e.new_text for e in edits)
