"""describe: the shortest spec back to a position; properties over real source files."""

from __future__ import annotations

import random
import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lspmux.locate.describe import describe_offset
from lspmux.locate.engine import resolve_spec
from lspmux.locate.spec import Scope, Spec
from lspmux.locate.syntax import format_locate, parse_locate
from lspmux.text import ENCODINGS, Encoding, line_starts, offset_to_position
from tests.profiles import SAMPLE_SEED, examples, sample

from .helpers import DATA_FILES, flatten, python_symbols, read, sym

TOKEN = re.compile(r"\w+|[^\w\s]")


@cache
def non_blank(name: str) -> list[int]:
    return [m.start() for m in re.finditer(r"\S", read(name))]


def test_the_data_files_cover_what_they_must() -> None:
    texts = {name: read(name) for name in DATA_FILES}
    assert len(DATA_FILES) >= 3
    assert any("\r\n" in t for t in texts.values())
    assert any("\n\t" in t for t in texts.values())
    assert any(any(ord(c) > 0xFFFF for c in t) for t in texts.values())
    assert all(100 <= t.count("\n") <= 300 for t in texts.values())


APP = "class A:\n    def f(self):\n        return self.x\n\n    @property\n    def x(self):\n        return 1\n\n\ndef f():\n    return A().f()\n"


def test_examples() -> None:
    syms = python_symbols(APP)
    starts = line_starts(APP)
    # at a symbol's name: the scope alone
    d = describe_offset(APP, starts, syms, APP.index("x(self)"), "utf-16")
    assert d.spec == Spec(Scope.symbol("A", "x")) and d.exact
    # inside a method: the innermost symbol and a short unique find with a marker
    d = describe_offset(APP, starts, syms, APP.index("x\n\n"), "utf-16")
    assert d.spec == Spec(Scope.symbol("A", "f"), "<|>x")
    # `self` occurs twice in A.f: the find grows until it is unique
    d = describe_offset(APP, starts, syms, APP.index("self.x"), "utf-16")
    assert d.spec == Spec(Scope.symbol("A", "f"), "<|>self.")
    # no symbols: a find in the whole file, or a line scope when that is shorter
    d = describe_offset(APP, starts, None, APP.index("A()"), "utf-16")
    assert d.spec == Spec(Scope(), "<|>A(")
    d = describe_offset(APP, starts, None, APP.index("return 1"), "utf-16")
    assert d.spec == Spec(Scope.line_range(7))


def test_whitespace_positions() -> None:
    text = "x = 1   \n    y = 2\n"
    d = describe_offset(text, None, None, 5, "utf-16")  # right after `1`: the end of a token
    assert d.exact and resolve_spec(text, None, None, d.spec).start == 5
    d = describe_offset(text, None, None, 11, "utf-16")  # inside indentation: the next token
    assert not d.exact and d.offset == 13


def test_markers_next_to_angle_brackets() -> None:
    text = "std::vector<int> v; if (a<b && c->d > e) {}\n"
    for target in ("int>", "b &&", "> e", ">d"):
        off = text.index(target) + (1 if target == ">d" else 0)
        d = describe_offset(text, None, None, off, "utf-16")
        assert resolve_spec(text, None, None, d.spec).start == off, (target, d.spec)


def test_marker_like_text_in_the_source_gets_a_deeper_marker() -> None:
    text = "x = ['<|>', a, 1]\ny = {'<|>', a, 1]"
    symbols = [sym("m", (0, 0, 1, 17), (0, 0, 0, 1))]
    off = text.rindex("a")
    d = describe_offset(text, None, symbols, off, "utf-16")
    assert d.spec == Spec(Scope.symbol("m"), "{'<|>', <<|>>a")
    assert resolve_spec(text, None, symbols, d.spec).start == off


@given(data=st.data())
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_describe_then_resolve_returns_the_same_position(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(DATA_FILES), label="file")
    encoding: Encoding = data.draw(st.sampled_from(ENCODINGS), label="encoding")
    text = read(name)
    starts = line_starts(text)
    offset = data.draw(st.sampled_from(non_blank(name)), label="offset")
    symbols = python_symbols(text, encoding) if name.endswith(".py") else None
    if symbols is not None and data.draw(st.booleans(), label="flat"):
        symbols = flatten(symbols)
    d = describe_offset(text, starts, symbols, offset, encoding)
    assert d.exact and d.offset == offset
    assert resolve_spec(text, starts, symbols, d.spec, encoding).start == offset
    # the string form says the same thing
    string = format_locate(name, d.spec)
    assert string is not None
    assert parse_locate(string, {name}.__contains__).spec == d.spec
    if symbols and d.spec.scope.kind != "symbol":
        assert d.spec.scope.kind == "lines" or not _inside_a_symbol(
            text, starts, symbols, offset, encoding
        )


def _inside_a_symbol(
    text: str, starts: list[int], symbols: list[dict], offset: int, encoding: Encoding
) -> bool:
    from lspmux.locate.symbols import enclosing, tree

    return bool(
        enclosing(
            tree(symbols, text, starts, encoding),
            offset_to_position(text, starts, offset, encoding),
        )
    )


def _gap(rng: random.Random, original: str, both_words: bool) -> str:
    """New whitespace between two tokens, as the matching rules allow."""
    if both_words:
        return rng.choice([" ", "\n", "\t\t", " \r\n    "])
    if original:
        return rng.choice(["", " ", "\n        "])
    return rng.choice(["", "", " ", "\n\t"])


def _is_word(s: str) -> bool:
    return bool(re.fullmatch(r"\w+", s))


@given(data=st.data())
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_reformatting_whitespace_never_changes_the_resolved_token(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(DATA_FILES), label="file")
    text = read(name)
    toks = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
    words = [text[a:b] for a, b in toks]
    k = data.draw(st.integers(0, len(toks) - 1), label="token")
    i = data.draw(st.integers(max(0, k - 3), k), label="first")
    j = data.draw(st.integers(k, min(len(toks) - 1, k + 3)), label="last")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = random.Random(seed)
    # the find: tokens i..j with a marker before token k; pattern whitespace varies too
    find = ""
    for t in range(i, j + 1):
        if t > i:
            gap = text[toks[t - 1][1] : toks[t][0]]
            find += _gap(rng, gap, _is_word(words[t - 1]) and _is_word(words[t])) if gap else ""
            if (
                not gap
                and not (_is_word(words[t - 1]) and _is_word(words[t]))
                and rng.random() < 0.3
            ):
                find += " "
        find += ("<|>" if t == k else "") + words[t]
    if any(w in "<>|" for w in words[i : j + 1]):
        find = find.replace("<|>", "@@")
        spec = Spec(Scope(), find, marker="@@")
    else:
        spec = Spec(Scope(), find)
    before = resolve_spec(text, None, None, spec)
    token_before = next(n for n, (a, _) in enumerate(toks) if a == before.start)
    # the text with new whitespace between every pair of tokens
    new_text = text[: toks[0][0]]
    for t in range(len(toks)):
        if t:
            gap = text[toks[t - 1][1] : toks[t][0]]
            new_text += _gap(rng, gap, _is_word(words[t - 1]) and _is_word(words[t]))
        new_text += words[t]
    new_toks = [m.start() for m in TOKEN.finditer(new_text)]
    assert len(new_toks) == len(toks)
    after = resolve_spec(new_text, None, None, spec)
    assert new_toks.index(after.start) == token_before
    assert after.match is not None and before.match is not None
    assert (after.match.count, after.match.partial) == (before.match.count, before.match.partial)


@pytest.mark.parametrize("name", DATA_FILES)
def test_every_token_start_of_a_data_file_round_trips(name: str) -> None:
    """Exhaustive over one encoding, as a backstop to the random property: every token start
    in CI, a seeded sample of them locally (tests/profiles.py; the run's header names the
    seed)."""
    text = read(name)
    starts = line_starts(text)
    symbols = python_symbols(text, "utf-16") if name.endswith(".py") else None
    tokens = [m.start() for m in TOKEN.finditer(text)]
    for offset in sample(tokens, f"token starts of {name}"):
        d = describe_offset(text, starts, symbols, offset, "utf-16")
        assert resolve_spec(text, starts, symbols, d.spec, "utf-16").start == offset, (
            offset,
            d.spec,
            f"sample seed {SAMPLE_SEED}",
        )
