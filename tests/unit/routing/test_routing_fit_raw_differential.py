"""`routing.fit_raw` on an answer's bytes against `routing.adapt` on the parsed answer, for
generated answers: hovers, completion lists and arrays, resolved items and signature help,
with and without markdown, snippets and server data, as compact or spaced JSON, for clients
that declare everything, nothing, or some of it."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lspmux.backends.client_caps import LSPMUX_CLIENT_CAPABILITIES
from lspmux.routing import adapt, fit_raw

#: Markdown's own characters and non-ASCII text, nothing JSON escapes: answers made of such
#: text take the fast in-place path (no backslash in them at all).
PLAIN_TEXT = st.text(alphabet="ab `*_[]()!<>#~-&; é\u2028", max_size=12)
#: With JSON's escapes and line breaks too.
ANY_TEXT = st.text(alphabet='ab `*_[]()!<>#~-&;\\"\n\r\té\u2028', max_size=12)
CLIENTS = [
    {},
    LSPMUX_CLIENT_CAPABILITIES,
    {"textDocument": {"completion": {"completionItem": {"documentationFormat": ["markdown"]}}}},
    {"textDocument": {"completion": {"completionItem": {"snippetSupport": True}}}},
    {"textDocument": {"hover": {"contentFormat": ["plaintext"]}}},
]


def markup(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """What a documentation or a hover's contents may be, the invalid marked strings too."""
    return st.one_of(
        st.builds(lambda v: {"kind": "markdown", "value": v}, text),
        st.builds(lambda v: {"kind": "plaintext", "value": v}, text),
        st.builds(lambda v: {"value": v, "kind": "markdown"}, text),
        st.builds(lambda v: {"kind": "markdown", "value": v, "more": 1}, text),
        text,
        st.builds(lambda v: {"language": "py", "value": v}, text),
        st.lists(st.one_of(text, st.builds(lambda v: {"language": "c", "value": v}, text))),
    )


def opaque(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """A server's own value (LSPAny): flat, or holding documentation the client must not
    see fitted."""
    return st.one_of(
        st.integers(0, 9),
        text,
        st.fixed_dictionaries({"id": st.integers(0, 9), "name": text}),
        st.fixed_dictionaries({"documentation": markup(text)}),
        st.lists(st.fixed_dictionaries({"documentation": markup(text)}), max_size=2),
    )


@st.composite
def completion_item(draw: st.DrawFn, text: st.SearchStrategy[str]) -> dict[str, Any]:
    item: dict[str, Any] = {"label": draw(text)}
    if draw(st.booleans()):
        item["documentation"] = draw(markup(text))
    if draw(st.booleans()):
        item["insertText"] = draw(st.sampled_from(["f($0)", "g(${1:x})", "h", "\\$1"]))
    if draw(st.booleans()):
        item["insertTextFormat"] = draw(st.sampled_from([1, 2]))
    if draw(st.booleans()):
        item["data"] = draw(opaque(text))
    if draw(st.booleans()):
        item["command"] = {"title": "t", "command": "c", "arguments": [draw(opaque(text))]}
    return item


def completion(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    items = st.lists(completion_item(text), max_size=6)
    return st.one_of(
        items,
        st.builds(lambda items: {"isIncomplete": False, "items": items}, items),
        st.builds(
            lambda items, fmt, data: {
                "isIncomplete": True,
                "itemDefaults": {"insertTextFormat": fmt, "data": data},
                "items": items,
            },
            items,
            st.sampled_from([1, 2]),
            opaque(text),
        ),
        completion_item(text),  # completionItem/resolve
    )


def signature_help(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    parameter = st.builds(
        lambda label, doc: {"label": label, "documentation": doc}, text, markup(text)
    )
    signature = st.builds(
        lambda label, doc, params: {"label": label, "documentation": doc, "parameters": params},
        text,
        markup(text),
        st.lists(parameter, max_size=2),
    )
    return st.builds(lambda sigs: {"signatures": sigs}, st.lists(signature, max_size=3))


def answers(text: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, Any]]:
    """(fitting kind, result) pairs whose strings are drawn from `text`."""
    return st.one_of(
        st.tuples(st.just(adapt.COMPLETION), completion(text)),
        st.tuples(
            st.just(adapt.HOVER),
            st.one_of(st.none(), st.builds(lambda c: {"contents": c}, markup(text))),
        ),
        st.tuples(st.just(adapt.SIGNATURE_HELP), signature_help(text)),
    )


ANSWERS = st.one_of(answers(PLAIN_TEXT), answers(ANY_TEXT))


def encoded(result: Any, style: str) -> bytes:
    msg = {"jsonrpc": "2.0", "id": 7, "result": result}
    if style == "compact":
        return orjson.dumps(msg)
    if style == "spaced":  # Python's json: `", "` and `": "`, non-ASCII escaped
        return json.dumps(msg).encode()
    return orjson.dumps(msg, option=orjson.OPT_INDENT_2)


@settings(max_examples=300)
@given(ANSWERS, st.sampled_from(CLIENTS), st.sampled_from(["compact", "spaced", "indented"]))
def test_fitting_the_bytes_gives_what_adapt_gives_on_the_parsed_answer(
    answer: tuple[str, Any], client: dict[str, Any], style: str
) -> None:
    kind, result = answer
    body = encoded(result, style)
    want = adapt.adapt(kind, result, client)
    out = fit_raw.fit_body(kind, body, client)
    assert orjson.loads(body if out is None else out)["result"] == want
    if fit_raw.needs_fitting(kind, body, client):
        assert orjson.loads(fit_raw.fit_found(kind, body, client))["result"] == want
        in_place = fit_raw.fit_in_place(kind, body, client)
        assert in_place is None or orjson.loads(in_place)["result"] == want


#: ASCII markup alone: the documentation the split path converts itself, not by `plain_texts`.
ASCII_MARKUP = st.one_of(
    st.text(alphabet="ab `*_[]()!<>#~-&; ", max_size=10),
    st.lists(
        st.sampled_from(
            [
                *["a", " ", "`c`", "``", "*e*", "_u_", "**s**", "[l](u)", "![i](u)"],
                *["&amp;", "<br>", "# ", "> ", "- ", "~", "`", "*"],
            ]
        ),
        max_size=5,
    ).map("".join),
)


@settings(max_examples=200)
@given(
    st.one_of(
        st.lists(ASCII_MARKUP, min_size=1, max_size=12),
        st.lists(st.one_of(ASCII_MARKUP, PLAIN_TEXT), min_size=1, max_size=12),
    ),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
@example(["x `c` and *e*", "[l](u) `c`", "&amp; <br>", "a `b`"], False, False, False)
@example(["`c` and", "# h", "- `a`"], False, False, False)
def test_markdown_documentation_without_escapes_is_fitted_in_place(
    texts: list[str], plain_too: bool, more: bool, value_first: bool
) -> None:
    """The answers the daemon fits on its loop: the split path, whatever the markup; a
    documentation it does not know how to splice (a member after the value, the value first)
    is left to the parse."""
    items: list[dict[str, Any]] = [
        {"label": str(i), "documentation": {"kind": "markdown", "value": text}}
        for i, text in enumerate(texts)
    ]
    if plain_too:
        items += [{"label": "p", "documentation": "*p*"}, {"label": "q"}]
    if more:
        more_doc = {"kind": "markdown", "value": "`m`", "more": 1}
        items[0] = {"label": "m", "documentation": more_doc, "sortText": "z"}
    if value_first:
        items += [{"label": "v", "documentation": {"value": "*v*", "kind": "markdown"}}]
    result = {"isIncomplete": False, "items": items}
    body = encoded(result, "compact")
    out = fit_raw.fit_in_place(adapt.COMPLETION, body, {}, escaped=False)
    if more or value_first:
        assert out is None
    else:
        assert out is not None
        assert orjson.loads(out)["result"] == adapt.adapt(adapt.COMPLETION, result, {})
