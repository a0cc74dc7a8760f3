"""Documents: the text mirror kept from didOpen/didChange/didClose, in every encoding."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lspmux.session.documents import Documents
from lspmux.text import ENCODINGS, Encoding
from tests.profiles import examples

URI = "file:///p/a.py"


def rng(sl: int, sc: int, el: int, ec: int) -> dict[str, Any]:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def test_open_change_close() -> None:
    docs = Documents()
    doc = docs.open(URI, "python", 1, "x = 1\n")
    assert URI in docs and len(docs) == 1 and docs.get(URI) is doc
    assert (doc.uri, doc.language_id, doc.version, doc.text) == (URI, "python", 1, "x = 1\n")
    assert doc.starts == [0, 6]

    doc.update(2, [{"range": rng(0, 4, 0, 5), "text": "42"}], docs.encoding)
    assert (doc.version, doc.text) == (2, "x = 42\n")
    assert doc.starts == [0, 7]  # recomputed after the change

    doc.update(3, [{"text": "full\nreplacement"}], docs.encoding)
    assert (doc.version, doc.text, doc.starts) == (3, "full\nreplacement", [0, 5])

    doc.update(4, [{"text": "a"}, {"range": rng(0, 1, 0, 1), "text": "b"}], docs.encoding)
    assert doc.text == "ab"

    assert docs.close(URI) is doc
    assert URI not in docs and docs.get(URI) is None and len(docs) == 0
    assert docs.close(URI) is None


def test_reopen_replaces_and_iteration_is_a_snapshot() -> None:
    docs = Documents()
    docs.open(URI, "python", 1, "old")
    docs.open("file:///p/b.py", "python", 1, "b")
    docs.open(URI, "python", 5, "new")
    assert docs.get(URI).text == "new"  # type: ignore[union-attr]
    for doc in docs:  # closing while iterating is safe
        docs.close(doc.uri)
    assert len(docs) == 0


@pytest.mark.parametrize(("encoding", "character"), [("utf-16", 3), ("utf-8", 5), ("utf-32", 2)])
def test_incremental_change_in_each_encoding(encoding: Encoding, character: int) -> None:
    docs = Documents(encoding)
    doc = docs.open(URI, "markdown", 1, "a😀b\nc")
    doc.update(2, [{"range": rng(0, character, 1, 0), "text": "-"}], encoding)
    assert doc.text == "a😀-c"


# -- property: random incremental edits keep the mirror equal to a reference model ---------------

_BREAK = re.compile(r"\r\n|\r|\n")


def position(text: str, offset: int, encoding: Encoding) -> dict[str, int]:
    parts = _BREAK.split(text[:offset])
    last = parts[-1]
    n = {
        "utf-8": len(last.encode("utf-8")),
        "utf-16": len(last.encode("utf-16-le")) // 2,
        "utf-32": len(last),
    }[encoding]
    return {"line": len(parts) - 1, "character": n}


def valid(text: str, offset: int) -> int:
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        return offset + 1
    return offset


pieces = st.sampled_from(["x", "yz", " ", "\t", "ß", "中", "😀", "𝄞", "\n", "\r\n", "\r"])
texts = st.lists(pieces, max_size=30).map("".join)


@st.composite
def sessions(draw: st.DrawFn) -> tuple[str, list[list[tuple[int, int, str] | str]]]:
    """An initial text and didChange batches; each change an offset edit or a full text."""
    return draw(texts), draw(
        st.lists(
            st.lists(
                st.tuples(st.integers(0, 200), st.integers(0, 200), texts) | texts.map(str),
                min_size=1,
                max_size=4,
            ),
            max_size=8,
        )
    )


@settings(max_examples=examples(200), deadline=None)
@given(run=sessions(), encoding=st.sampled_from(ENCODINGS), chunk_size=st.integers(1, 8))
def test_mirror_equals_the_model(
    run: tuple[str, list[list[tuple[int, int, str] | str]]], encoding: Encoding, chunk_size: int
) -> None:
    """Edits applied in place (in chunks of `chunk_size` characters, so that they often cross
    chunk boundaries) give the text, line starts and positions of the same edits on a str."""
    initial, batches = run
    docs = Documents(encoding, chunk_size=chunk_size)
    doc = docs.open(URI, "text", 0, initial)
    model = initial
    for version, batch in enumerate(batches, start=1):
        changes: list[dict[str, Any]] = []
        for change in batch:
            if isinstance(change, str):  # a full-text change
                changes.append({"text": change})
                model = change
                continue
            a = valid(model, min(change[0], len(model)))
            b = valid(model, min(change[1], len(model)))
            a, b = min(a, b), max(a, b)
            changes.append(
                {
                    "range": {
                        "start": position(model, a, encoding),
                        "end": position(model, b, encoding),
                    },
                    "text": change[2],
                }
            )
            model = model[:a] + change[2] + model[b:]
        doc.update(version, changes, encoding)
        assert len(doc) == len(model)
        for offset in range(len(model) + 1):  # positions, read from the chunks
            offset = valid(model, offset)
            pos = position(model, offset, encoding)
            assert doc.position_at(offset, encoding) == (pos["line"], pos["character"])
            assert doc.offset_at(pos["line"], pos["character"], encoding) == offset
        lines = _BREAK.split(model)
        assert [doc.line(i) for i in range(-1, len(lines) + 1)] == [None, *lines, None]
        assert doc.text == model
        assert doc.version == version
        assert doc.starts == [0] + [m.end() for m in _BREAK.finditer(model)]


def test_a_document_is_a_lines_source_for_position_conversion() -> None:
    """lspmux/encodings converts positions line by line: a Document serves its lines itself
    (no whole string, no line starts built), with the answers a plain str gives."""
    from lspmux.encodings.lines import Converter, as_lines

    docs = Documents(chunk_size=4)
    text = "a😀b\r\nx中y\rlast 𝄞 line\n"
    doc = docs.open(URI, "text", 1, text)
    doc.update(2, [{"range": rng(1, 1, 1, 1), "text": "é"}], "utf-16")
    text = "a😀b\r\nxé中y\rlast 𝄞 line\n"
    assert as_lines(doc) is doc and doc.line(4) is None
    for src, dst in (("utf-16", "utf-8"), ("utf-8", "utf-32"), ("utf-32", "utf-16")):
        live = Converter(src, dst, lambda _uri: doc)  # type: ignore[arg-type,return-value]
        plain = Converter(src, dst, lambda _uri: text)  # type: ignore[arg-type]
        for line in range(4):
            for character in range(8):
                pos = {"line": line, "character": character}
                assert live.position(pos, URI) == plain.position(pos, URI)
