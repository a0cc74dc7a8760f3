"""`fit_hover_markdown` (`lspmux/_speedups.c`): a hover's markdown fitted where it stands for a
client without markdown, exactly as `routing.fit_raw.fit_found` fits it by parsing — or
declined (None), never another answer.

Generated hovers (code blocks, plain lines, blank runs, markup, escapes, non-ASCII) against the
parsed path, the domain said again in Python (`simple_hover`: what the extension must take),
byte-level variants (spacing, key order, members after, truncation), and `fit_raw.fit_body`
with and without the speedups. The native lane's use of it is in
`tests/unit/session/test_session_native.py`; the sanitizers fuzz it with `FUZZ_HOVERS`
(`tests/e2e/test_speedups_sanitized.py`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lspmux import speedups
from lspmux.routing import adapt, fit_raw


def hover_body(value: str, **more: Any) -> bytes:
    result = {"contents": {"kind": "markdown", "value": value}, **more}
    return orjson.dumps({"jsonrpc": "2.0", "id": 7, "result": result})


def parsed_fit(body: bytes) -> bytes:
    """The Python's way: parse, `adapt.adapt`, encode."""
    msg = orjson.loads(body)
    msg["result"] = adapt.adapt(adapt.HOVER, msg.get("result"), {})
    return orjson.dumps(msg)


def same_as_python(native: Any, body: bytes) -> bytes | None:
    """The extension's answer for `body`, checked against the parsed path's where `body` is
    JSON (bytes that are not may be fitted too: the lane relays what servers write)."""
    out = native.fit_hover_markdown(body)
    if out is not None:
        try:
            want = orjson.loads(parsed_fit(body))
        except orjson.JSONDecodeError:
            return out
        assert orjson.loads(out) == want
    return out


#: A thematic break as `adapt._RULE` reads one, in text whose only white space is spaces.
RULE = re.compile(r" {0,3}([-*_])( *\1){2,} *")


def simple_hover(text: str) -> bool:
    """The extension's domain, said again in Python: printable ASCII lines; outside code
    blocks, rules and none that may open a block or holds an inline mark."""
    if any(not (" " <= c <= "~") for c in text.replace("\n", "")):
        return False
    in_code = False
    for line in text.split("\n"):
        lead = line.lstrip(" ")
        if lead.startswith(("```", "~~~")):
            in_code = not in_code
        elif in_code or not lead or RULE.fullmatch(line):
            continue
        elif lead[0] in "`~-*_#>" or any(c in "\\<>[]!*_`&" for c in line):
            return False
    return True


CODE_LINE = st.sampled_from(
    ["fn bench() -> u32", 'let s = "a\\\\b";', "    indented()", "# not a heading in code",
     "*ptr = 1;", "", "   ", 'print("x")', "x = [1, 2] & 3"]
)  # fmt: skip
PLAIN_LINE = st.sampled_from(
    ["Returns the answer.", "  two spaces first", 'a "quoted" word', "trailing  ", "",
     "    ", "x = 1 (ok); y: z", "1. first", "+ plus"]
)  # fmt: skip
RULE_LINE = st.sampled_from(["---", "___", "***", " - - -", "   ----", "    ---", "--", "-- x",
                             "- item", "*-*", "_ _ _  "])  # fmt: skip
MARKED_LINE = st.sampled_from(
    ["**bold**", "`code`", "# Heading", "> quote", "a [link](b)", "a_b",
     "x < y", "a & b", "back\\slash", "~single", "é", "tab\there", "!bang", "* item"]
)  # fmt: skip
FENCE = st.sampled_from(["```", "```rust", "~~~", "  ```python", "```` four"])
LINE = st.one_of(CODE_LINE, PLAIN_LINE, FENCE, RULE_LINE, MARKED_LINE)
VALUE = st.one_of(
    st.lists(LINE, max_size=10).map("\n".join),
    st.lists(st.one_of(CODE_LINE, PLAIN_LINE, FENCE, RULE_LINE), max_size=10).map(
        lambda lines: "\n".join(lines) + "\n"
    ),
    st.text(max_size=40),
)
RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}


@pytest.mark.parametrize(
    "value",
    [
        "```rust\nfn bench() -> u32\n```",
        "```rust\npub fn greet(&self) -> String\n```\n\nSays hello.\n\n\n\nTwice.\n",
        '```python\ndef f(s: str = "a\\\\b") -> None\n```\nPlain "quoted" text',
        "",
        "\n\n  \n",
        "one line",
        "```\nunclosed code\n# stays",
        # rust-analyzer's and pyright's shape: signature, rule, documentation
        "\n```rust\nfoo::Greeter\n```\n\n```rust\npub fn greet(&self) -> String\n```\n\n---\n\n"
        "Says hello to the caller.",
        "```python\n(function) def greet(self) -> str\n```\n---\nSays hello.\n\n***\n",
    ],
)
def test_the_hovers_servers_give_are_fitted_as_the_python_fits_them(
    native: Any, value: str
) -> None:
    body = hover_body(value, range=RANGE)
    out = native.fit_hover_markdown(body)
    assert out == parsed_fit(body)  # byte for byte: orjson wrote both


@settings(max_examples=400)
@given(VALUE, st.booleans())
@example("```rust\nfn bench() -> u32\n```", True)
def test_the_extension_fits_its_domain_and_declines_the_rest(
    native: Any, value: str, with_range: bool
) -> None:
    body = hover_body(value, **({"range": RANGE} if with_range else {}))
    out = native.fit_hover_markdown(body)
    assert (out is not None) == simple_hover(value)
    if out is not None:
        assert out == parsed_fit(body)


@pytest.mark.parametrize(
    ("body", "taken"),
    [
        # spaced as Python's json writes it: fitted, the rest of its bytes kept
        (json.dumps({"jsonrpc": "2.0", "id": 1, "result": {
            "contents": {"kind": "markdown", "value": "```\nx\n```"}, "range": RANGE}}).encode(),
         True),
        (b'{"id":1,"result":\n {"contents" : { "kind":"markdown" ,"value": "a"} } }', True),
        # another shape: the Python's
        (orjson.dumps({"id": 1, "result": {"contents": {"value": "a", "kind": "markdown"}}}),
         False),
        (orjson.dumps({"id": 1, "result": {"contents": {"kind": "markdown", "value": "a",
                                                        "more": 1}}}), False),
        (orjson.dumps({"id": 1, "result": {"range": RANGE, "contents": {
            "kind": "markdown", "value": "a"}}}), False),
        (orjson.dumps({"id": 1, "result": {"contents": {"kind": "markdown", "value": "a"},
                                           "x": {"contents": "b"}}}), False),
        (orjson.dumps({"id": 1, "result": {"contents": {"kind": "plaintext", "value": "a"}}}),
         False),
        (orjson.dumps({"id": 1, "result": {"contents": ["a", {"language": "c", "value": "b"}]}}),
         False),
        (orjson.dumps({"id": 1, "result": None}), False),
        (orjson.dumps({"id": 1, "error": {"code": -1, "message": "m"}}), False),
        (orjson.dumps({"jsonrpc": "2.0", "method": "m", "params": {}}), False),
        (b"", False),
        (b'{"id":1,"result":{"contents":{"kind":"markdown","value":"a\\u0041"}}}', False),
        (b'{"id":1,"result":{"contents":{"kind":"markdown","value":"a\\tb"}}}', False),
    ],
)  # fmt: skip
def test_what_the_extension_takes_and_declines(native: Any, body: bytes, taken: bool) -> None:
    assert (same_as_python(native, body) is not None) == taken


def test_a_body_cut_anywhere_is_read_within_its_bytes(native: Any) -> None:
    body = hover_body('```rust\nfn f(s: &str) -> "x"\n```\n\nText.', range=RANGE)
    for cut in range(len(body)):
        part = body[:cut]
        out = native.fit_hover_markdown(part)
        assert native.fit_hover_markdown(bytearray(part)) == out
    with pytest.raises(TypeError):
        native.fit_hover_markdown("not bytes")


@settings(max_examples=150)
@given(VALUE)
def test_fit_raw_gives_the_same_answer_with_and_without_the_speedups(
    native: Any, value: str
) -> None:
    body = hover_body(value, range=RANGE)
    with_native = fit_raw.fit_body(adapt.HOVER, body, {})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(speedups, "fit_hover_markdown", None)
        without = fit_raw.fit_body(adapt.HOVER, body, {})
    assert with_native == without
    client_with_markdown = {"textDocument": {"hover": {"contentFormat": ["markdown"]}}}
    assert fit_raw.fit_body(adapt.HOVER, body, client_with_markdown) is None


#: Hover answers spliced with bytes a server might write, or no server would: for the
#: sanitizers' fuzzing (`tests/e2e/test_speedups_sanitized.py`).
FUZZ_HOVERS = st.builds(
    lambda value, at, piece, cut: (
        lambda body: (body[: int(at * len(body))] + piece + body[int(at * len(body)) :])[
            : max(0, len(body) + len(piece) - cut)
        ]
    )(hover_body(value, range=RANGE)),
    VALUE,
    st.floats(0, 1),
    st.sampled_from([b"", b"\\", b'"', b"\\n", b"}", b"{", b'"contents"', b"\x00", b"\xff"]),
    st.integers(0, 8),
)


@settings(max_examples=300)
@given(FUZZ_HOVERS)
def test_spliced_and_cut_hovers_are_fitted_as_the_python_fits_them_or_declined(
    native: Any, body: bytes
) -> None:
    same_as_python(native, body)
