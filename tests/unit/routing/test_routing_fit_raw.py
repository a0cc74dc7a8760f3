"""A raw answer fitted where it stands (`routing.fit_raw`): the same answer `routing.adapt`
gives on the parsed one, with only what the client cannot take rewritten — and the server's
bytes untouched when nothing must change."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lspmux.backends.client_caps import LSPMUX_CLIENT_CAPABILITIES
from lspmux.routing import adapt, fit_raw
from lspmux.routing.table import CLIENT_REQUESTS

BARE: dict[str, Any] = {}
RICH = LSPMUX_CLIENT_CAPABILITIES
#: Takes markdown, not snippets.
NO_SNIPPETS = {
    "textDocument": {
        "completion": {"completionItem": {"documentationFormat": ["markdown"]}},
        "hover": {"contentFormat": ["markdown"]},
    }
}
COMPLETION = "textDocument/completion"
R = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}


def item(i: int, doc: Any = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"label": f"item_{i}", "kind": 3, "insertText": f"item_{i}($0)"}
    if doc is not None:
        out["documentation"] = doc
    return {**out, **extra}


def md(value: str) -> dict[str, str]:
    return {"kind": "markdown", "value": value}


def kind(method: str) -> str:
    """The fitting kind its route declares for answers to `method` ("": none)."""
    return CLIENT_REQUESTS[method].fit or ""


def body_of(result: Any, *, indent: bool = False) -> bytes:
    msg = {"jsonrpc": "2.0", "id": 7, "result": result}
    return orjson.dumps(msg, option=orjson.OPT_INDENT_2 if indent else 0)


def fitted(method: str, body: bytes, client: dict[str, Any]) -> Any:
    """What the client gets: the fitted body, or the body itself when None came back."""
    out = fit_raw.fit_body(kind(method), body, client)
    return orjson.loads(body if out is None else out)


def expected(method: str, body: bytes, client: dict[str, Any]) -> Any:
    msg = orjson.loads(body)
    msg["result"] = adapt.adapt(kind(method), msg["result"], client)
    return msg


LISTS = {
    "markdown docs, one line each": {
        "isIncomplete": False,
        "items": [item(i, md(f"Returns `item_{i}`, {i}.")) for i in range(50)],
    },
    "markdown docs with markup": {
        "isIncomplete": False,
        "items": [
            item(0, md("**bold** and _em_ [link](x) `co*de`")),
            item(1, md("```py\nx = 1\n```\n# Head\n\ntext")),
            item(2, md("``a`b`` and `c`")),
            item(3, md("quote \\* and &amp; <br> end")),
            item(4, md("# heading only")),
            item(5, md("` `")),
            item(6, md("")),
            item(7, md("ünï `cödé` \u2028 next")),
            item(8, md('a "quoted" \\ back\tslash `x`')),
        ],
    },
    # backticks side by side: a span that keeps single ones (`fit_raw._plain_joined`)
    "a double-backtick span holding backticks": {
        "items": [item(0, md("x ``a`b`c``")), item(1, md("y `d`"))]
    },
    "plain docs and none": {
        "items": [item(0, "plain *text*"), item(1, {"kind": "plaintext", "value": "p"}), item(2)]
    },
    "mixed plain and markdown": {
        "items": [item(0, "plain"), item(1, md("`m`")), item(2, {"kind": "plaintext", "value": ""})]
    },
    "snippets": {"items": [item(0, md("`x`"), insertTextFormat=2), item(1, insertTextFormat=1)]},
    "snippet by default": {"itemDefaults": {"insertTextFormat": 2}, "items": [item(0, md("a"))]},
    "markdown in data too": {"items": [item(0, md("`a`"), data={"keep": md("`b`")})]},
    "documentation in data": {
        "items": [item(0, md("`a`"), data={"documentation": md("`b`")}), item(1, md("`c`"))]
    },
    "documentation in a command's arguments": {
        "items": [
            item(
                0,
                md("`a`"),
                command={"title": "t", "command": "c", "arguments": [{"documentation": md("`b`")}]},
            )
        ]
    },
    # `arguments` is not in the split of the answers without escapes (`fit_raw._ARGUMENTS`)
    "documentation in arguments, then markdown after it": {
        "items": [
            item(
                0,
                command={"title": "t", "command": "c", "arguments": [{"documentation": md("`b`")}]},
            ),
            item(1, md("`c`")),
        ]
    },
    "flat arguments": {
        "items": [
            item(i, md(f"`{i}`"), command={"title": "t", "command": "c", "arguments": [i, "x"]})
            for i in range(3)
        ]
    },
    # code spans the only markup, but a backtick elsewhere too: not dropped everywhere
    "backticks outside the documentation": {
        "items": [item(0, md("`a` b"), detail="`d`"), item(1, md("`c`"), insertText="x`")]
    },
    # the opaque keys' names as strings: looked at closer, nothing of them changes
    "the words data and arguments": {
        "items": [item(0, md("`a`"), label="data", detail="arguments"), item(1, md("*b*"))]
    },
    "flat data": {"items": [item(i, md(f"`{i}`"), data={"i": i, "u": "x"}) for i in range(3)]},
    "value first": {"items": [item(0, {"value": "`v`", "kind": "markdown"})]},
    "marked strings": {"items": [item(0, [{"language": "py", "value": "x"}, "`y`"])]},
    "empty": {"isIncomplete": True, "items": []},
    "an item list": [item(0, md("`a`")), item(1, "b")],
}


@pytest.mark.parametrize("client", [BARE, RICH, NO_SNIPPETS], ids=["bare", "rich", "no-snippets"])
@pytest.mark.parametrize("indent", [False, True], ids=["compact", "indented"])
@pytest.mark.parametrize("name", list(LISTS))
def test_a_completion_list_is_fitted_as_adapt_fits_it(
    name: str, indent: bool, client: dict[str, Any]
) -> None:
    body = body_of(LISTS[name], indent=indent)
    assert fitted(COMPLETION, body, client) == expected(COMPLETION, body, client)


@pytest.mark.parametrize(
    ("method", "result"),
    [
        ("textDocument/hover", {"contents": md("**b** `c`"), "range": R}),
        ("textDocument/hover", {"contents": "`marked`"}),
        ("textDocument/hover", {"contents": [{"language": "py", "value": "x"}, "*y*"]}),
        ("textDocument/hover", {"contents": {"kind": "plaintext", "value": "*p*"}}),
        ("textDocument/hover", None),
        ("completionItem/resolve", item(0, md("`r`"), insertTextFormat=2)),
        (
            "textDocument/signatureHelp",
            {"signatures": [{"label": "f()", "documentation": md("*d*"), "parameters": []}]},
        ),
        (
            "textDocument/definition",
            [{"targetUri": "file:///a", "targetRange": R, "targetSelectionRange": R}],
        ),
        ("textDocument/definition", [{"uri": "file:///a", "range": R}]),
        ("textDocument/references", [{"uri": "file:///a", "range": R}]),
    ],
)
@pytest.mark.parametrize("client", [BARE, RICH, NO_SNIPPETS], ids=["bare", "rich", "no-snippets"])
def test_other_answers_are_fitted_as_adapt_fits_them(
    method: str, result: Any, client: dict[str, Any]
) -> None:
    body = body_of(result)
    assert fitted(method, body, client) == expected(method, body, client)


@pytest.mark.parametrize(
    ("method", "result", "client"),
    [
        (COMPLETION, LISTS["markdown docs, one line each"], RICH),
        (COMPLETION, LISTS["plain docs and none"], BARE),
        (COMPLETION, LISTS["snippets"], RICH),
        ("textDocument/hover", {"contents": {"kind": "plaintext", "value": "*p*"}}, BARE),
        ("textDocument/definition", [{"uri": "file:///a", "range": R}], BARE),
    ],
)
def test_an_answer_with_nothing_to_change_is_relayed_as_it_came(
    method: str, result: Any, client: dict[str, Any]
) -> None:
    body = body_of(result, indent=True)
    assert not fit_raw.needs_fitting(kind(method), body, client)
    assert fit_raw.fit_body(kind(method), body, client) is None


def test_only_the_documentation_changes_in_a_markdown_list() -> None:
    body = body_of(LISTS["markdown docs, one line each"])
    out = fit_raw.fit_body(kind(COMPLETION), body, BARE)
    assert out is not None
    assert out == body.replace(b'"kind":"markdown"', b'"kind":"plaintext"').replace(b"`", b"")


#: One-line documentation made of what code spans and inline markup are made of.
LINE = st.text(alphabet=" \t`*_[]()!<>\\&;#~-ab\u00e9\ue030\r\x0c", max_size=16)


@given(st.lists(LINE, max_size=12))
def test_plain_texts_is_markdown_to_plaintext_of_each(texts: list[str]) -> None:
    assert fit_raw.plain_texts(texts) == [adapt.markdown_to_plaintext(t) for t in texts]


@given(st.lists(st.text(alphabet='ab `\n\\"\u2028\x00é', max_size=10), max_size=8))
def test_completion_docs_of_any_text_come_out_as_adapt_makes_them(texts: list[str]) -> None:
    body = body_of({"items": [item(i, md(text)) for i, text in enumerate(texts)]})
    assert fitted(COMPLETION, body, BARE) == expected(COMPLETION, body, BARE)


@pytest.mark.parametrize("client", [BARE, RICH, NO_SNIPPETS], ids=["bare", "rich", "no-snippets"])
@pytest.mark.parametrize("name", list(LISTS))
def test_fit_found_is_right_also_for_an_answer_with_nothing_to_fit(
    name: str, client: dict[str, Any]
) -> None:
    body = body_of(LISTS[name])
    assert orjson.loads(fit_raw.fit_found(kind(COMPLETION), body, client)) == expected(
        COMPLETION, body, client
    )


def test_a_server_writing_spaces_keeps_its_bytes_too() -> None:
    """Python's json.dumps writes `", "` and `": "`: still fitted in place, not re-encoded."""
    result = {"items": [item(i, md(f"`x{i}` y")) for i in range(3)]}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "result": result}).encode()
    out = fit_raw.fit_body(kind(COMPLETION), body, BARE)
    assert out is not None
    assert b'"label": "item_2", "kind": 3' in out  # the server's spelling, kept
    assert orjson.loads(out) == expected(COMPLETION, body, BARE)


@pytest.mark.parametrize(
    "texts",
    [["a\rb `c`", "`d`"], ["a\x0bb", "c"], ["`a`", "b\x1ec"], ["é\u2028`b`", "c"], ["a", "`b`"]],
)
def test_plain_texts_sees_every_kind_of_line_break(texts: list[str]) -> None:
    assert fit_raw.plain_texts(texts) == [adapt.markdown_to_plaintext(t) for t in texts]
