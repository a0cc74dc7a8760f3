"""Whole messages between encodings, per method: each structure is built once per encoding
(columns computed by Python's codecs) and converting one build must give the other exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import lspmux.routing.table  # noqa: F401  (hands the routes' shapes to positions)
from lspmux.session.positions import convert_notification, convert_params, convert_result
from lspmux.text import Encoding

A = "file:///ws/a.c"
B = "file:///ws/b.c"
DOCS = {
    A: 's = "é中😀"; name = 1;\n// 😀😀 ok name\nplain name\n',
    B: "x\U0001d518\U0001d518\U0001d518 = é + ok;\nB2 ok\n",
}
PAIRS = [("utf-8", "utf-16"), ("utf-16", "utf-8"), ("utf-32", "utf-16"), ("utf-8", "utf-32")]


def col(uri: str, line: int, index: int, enc: Encoding) -> int:
    prefix = DOCS[uri].split("\n")[line][:index]
    if enc == "utf-8":
        return len(prefix.encode())
    if enc == "utf-16":
        return len(prefix.encode("utf-16-le")) // 2
    return len(prefix)


class Build:
    """Positions and ranges of one encoding, given as (line, code point index)."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc

    def p(self, uri: str, line: int, index: int) -> dict[str, int]:
        return {"line": line, "character": col(uri, line, index, self.enc)}

    def r(self, uri: str, a: tuple[int, int], b: tuple[int, int]) -> dict[str, Any]:
        return {"start": self.p(uri, *a), "end": self.p(uri, *b)}

    def loc(self, uri: str, a: tuple[int, int], b: tuple[int, int]) -> dict[str, Any]:
        return {"uri": uri, "range": self.r(uri, a, b)}

    def diag(self, uri: str) -> dict[str, Any]:
        return {
            "range": self.r(uri, (0, 12), (0, 16)),
            "message": "unused",
            "relatedInformation": [{"location": self.loc(B, (0, 7), (0, 8)), "message": "in b"}],
        }

    def edit(
        self, uri: str, a: tuple[int, int], b: tuple[int, int], **extra: Any
    ) -> dict[str, Any]:
        return {"range": self.r(uri, a, b), "newText": "x", **extra}


TD = {"textDocument": {"uri": A}}


def s_hover(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "position": b.p(A, 0, 13)}
    return (
        "textDocument/hover",
        params,
        {"contents": "x", "range": b.r(A, (0, 12), (0, 16))},
        params,
    )


def s_definition(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "position": b.p(A, 1, 10)}
    result = [b.loc(A, (1, 10), (1, 14)), b.loc(B, (0, 7), (0, 9))]
    return "textDocument/definition", params, result, params


def s_definition_links(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "position": b.p(A, 0, 13)}
    result = [
        {
            "originSelectionRange": b.r(A, (0, 12), (0, 16)),
            "targetUri": B,
            "targetRange": b.r(B, (0, 0), (0, 12)),
            "targetSelectionRange": b.r(B, (0, 7), (0, 8)),
        }
    ]
    return "textDocument/definition", params, result, params


def s_single_location(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "position": b.p(A, 0, 13)}
    return "textDocument/declaration", params, b.loc(B, (0, 5), (0, 6)), params


def s_symbols(b: Build) -> tuple[str, Any, Any, Any]:
    child = {
        "name": "c",
        "kind": 13,
        "range": b.r(A, (1, 6), (1, 14)),
        "selectionRange": b.r(A, (1, 10), (1, 14)),
    }
    sym = {
        "name": "name",
        "kind": 13,
        "range": b.r(A, (0, 0), (0, 20)),
        "selectionRange": b.r(A, (0, 12), (0, 16)),
        "children": [child],
    }
    return "textDocument/documentSymbol", TD, [sym], TD


def s_symbol_information(b: Build) -> tuple[str, Any, Any, Any]:
    result = [{"name": "name", "kind": 13, "location": b.loc(A, (0, 12), (0, 16))}]
    return "textDocument/documentSymbol", TD, result, TD


def s_workspace_symbol(b: Build) -> tuple[str, Any, Any, Any]:
    result = [
        {"name": "x", "kind": 13, "location": b.loc(B, (0, 5), (0, 6))},
        {"name": "y", "kind": 13, "location": {"uri": A}},  # WorkspaceSymbol without range
    ]
    return "workspace/symbol", {"query": "x"}, result, {"query": "x"}


def s_completion(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "position": b.p(A, 0, 16)}
    items = [
        {"label": "a", "textEdit": b.edit(A, (0, 12), (0, 16))},
        {
            "label": "b",
            "textEdit": {
                "newText": "b",
                "insert": b.r(A, (0, 12), (0, 14)),
                "replace": b.r(A, (0, 12), (0, 16)),
            },
            "additionalTextEdits": [b.edit(A, (1, 3), (1, 5))],
        },
        {"label": "c"},
    ]
    result = {
        "isIncomplete": False,
        "itemDefaults": {"editRange": b.r(A, (0, 12), (0, 16))},
        "items": items,
    }
    return "textDocument/completion", params, result, params


def s_completion_list(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "position": b.p(A, 0, 16)}
    result = [{"label": "a", "textEdit": b.edit(A, (0, 12), (0, 16), annotationId="x")}]
    return "textDocument/completion", params, result, params


def s_completion_insert_replace_default(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "position": b.p(A, 0, 16)}
    default = {"insert": b.r(A, (0, 12), (0, 14)), "replace": b.r(A, (0, 12), (0, 16))}
    return (
        "textDocument/completion",
        params,
        {"items": [], "itemDefaults": {"editRange": default}},
        params,
    )


def s_code_action(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "range": b.r(A, (0, 12), (0, 16)), "context": {"diagnostics": [b.diag(A)]}}
    edit = {
        "changes": {A: [b.edit(A, (0, 12), (0, 16))], B: [b.edit(B, (0, 5), (0, 8))]},
        "documentChanges": [
            {"textDocument": {"uri": B, "version": 1}, "edits": [b.edit(B, (0, 4), (0, 9))]},
            {"kind": "create", "uri": "file:///ws/new.c"},
        ],
    }
    result = [
        {"title": "fix", "kind": "quickfix", "diagnostics": [b.diag(A)], "edit": edit},
        {"title": "cmd", "command": "x", "arguments": [{"line": 0, "character": 99}]},
    ]
    return "textDocument/codeAction", params, result, params


def s_highlight_links_lens_colors(b: Build) -> list[tuple[str, Any, Any, Any]]:
    item = {"range": b.r(A, (1, 5), (1, 14))}
    return [
        (
            "textDocument/documentHighlight",
            {**TD, "position": b.p(A, 0, 13)},
            [item],
            {**TD, "position": b.p(A, 0, 13)},
        ),
        ("textDocument/documentLink", TD, [{**item, "target": B}], TD),
        ("textDocument/codeLens", TD, [{**item, "command": {"title": "t", "command": "c"}}], TD),
        (
            "textDocument/documentColor",
            TD,
            [{**item, "color": {"red": 1, "green": 0, "blue": 0, "alpha": 1}}],
            TD,
        ),
    ]


def s_folding(b: Build) -> tuple[str, Any, Any, Any]:
    result = [
        {"startLine": 0, "endLine": 1},
        {
            "startLine": 0,
            "startCharacter": col(A, 0, 16, b.enc),
            "endLine": 1,
            "endCharacter": col(A, 1, 9, b.enc),
        },
    ]
    return "textDocument/foldingRange", TD, result, TD


def s_selection_range(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "positions": [b.p(A, 0, 13), b.p(A, 1, 10)]}
    result = [
        {
            "range": b.r(A, (0, 12), (0, 16)),
            "parent": {
                "range": b.r(A, (0, 0), (0, 20)),
                "parent": {"range": b.r(A, (0, 0), (1, 14))},
            },
        }
    ]
    return "textDocument/selectionRange", params, result, params


def item(b: Build, uri: str) -> dict[str, Any]:
    return {
        "name": "f",
        "kind": 12,
        "uri": uri,
        "range": b.r(uri, (0, 0), (0, 10)),
        "selectionRange": b.r(uri, (0, 5), (0, 7)),
    }


def s_call_hierarchy(b: Build) -> list[tuple[str, Any, Any, Any]]:
    prepare = {**TD, "position": b.p(A, 0, 13)}
    incoming_params = {"item": item(b, A)}
    outgoing_params = {"item": item(b, A)}
    return [
        ("textDocument/prepareCallHierarchy", prepare, [item(b, A)], prepare),
        (
            "callHierarchy/incomingCalls",
            incoming_params,
            [{"from": item(b, B), "fromRanges": [b.r(B, (0, 5), (0, 8))]}],
            incoming_params,
        ),
        (
            "callHierarchy/outgoingCalls",
            outgoing_params,
            [{"to": item(b, B), "fromRanges": [b.r(A, (1, 5), (1, 9))]}],
            outgoing_params,
        ),
        ("typeHierarchy/supertypes", {"item": item(b, A)}, [item(b, B)], {"item": item(b, A)}),
    ]


def s_inlay_hints(b: Build) -> tuple[str, Any, Any, Any]:
    params = {**TD, "range": b.r(A, (0, 0), (2, 0))}
    hints = [
        {"position": b.p(A, 0, 16), "label": ": int", "textEdits": [b.edit(A, (0, 16), (0, 16))]},
        {
            "position": b.p(A, 1, 14),
            "label": [{"value": "T", "location": b.loc(B, (0, 5), (0, 6))}, {"value": "!"}],
        },
    ]
    return "textDocument/inlayHint", params, hints, params


def s_semantic_tokens(b: Build) -> tuple[str, Any, Any, Any]:
    # name (0,12-16) and 1 (0,19-20); 😀😀 (1,3-5), name (1,10-14); name (2,6-10)
    tokens = [(0, 12, 16), (0, 19, 20), (1, 3, 5), (1, 10, 14), (2, 6, 10)]
    data: list[int] = []
    prev_line = prev_start = 0
    for line, a, z in tokens:
        start, end = col(A, line, a, b.enc), col(A, line, z, b.enc)
        data += [
            line - prev_line,
            start - (prev_start if line == prev_line else 0),
            end - start,
            1,
            0,
        ]
        prev_line, prev_start = line, start
    return "textDocument/semanticTokens/full", TD, {"resultId": "1", "data": data}, TD


def s_rename(b: Build) -> list[tuple[str, Any, Any, Any]]:
    params = {**TD, "position": b.p(A, 0, 13), "newName": "n"}
    edit = {"changes": {A: [b.edit(A, (0, 12), (0, 16)), b.edit(A, (1, 10), (1, 14))]}}
    return [
        ("textDocument/prepareRename", params, b.r(A, (0, 12), (0, 16)), params),
        (
            "textDocument/prepareRename",
            params,
            {"range": b.r(A, (0, 12), (0, 16)), "placeholder": "name"},
            params,
        ),
        ("textDocument/rename", params, edit, params),
    ]


def s_misc(b: Build) -> list[tuple[str, Any, Any, Any]]:
    color_params = {**TD, "color": {}, "range": b.r(A, (1, 5), (1, 14))}
    fmt = {**TD, "range": b.r(A, (0, 12), (1, 14)), "options": {}}
    diag_params = TD
    report = {
        "kind": "full",
        "items": [b.diag(A)],
        "relatedDocuments": {B: {"kind": "full", "items": [b.diag(B)]}},
    }
    ws_report = {"items": [{"uri": B, "version": 1, "kind": "full", "items": [b.diag(B)]}]}
    return [
        (
            "textDocument/colorPresentation",
            color_params,
            [
                {
                    "label": "c",
                    "textEdit": b.edit(A, (1, 5), (1, 14)),
                    "additionalTextEdits": [b.edit(A, (0, 12), (0, 13))],
                }
            ],
            color_params,
        ),
        (
            "textDocument/linkedEditingRange",
            {**TD, "position": b.p(A, 0, 13)},
            {"ranges": [b.r(A, (0, 12), (0, 16)), b.r(A, (1, 10), (1, 14))]},
            {**TD, "position": b.p(A, 0, 13)},
        ),
        ("textDocument/rangeFormatting", fmt, [b.edit(A, (0, 12), (0, 16))], fmt),
        ("textDocument/diagnostic", diag_params, report, diag_params),
        ("workspace/diagnostic", {"previousResultIds": []}, ws_report, {"previousResultIds": []}),
        ("textDocument/hover", {**TD, "position": b.p(A, 2, 3)}, None, None),
    ]


def s_unknown_method(b: Build) -> tuple[str, Any, Any, Any]:
    params = {
        **TD,
        "where": {"at": b.p(A, 0, 13)},
        "other": {"uri": B, "span": b.r(B, (0, 5), (0, 6))},
    }
    result = {"found": [{"uri": B, "range": b.r(B, (0, 4), (0, 9))}], "here": b.p(A, 1, 10)}
    return "custom/thing", params, result, params


BUILDERS: list[Callable[[Build], Any]] = [
    s_hover, s_definition, s_definition_links, s_single_location, s_symbols, s_symbol_information,
    s_workspace_symbol, s_completion, s_completion_list, s_completion_insert_replace_default,
    s_code_action, s_highlight_links_lens_colors, s_folding, s_selection_range, s_call_hierarchy,
    s_inlay_hints, s_semantic_tokens, s_rename, s_misc, s_unknown_method,
]  # fmt: skip


def cases() -> list[Any]:
    out = []
    for builder in BUILDERS:
        for src, dst in PAIRS:
            got_src, got_dst = builder(Build(src)), builder(Build(dst))
            if not isinstance(got_src, list):
                got_src, got_dst = [got_src], [got_dst]
            for i, (a, z) in enumerate(zip(got_src, got_dst, strict=True)):
                out.append(pytest.param(src, dst, a, z, id=f"{builder.__name__}-{i}-{src}-{dst}"))
    return out


def text_of(uri: str) -> str | None:
    return DOCS.get(uri)


@pytest.mark.parametrize(("src", "dst", "a", "z"), cases())
def test_structure(src: Encoding, dst: Encoding, a: Any, z: Any) -> None:
    method, params, result, request = a
    assert convert_params(method, params, src, dst, text_of) == z[1]
    assert convert_result(method, result, src, dst, text_of, request) == z[2]


def test_the_fixture_really_differs_between_encodings() -> None:
    """Guards the table above: each structure's positions differ between its encodings."""
    for builder in BUILDERS:
        assert repr(builder(Build("utf-8"))) != repr(builder(Build("utf-16"))), builder.__name__


def test_nothing_is_mutated_and_same_encoding_is_identity() -> None:
    method, params, result, request = s_code_action(Build("utf-8"))
    before = repr((params, result))
    convert_params(method, params, "utf-8", "utf-16", text_of)
    convert_result(method, result, "utf-8", "utf-16", text_of, request)
    assert repr((params, result)) == before
    assert convert_result(method, result, "utf-16", "utf-16", text_of, request) is result


def test_publish_diagnostics_and_server_requests() -> None:
    for src, dst in PAIRS:
        a, z = Build(src), Build(dst)
        pub = lambda b: {"uri": A, "version": 3, "diagnostics": [b.diag(A)]}  # noqa: E731
        assert convert_notification(
            "textDocument/publishDiagnostics", pub(a), src, dst, text_of
        ) == pub(z)
        apply = lambda b: {"edit": {"changes": {B: [b.edit(B, (0, 1), (0, 4))]}}}  # noqa: E731
        assert convert_params("workspace/applyEdit", apply(a), src, dst, text_of) == apply(z)
        show = lambda b: {"uri": B, "selection": b.r(B, (0, 2), (0, 5))}  # noqa: E731
        assert convert_params("window/showDocument", show(a), src, dst, text_of) == show(z)


def test_resolve_requests_take_the_document_from_the_caller() -> None:
    a, z = Build("utf-16"), Build("utf-8")
    item = lambda b: {"label": "x", "textEdit": b.edit(A, (0, 12), (0, 16))}  # noqa: E731
    assert convert_params(
        "completionItem/resolve", item(a), "utf-16", "utf-8", text_of, uri=A
    ) == item(z)
    assert convert_result(
        "completionItem/resolve", item(a), "utf-16", "utf-8", text_of, uri=A
    ) == item(z)
    hint = lambda b: {"position": b.p(A, 0, 16), "label": "x"}  # noqa: E731
    assert convert_params("inlayHint/resolve", hint(a), "utf-16", "utf-8", text_of, uri=A) == hint(
        z
    )
    # Without the document, bare positions stay as they are.
    assert convert_params("inlayHint/resolve", hint(a), "utf-16", "utf-8", text_of) == hint(a)


def test_execute_command_arguments_are_opaque() -> None:
    params = {
        "command": "c",
        "arguments": [{"textDocument": {"uri": A}, "position": {"line": 0, "character": 20}}],
    }
    assert convert_params("workspace/executeCommand", params, "utf-8", "utf-16", text_of) == params


# didChange: each range is in the text left by the changes before it.

START = 'ab = "😀";\nx = "é"\n'


def cols(text: str, enc: Encoding) -> Callable[[int, int], dict[str, int]]:
    lines = text.split("\n")

    def p(line: int, index: int) -> dict[str, int]:
        prefix = lines[line][:index]
        n = (
            len(prefix.encode())
            if enc == "utf-8"
            else len(prefix.encode("utf-16-le")) // 2
            if enc == "utf-16"
            else len(prefix)
        )
        return {"line": line, "character": n}

    return p


def did_change(enc: Encoding) -> dict[str, Any]:
    # 1) insert "中" after 😀 on line 0; 2) in the resulting text, replace the `"` after 中
    # (index 8); 3) full-line edit on line 1 after é; 4) an insertion on line 0 at index 10.
    t0 = START
    t1 = 'ab = "😀中";\nx = "é"\n'
    t2 = 'ab = "😀中\'"\';\nx = "é"\n'  # replaced `"` (index 8) by `'"'`
    t3 = 'ab = "😀中\'"\';\nx = "é"!\n'
    changes = [
        {
            "range": {"start": cols(t0, enc)(0, 7), "end": cols(t0, enc)(0, 7)},
            "text": "中",
            "rangeLength": 0,
        },
        {"range": {"start": cols(t1, enc)(0, 8), "end": cols(t1, enc)(0, 9)}, "text": "'\"'"},
        {"range": {"start": cols(t2, enc)(1, 6), "end": cols(t2, enc)(1, 7)}, "text": '"!'},
        {"range": {"start": cols(t3, enc)(0, 10), "end": cols(t3, enc)(0, 10)}, "text": "😀"},
    ]
    return {"textDocument": {"uri": A, "version": 2}, "contentChanges": changes}


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_did_change_converts_change_by_change(src: Encoding, dst: Encoding) -> None:
    got = convert_notification(
        "textDocument/didChange", did_change(src), src, dst, lambda uri: START
    )
    expected = did_change(dst)
    expected["contentChanges"][0].pop("rangeLength")  # deprecated, in the old units: dropped
    assert got == expected


def test_did_change_after_a_full_change_uses_its_text() -> None:
    full = 'n = "😀"\n'
    msg = lambda enc: {  # noqa: E731
        "textDocument": {"uri": A, "version": 2},
        "contentChanges": [
            {"text": full},
            {"range": {"start": cols(full, enc)(0, 6), "end": cols(full, enc)(0, 7)}, "text": "'"},
        ],
    }
    assert convert_notification(
        "textDocument/didChange", msg("utf-8"), "utf-8", "utf-16", lambda uri: START
    ) == msg("utf-16")
