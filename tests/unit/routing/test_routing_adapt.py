"""Answers fitted to a client that declared less than the backend was told: links to
locations, markdown to plain text, snippets to plain text."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types as t

from lspmux.backends.client_caps import LSPMUX_CLIENT_CAPABILITIES
from lspmux.routing import adapt
from lspmux.routing.table import CLIENT_REQUESTS


def kind(method: str) -> str:
    """The fitting kind its route declares for answers to `method` ("": none)."""
    return CLIENT_REQUESTS[method].fit or ""


R = {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 7}}
WIDE = {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 0}}
LINK = {
    "originSelectionRange": R,
    "targetUri": "file:///w/b.py",
    "targetRange": WIDE,
    "targetSelectionRange": R,
}
LOCATION = {"uri": "file:///w/b.py", "range": R}

# A client declaring nothing, and one declaring everything lspmux itself does.
BARE: dict[str, Any] = {}
RICH = LSPMUX_CLIENT_CAPABILITIES


# -- links ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (None, None),
        ([], []),
        (LOCATION, LOCATION),
        ([LOCATION], [LOCATION]),
        ([LINK], [LOCATION]),
        ([LINK, LOCATION], [LOCATION]),  # the same place twice: once
        (
            [{"targetUri": "file:///w/c.py", "targetRange": WIDE}],  # no selection range
            [{"uri": "file:///w/c.py", "range": WIDE}],
        ),
    ],
)
def test_locations_from_links(result: Any, expected: Any) -> None:
    before = copy.deepcopy(result)
    assert adapt.locations_from_links(result) == expected
    assert result == before


@pytest.mark.parametrize(
    "method",
    [
        t.TEXT_DOCUMENT_DEFINITION,
        t.TEXT_DOCUMENT_DECLARATION,
        t.TEXT_DOCUMENT_TYPE_DEFINITION,
        t.TEXT_DOCUMENT_IMPLEMENTATION,
    ],
)
def test_links_adapted_only_for_clients_without_link_support(method: str) -> None:
    assert adapt.adapt(kind(method), [LINK], BARE) == [LOCATION]
    assert adapt.adapt(kind(method), [LINK], RICH) == [LINK]
    section = method.split("/")[1]
    only_this = {"textDocument": {section: {"linkSupport": True}}}
    assert adapt.adapt(kind(method), [LINK], only_this) == [LINK]
    assert not adapt.needs_adapting(kind(method), RICH)


# -- markdown -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("plain words", "plain words"),
        ("```python\ndef f(x: int) -> int\n```", "def f(x: int) -> int"),
        (
            "```python\n(function) def f() -> None\n```\n---\nDoes **a** thing.",
            "(function) def f() -> None\n\nDoes a thing.",
        ),
        ("# Title\n\nbody", "Title\n\nbody"),
        ("use `os.path` here", "use os.path here"),
        ("``a `b` c``", "a `b` c"),
        ("see [the docs](https://x.y/z) now", "see the docs now"),
        ("![logo](x.png)", "logo"),
        ("*em* and _em_ and __strong__", "em and em and strong"),
        ("snake_case_name stays", "snake_case_name stays"),
        ("2 * 3 * 4", "2 * 3 * 4"),
        ("a\\_b \\*c\\*", "a_b *c*"),
        ("x &lt; y&nbsp;z", "x < y\xa0z"),
        ("line<br>next", "line\nnext"),
        ("> quoted", "quoted"),
        ("a\n\n\n\nb\n\n", "a\n\nb"),
        ("```\n**not bold in code**\n```", "**not bold in code**"),
    ],
)
def test_markdown_to_plaintext(markdown: str, plain: str) -> None:
    assert adapt.markdown_to_plaintext(markdown) == plain


@given(st.text(alphabet=" \t`*_~#>-[]()!<>\\&;abc\ue030\u00e9\n\r", max_size=40))
def test_markdown_one_line_fast_path_reads_as_the_general_path(markdown: str) -> None:
    """A one-line text skips the block rules when it cannot start one; the answer is the
    same as reading it line by line."""
    assert adapt.markdown_to_plaintext(markdown) == adapt._blocks(markdown.splitlines())


HOVER_MD = {"contents": {"kind": "markdown", "value": "**x**: `int`"}, "range": R}


@pytest.mark.parametrize(
    ("client", "result", "expected"),
    [
        (BARE, HOVER_MD, {"contents": {"kind": "plaintext", "value": "x: int"}, "range": R}),
        (RICH, HOVER_MD, HOVER_MD),
        (
            {"textDocument": {"hover": {"contentFormat": ["plaintext"]}}},
            HOVER_MD,
            {"contents": {"kind": "plaintext", "value": "x: int"}, "range": R},
        ),
        (  # MarkedString forms
            BARE,
            {"contents": ["*a*", {"language": "python", "value": "x = *y"}]},
            {"contents": {"kind": "plaintext", "value": "a\n\nx = *y"}},
        ),
        (BARE, {"contents": "`a`"}, {"contents": {"kind": "plaintext", "value": "a"}}),
        (
            BARE,
            {"contents": {"kind": "plaintext", "value": "*as is*"}},
            {"contents": {"kind": "plaintext", "value": "*as is*"}},
        ),
        (BARE, None, None),
    ],
)
def test_hover(client: dict[str, Any], result: Any, expected: Any) -> None:
    before = copy.deepcopy(result)
    assert adapt.adapt(kind(t.TEXT_DOCUMENT_HOVER), result, client) == expected
    assert result == before


def test_signature_help_documentation() -> None:
    result = {
        "signatures": [
            {
                "label": "f(x)",
                "documentation": {"kind": "markdown", "value": "Do **it**."},
                "parameters": [
                    {"label": "x", "documentation": {"kind": "markdown", "value": "`x`"}},
                    {"label": "y", "documentation": "plain *stays*"},
                ],
            }
        ]
    }
    out = adapt.adapt(kind(t.TEXT_DOCUMENT_SIGNATURE_HELP), result, BARE)
    sig = out["signatures"][0]
    assert sig["documentation"] == {"kind": "plaintext", "value": "Do it."}
    assert sig["parameters"][0]["documentation"] == {"kind": "plaintext", "value": "x"}
    assert sig["parameters"][1]["documentation"] == "plain *stays*"
    assert adapt.adapt(kind(t.TEXT_DOCUMENT_SIGNATURE_HELP), result, RICH) == result
    assert result["signatures"][0]["documentation"]["kind"] == "markdown"  # input untouched


# -- snippets ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snippet", "text"),
    [
        ("print($1)$0", "print()"),
        ("print(${1:value})", "print(value)"),
        ("for ${1:i} in ${2:range(${3:10})}:\n\t$0", "for i in range(10):\n\t"),
        ("${1|one,two,three|}", "one"),
        ("${1|a\\,b,c|}", "a,b"),
        ("cost: \\$5 \\} \\\\", "cost: $5 } \\"),
        ("$TM_FILENAME-x", "-x"),
        ("${TM_SELECTED_TEXT:default}", "default"),
        ("${TM_FILENAME/(.*)\\..+$/$1/}end", "end"),
        ("${1}", ""),
        ("price $ and ${ and $", "price $ and ${ and $"),  # malformed: literal
        ("${1:unclosed", "${1:unclosed"),
        ("no snippet at all", "no snippet at all"),
    ],
)
def test_snippet_to_text(snippet: str, text: str) -> None:
    assert adapt.snippet_to_text(snippet) == text


SNIPPET_ITEM = {
    "label": "print",
    "insertTextFormat": 2,
    "insertText": "print(${1:x})$0",
    "documentation": {"kind": "markdown", "value": "**Print** it."},
}
EDIT_ITEM = {
    "label": "range",
    "insertTextFormat": 2,
    "textEdit": {"range": R, "newText": "range(${1:n})"},
}


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (
            SNIPPET_ITEM,
            {
                "label": "print",
                "insertTextFormat": 1,
                "insertText": "print(x)",
                "documentation": {"kind": "plaintext", "value": "Print it."},
            },
        ),
        (
            EDIT_ITEM,
            {
                "label": "range",
                "insertTextFormat": 1,
                "textEdit": {"range": R, "newText": "range(n)"},
            },
        ),
        (
            {"label": "x$1", "insertTextFormat": 2},
            {"label": "x$1", "insertTextFormat": 1, "insertText": "x"},
        ),
        ({"label": "a$b", "insertText": "a$b"}, {"label": "a$b", "insertText": "a$b"}),  # plain
    ],
)
def test_completion_items_for_a_bare_client(item: Any, expected: Any) -> None:
    before = copy.deepcopy(item)
    assert adapt.adapt(kind(t.TEXT_DOCUMENT_COMPLETION), [item], BARE) == [expected]
    assert adapt.adapt(kind(t.COMPLETION_ITEM_RESOLVE), item, BARE) == expected
    assert item == before


def test_completion_list_with_item_defaults() -> None:
    result = {
        "isIncomplete": False,
        "itemDefaults": {"insertTextFormat": 2, "editRange": R},
        "items": [
            {"label": "f", "textEditText": "f($1)"},
            {"label": "g", "insertTextFormat": 1, "insertText": "g$1"},  # its own: plain
        ],
    }
    out = adapt.adapt(kind(t.TEXT_DOCUMENT_COMPLETION), result, BARE)
    assert out["itemDefaults"]["insertTextFormat"] == 1
    assert out["items"][0] == {"label": "f", "textEditText": "f()", "insertTextFormat": 1}
    assert out["items"][1] == {"label": "g", "insertTextFormat": 1, "insertText": "g$1"}
    assert result["itemDefaults"]["insertTextFormat"] == 2


def test_completion_for_a_client_with_snippets_but_plain_documentation() -> None:
    client = {
        "textDocument": {
            "completion": {
                "completionItem": {"snippetSupport": True, "documentationFormat": ["plaintext"]}
            }
        }
    }
    out = adapt.adapt(kind(t.TEXT_DOCUMENT_COMPLETION), {"items": [SNIPPET_ITEM]}, client)
    assert out["items"][0]["insertText"] == SNIPPET_ITEM["insertText"]
    assert out["items"][0]["documentation"] == {"kind": "plaintext", "value": "Print it."}


def test_rich_clients_need_no_adapting() -> None:
    for method in (
        t.TEXT_DOCUMENT_COMPLETION,
        t.COMPLETION_ITEM_RESOLVE,
        t.TEXT_DOCUMENT_HOVER,
        t.TEXT_DOCUMENT_SIGNATURE_HELP,
        t.TEXT_DOCUMENT_DEFINITION,
        t.TEXT_DOCUMENT_REFERENCES,
    ):
        assert not adapt.needs_adapting(kind(method), RICH), method
        assert adapt.adapt(kind(method), [SNIPPET_ITEM], RICH) == [SNIPPET_ITEM]
    assert not adapt.needs_adapting(kind(t.TEXT_DOCUMENT_REFERENCES), BARE)


def test_the_routes_declare_the_kinds_this_module_fits() -> None:
    """Every kind a route declares is fitted here, every kind fitted is some route's, and a
    location kind is its route's client section (whose `linkSupport` is read)."""
    declared = {r.fit: r for r in CLIENT_REQUESTS.values() if r.fit is not None}
    assert declared.keys() == adapt.KINDS
    for link_kind in adapt.LINK_KINDS:
        assert declared[link_kind].feature == link_kind
    assert kind(t.TEXT_DOCUMENT_REFERENCES) == ""  # always plain locations: nothing to fit
