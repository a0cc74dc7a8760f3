"""lspmux's C speedups (`lspmux/_speedups.c`, `lspmux/speedups.py`): built, in use, and
giving exactly what the Python they stand for gives — or declining (None), never another
answer.

`fit_markdown_docs` against `routing.fit_raw._fast_markdown`, on generated completion answers
(the differential test's, and byte-level variants: flat and nested `data`, documentation that
is a string, plaintext, spaced or in another order) and on the benchmark's 2.5 MB list; and
`fit_raw` end to end with the speedups and without them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lspmux import speedups
from lspmux.routing import adapt, fit_raw
from scripts.bench_server import completion_list
from tests.unit.routing.test_routing_fit_raw_differential import (
    ASCII_MARKUP,
    PLAIN_TEXT,
    completion,
)


def test_the_speedups_are_in_use_where_built(native: Any) -> None:
    assert speedups.status == "in use"
    assert speedups.fit_markdown_docs is native.fit_markdown_docs


def test_pure_python_is_chosen_by_the_environment() -> None:
    code = "from lspmux import speedups; print(speedups.native is None, speedups.status)"
    env = {**os.environ, speedups.PURE_PYTHON_ENV: "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"True off ({speedups.PURE_PYTHON_ENV} is set)"


def body_of(result: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": 7, "result": result})


def item(label: str, doc: Any = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"label": label}
    if doc is not None:
        out["documentation"] = doc
    out.update(more)
    return out


def md(value: str) -> dict[str, str]:
    return {"kind": "markdown", "value": value}


def same_as_python(native: Any, body: bytes) -> bytes | None:
    """The extension's answer for `body`, checked against the Python's."""
    out = native.fit_markdown_docs(body)
    if out is not None:
        assert out == fit_raw._fast_markdown(body)
    return out


def bench_list(items: int) -> bytes:
    """The benchmark server's completion list (the 2.5 MB answer at 12,000 items), as the
    daemon gets it."""
    return body_of(completion_list(items))


def test_the_benchmarks_list_is_fitted_by_the_extension(native: Any) -> None:
    body = bench_list(12_000)
    out = same_as_python(native, body)
    assert out is not None
    assert b'"kind":"markdown"' not in out and b"`" not in out
    result = orjson.loads(out)["result"]
    assert result == adapt.adapt(adapt.COMPLETION, orjson.loads(body)["result"], {})


@pytest.mark.parametrize(
    ("result", "taken"),
    [
        # what the extension takes: simple markdown beside flat data, string and plaintext docs
        ([item("a", md("x `c` and `*e*`")), item("b", "plain"), item("c")], True),
        ([item("a", md("")), item("b", {"kind": "plaintext", "value": "p"})], True),
        ([item("a", md("ok"), data={"id": 1, "n": "x"}), item("b", md("y"), data=[1, 2])], True),
        ([item("a", md("ok"), data=3), item("documentation", md("z"))], True),
        # what it leaves to the Python (which fits some of them by other means)
        ([item("a", md("é"))], False),  # not ASCII
        ([item("a", md("*e*"))], False),  # markup outside a code span
        ([item("a", md("``c``"))], False),  # backticks side by side
        ([item("a", md("`open"))], False),  # a span not closed / a block's first byte
        ([item("a", md("x `open"))], False),
        ([item("a", md("# h"))], False),
        ([item("a", md(" lead"))], False),
        ([item("a", md("line\\nbreak"))], False),  # a backslash in the body
        ([item("a", md("ok"), data={"documentation": md("in data")})], False),  # nested: opaque
        ([item("a", md("ok"), data={"n": {"m": 1}})], False),
        ([item("a", md("ok"), command={"title": "t", "command": "c", "arguments": [1]})], False),
        ([item("a", {"value": "v", "kind": "markdown"})], False),  # another order
        ([item("a", {"kind": "markdown", "value": "v", "more": 1})], False),  # a member after
        ([item("a", "plain")], False),  # no markdown at all
    ],
)
def test_what_the_extension_takes_and_declines(
    native: Any, result: list[dict[str, Any]], taken: bool
) -> None:
    out = same_as_python(native, body_of({"isIncomplete": False, "items": result}))
    assert (out is not None) == taken


def test_spaced_json_and_an_empty_body_are_declined(native: Any) -> None:
    spaced = b'{"id": 1, "result": [{"documentation": {"kind": "markdown", "value": "a"}}]}'
    assert same_as_python(native, spaced) is None
    assert same_as_python(native, b"") is None
    assert same_as_python(native, b'"documentation"') is None
    with pytest.raises(TypeError):
        native.fit_markdown_docs("not bytes")
    body = body_of([item("a", md("x `c`"))])  # a bytearray, which the Python takes too
    assert native.fit_markdown_docs(bytearray(body)) == native.fit_markdown_docs(body) is not None


#: Byte-level variants the object strategies do not write: `data` keys written every way a
#: server might (and a few it would not), truncated bodies, keys inside string values.
SPLICES = st.sampled_from(
    [
        b'"data":{"a":1}',
        b'"data": [1,2]',
        b'"data" :7',
        b'"data":{"a":{"b":1}}',
        b'"data":[{"a":1}]',
        b'"data":"data"',
        b'"data"data"',
        b'"data":',
        b'"documentation":"x"',
        b'"documentation",',
        b'"documentation"}',
        b'"documentation":7',
        b'"documentation":{"kind":"markdown","value":"a"}',
        b'"documentation":{"kind":"markdown","value":"a"',
        b'"documentation":{"kind":"markdown","value":"a","x":1}',
        b'"documentation":{"kind":"plaintext","value":"a"}',
    ]
)


#: Documentation the extension takes (mostly): one line of ASCII, code spans its only markup.
SIMPLE_TEXT = st.lists(
    st.sampled_from(["ab", " cd", "`e*f`", "`<g>[h]`", "i.", "1", "&"]), max_size=5
).map("".join)
SIMPLE_ITEM = st.builds(
    lambda label, doc, data: item(label, doc, **({"data": data} if data is not None else {})),
    SIMPLE_TEXT,
    st.one_of(st.builds(md, SIMPLE_TEXT), st.none(), SIMPLE_TEXT),
    st.one_of(st.none(), st.integers(0, 9), st.fixed_dictionaries({"id": st.integers(0, 9)})),
)
ANSWERS = st.one_of(
    completion(PLAIN_TEXT),
    st.lists(st.builds(lambda t: item("i", md(t)), ASCII_MARKUP)),
    st.builds(lambda items: {"isIncomplete": False, "items": items}, st.lists(SIMPLE_ITEM)),
)


@settings(max_examples=400)
@given(
    ANSWERS,
    st.lists(st.tuples(st.floats(0, 1), SPLICES), max_size=3),
    st.one_of(st.none(), st.floats(0, 1)),
)
@example([item("a", md("`c`"))], [], None)
@example([item("a", md("`c`"))], [(0.5, b'"data"data"')], None)
def test_the_extension_gives_the_pythons_answer_or_none(
    native: Any, result: Any, splices: list[tuple[float, bytes]], cut: float | None
) -> None:
    body = body_of(result)
    for where, piece in splices:  # byte-level variants, valid JSON or not
        at = int(where * len(body))
        body = body[:at] + piece + body[at:]
    if cut is not None:  # a body cut short
        body = body[: int(cut * len(body))]
    same_as_python(native, body)


@settings(max_examples=150)
@given(st.lists(st.builds(lambda t: item("i", md(t)), ASCII_MARKUP), min_size=1, max_size=12))
def test_fit_raw_gives_the_same_answer_with_and_without_the_speedups(
    native: Any, items: list[dict[str, Any]]
) -> None:
    body = body_of({"isIncomplete": False, "items": items})
    with_native = fit_raw.fit_body(adapt.COMPLETION, body, {})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(speedups, "fit_markdown_docs", None)
        without = fit_raw.fit_body(adapt.COMPLETION, body, {})
    assert with_native == without
    want = adapt.adapt(adapt.COMPLETION, {"isIncomplete": False, "items": items}, {})
    assert orjson.loads(with_native or body)["result"] == want


def simple(text: str) -> bool:
    """The extension's domain, said again in Python: one line of ASCII, no block's first byte,
    no backticks side by side, and inline marks only inside closed code spans."""
    if text == "":
        return True
    if not text.isascii() or text[0] in "`~-*_#> \t" or "``" in text:
        return False
    in_span = False
    for c in text:
        if c == "`":
            in_span = not in_span
        elif (c in "<>[]!*_&" and not in_span) or ord(c) < 0x20:
            return False
    return not in_span


@settings(max_examples=300)
@given(st.lists(SIMPLE_ITEM, min_size=1, max_size=8))
def test_the_extension_takes_every_answer_of_its_domain(
    native: Any, items: list[dict[str, Any]]
) -> None:
    """Declining is always correct, so this is what says the extension is of use: an answer
    whose markdown documentation is all simple text is fitted by it, and as the Python fits it."""
    docs = [i["documentation"]["value"] for i in items if isinstance(i.get("documentation"), dict)]
    out = same_as_python(native, body_of({"isIncomplete": False, "items": items}))
    assert (out is not None) == (bool(docs) and all(map(simple, docs)))


@settings(max_examples=300)
@given(st.binary(max_size=64), st.binary(max_size=4), st.booleans())
def test_contains_is_in(native: Any, haystack: bytes, needle: bytes, array: bool) -> None:
    hay: bytes | bytearray = bytearray(haystack) if array else haystack
    assert native.contains(hay, needle) is (needle in haystack)
    assert speedups.contains(hay, needle) is (needle in haystack)


def test_contains_finds_a_key_at_either_end_of_a_large_body(native: Any) -> None:
    body = bench_list(2_000)
    assert not native.contains(body, b'"insertTextFormat"')
    assert native.contains(body, b'{"jsonrpc"') and native.contains(body, body[-40:])
    with pytest.raises(TypeError):
        native.contains("text", b"t")


def test_the_fitting_wire_and_lane_tests_pass_without_the_speedups() -> None:
    """The Python the extension stands for is still what a machine without a C compiler runs:
    the fitting, wire and fast lane tests, run again with the speedups off."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tests = [
        "tests/unit/routing/test_routing_fit_raw.py",
        "tests/unit/routing/test_routing_fit_raw_differential.py",
        "tests/unit/wire/test_wire_framing.py",
        "tests/unit/wire/test_wire_messages.py",
        "tests/unit/wire/test_wire_connection.py",
        "tests/unit/session/test_session_fast.py",
        "tests/unit/session/test_session_answer_once.py",
    ]
    env = {**os.environ, speedups.PURE_PYTHON_ENV: "1", "PYTHONPATH": root}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout


#: Bytes a fuzzed body is made of: the keys' pieces, JSON's punctuation, markup, and any byte.
FUZZ_PIECES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                b'"documentation"',
                b'"data"',
                b'"d',
                b'"',
                b":",
                b",",
                b"{",
                b"}",
                b"[",
                b"]",
                b'{"kind":"markdown","value":"',
                b'{"kind":"plaintext","value":"',
                b'"}',
                b"`",
                b"*",
                b"\\",
                b" ",
                b"\n",
                b"a",
                b"d",
                b"\xc3\xa9",
                b'"arguments"',
            ]
        ),
        st.binary(max_size=3),
    ),
    max_size=40,
).map(b"".join)


@settings(max_examples=500)
@given(FUZZ_PIECES)
def test_any_bytes_are_answered_or_declined_never_misread(native: Any, body: bytes) -> None:
    """Whatever a server writes, what the extension answers is the Python's answer (and it
    reads no byte outside the body: tests/e2e/test_speedups_sanitized.py runs this strategy
    under AddressSanitizer)."""
    same_as_python(native, body)


def test_a_build_of_an_older_source_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install whose extension was built before its C changed: its functions
    might take other arguments or mean other things, so none of it is used."""
    import types

    old = types.ModuleType("lspmux._speedups")
    for name in speedups.FUNCTIONS:
        setattr(old, name, lambda *args: None)
    old.ABI = speedups.ABI - 1  # type: ignore[attr-defined]
    import lspmux

    monkeypatch.setitem(sys.modules, "lspmux._speedups", old)
    monkeypatch.setattr(lspmux, "_speedups", old, raising=False)
    monkeypatch.delenv(speedups.PURE_PYTHON_ENV, raising=False)
    native, status = speedups._load()
    assert native is None
    assert status == (
        f"out of date (ABI {speedups.ABI - 1}, this source's is {speedups.ABI}); "
        "rebuild: pip install -e ."
    )
    del old.split_frames  # type: ignore[attr-defined]
    assert speedups._load()[1].startswith("out of date (no split_frames)")
