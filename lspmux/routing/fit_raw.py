"""A server's raw answer fitted to a client where it stands: only what the client cannot take
is rewritten, the bytes around it are copied as they came.

`routing.adapt` fits a parsed answer. For a large one parsing is most of the cost: a 2.5 MB
completion list is ~10 ms to parse, ~30 ms to rewrite 12,000 items and encode again, while its
bytes mostly need no change at all. `fit_body(kind, body, client)` works on the response's
bytes instead (`kind`: the answered method's fitting kind, `Route.fit`, as `adapt` takes it):

- one scan of the bytes (regular expressions; ~1 ms per 2.5 MB) says whether anything the
  client did not declare is in the answer at all; when nothing is, the answer is relayed as the
  server wrote it (`fit_body` returns None);
- markdown documentation of completion items — the common case: a raw client declares no
  `documentationFormat` — is rewritten in place (`fit_in_place`): each item's
  `"documentation": {"kind": "markdown", "value": …}` becomes its plain text
  (`adapt.markdown_to_plaintext`), every other byte is kept. An answer without a backslash is
  split at its documentation keys, its values converted at once and joined back
  (`_fast_markdown`; the same in C when its text is simple: `lspmux.speedups`); one with
  escapes by a regular expression over its bytes (`_completion_markdown`, more work per item);
- so is a hover's markdown of code blocks and plain lines, in C (`fit_hover_markdown`);
- anything else (snippets, links, marked strings, signatures) is parsed and fitted by
  `adapt.adapt`, then encoded again.

`fit_found` is the second half alone, for an answer the scan already found something in; the
scan leaves what it found absent for it (`_last_scan`), so that no pattern is searched twice.

The bytes are read as servers write them: a key spelled with `\\u` escapes would not be seen
(JSON encoders never escape the characters of a key such as `kind`). A documentation object
inside a value that is the server's own (an item's `data`, a command's `arguments`) is not the
client's to read and must stay as it is: the in-place paths see no nesting, so they take only
answers where every such value is flat (no object in it), and leave the others to the parse.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Mapping
from itertools import compress, repeat
from typing import Any, cast

import orjson

from lspmux import speedups
from lspmux.routing import adapt

#: A JSON string, escapes included (unrolled: no alternation per character).
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'

#: What the client may lack, as it appears in an answer's bytes. Each pattern starts with a
#: literal, which `re` finds at the speed of a substring search.
_SNIPPET = rb'"insertTextFormat"\s*:\s*2(?!\d)'
_MARKDOWN = rb'"kind"\s*:\s*"markdown"'
#: Marked strings (`{"language", "value"}`, or a list of them) are markdown too.
_LANGUAGE = rb'"language"\s*:'
_DOC_LIST = rb'"documentation"\s*:\s*\['
#: A hover's contents as a bare MarkedString or a list of them.
_HOVER_MARKED = rb'"contents"\s*:\s*[\["]'
_LINK = rb'"targetUri"\s*:'

#: An item's markdown documentation, `kind` first as servers write it (the other order is
#: fitted the slow way); group 1 is the value's string.
_MARKDOWN_DOC = re.compile(
    rb'"documentation"\s*:\s*\{\s*"kind"\s*:\s*"markdown"\s*,\s*"value"\s*:\s*('
    + _STRING
    + rb")\s*\}"
)
_PLAIN_DOC = b'"documentation":{"kind":"plaintext","value":'

#: A string each pattern's match holds: looked for first with `bytes.find` (about twice as
#: fast as `re` over a body where it is not), the pattern only where it is.
_REQUIRED = {
    _SNIPPET: b'"insertTextFormat"',
    _MARKDOWN: b'"markdown"',
    _LANGUAGE: b'"language"',
    _DOC_LIST: b'"documentation"',
    _HOVER_MARKED: b'"contents"',
    _LINK: b'"targetUri"',
}
_COMPILED = {source: re.compile(source) for source in _REQUIRED}


def _holds(source: bytes, body: bytes) -> bool:
    """Whether the pattern `source` (one of `_REQUIRED`'s) is found in `body`."""
    return speedups.contains(body, _REQUIRED[source]) and _COMPILED[source].search(body) is not None


def _lacks(kind: str, client: Mapping[str, Any]) -> tuple[bool, bool, bool]:
    """(link support, snippets, markdown) that `client` lacks for answers of `kind`."""
    links = adapt.lacks_link_support(client, kind)
    snippets = kind == adapt.COMPLETION and adapt.lacks_snippets(client)
    markdown = adapt.lacks_markdown(client, kind)
    return links, snippets, markdown


def _triggers_for(kind: str, client: Mapping[str, Any]) -> tuple[bytes, ...]:
    """Patterns (`_REQUIRED`'s), one of which is found in every answer of `kind` that holds
    something `client` cannot take (none: nothing to look for)."""
    links, snippets, markdown = _lacks(kind, client)
    parts = []
    if links:
        parts.append(_LINK)
    if snippets:
        parts.append(_SNIPPET)
    if markdown:
        parts += [_MARKDOWN, _LANGUAGE, _DOC_LIST]
        if kind == adapt.HOVER:
            parts.append(_HOVER_MARKED)
    return tuple(parts)


#: Patterns by (kind, id of the client's capabilities), with the capabilities themselves:
#: a session's capabilities are one dict for its lifetime, held here so that its id is not
#: reused while cached.
_triggers: dict[tuple[str, int], tuple[Mapping[str, Any], tuple[bytes, ...]]] = {}


def needs_fitting(kind: str, body: bytes, client: Mapping[str, Any]) -> bool:
    """Whether the response `body` holds anything `client` cannot take (a scan, no parse)."""
    global _last_scan
    key = (kind, id(client))
    cached = _triggers.get(key)
    if cached is None or cached[0] is not client:
        if len(_triggers) > 1024:  # a bound: entries of sessions long gone go
            _triggers.clear()
        cached = _triggers[key] = (client, _triggers_for(kind, client))
    for i, source in enumerate(cached[1]):
        if _holds(source, body):
            # what was found absent need not be looked for again (`fit_in_place`)
            _last_scan = (body, client, frozenset(cached[1][:i]))
            return True
    return False


#: The answer `needs_fitting` last found something in, for whom, and the patterns it found
#: absent from it before: the fitting that follows (`fit_in_place`) takes it and scans not
#: again for those.
_NO_SCAN: tuple[bytes | None, Any, frozenset[bytes]] = (None, None, frozenset())
_last_scan = _NO_SCAN


def fit_body(kind: str, body: bytes, client: Mapping[str, Any]) -> bytes | None:
    """The response `body` (an answer of fitting `kind`, with a "result") fitted to `client`:
    None when it holds nothing the client cannot take (relay it as it is), else the new body."""
    return fit_found(kind, body, client) if needs_fitting(kind, body, client) else None


def fit_found(kind: str, body: bytes, client: Mapping[str, Any]) -> bytes:
    """`fit_body` of an answer the scan found something in (`needs_fitting`), not scanned
    again: the new body."""
    spliced = fit_in_place(kind, body, client)
    if spliced is not None:
        return spliced
    msg = orjson.loads(body)
    msg["result"] = adapt.adapt(kind, msg.get("result"), client)
    return orjson.dumps(msg)


def fit_in_place(
    kind: str, body: bytes, client: Mapping[str, Any], *, escaped: bool = True
) -> bytes | None:
    """The answer `body` (which `needs_fitting` found something in) fitted to `client`
    without parsing it, when only what can be rewritten where it stands must change (a
    completion list's markdown documentation, a hover's simple markdown); None when it must
    be parsed (`fit_found` does that). `escaped=False`: None also for a completion answer with
    a backslash (its splice, a regular expression, takes twice the split's time)."""
    global _last_scan
    scan, _last_scan = _last_scan, _NO_SCAN
    hover = speedups.fit_hover_markdown  # markdown of code blocks and plain lines, in C
    if kind == adapt.HOVER and hover is not None and adapt.lacks_markdown(client, kind):
        return hover(body)
    if kind != adapt.COMPLETION or not adapt.lacks_markdown(client, kind):
        return None
    if adapt.lacks_snippets(client):
        searched = scan[0] is body and scan[1] is client and _SNIPPET in scan[2]
        if not searched and _holds(_SNIPPET, body):
            return None  # snippets are rewritten on the parsed answer
    if b"\\" not in body:  # no escapes: values are their text (memchr: ~0.03 ms per 2.5 MB)
        native = speedups.fit_markdown_docs  # C for simple text: ~1.1 ms per 2.5 MB, not ~7.5
        fitted = (native(body) if native is not None else None) or _fast_markdown(body)
        if fitted is not None:
            return fitted
    if not _opaque_is_flat(body):
        return None
    return _completion_markdown(body) if escaped else None


#: Keys whose values are the server's own (LSPAny: an item's `data`, its command's `arguments`):
#: markup in them is not the client's to read, and stays as it is.
_OPAQUE_KEYS = (b'"data"', b'"arguments"')
#: Such a value that holds no object (so no documentation): a flat object or array, a scalar.
_FLAT_OPAQUE = re.compile(rb'"(?:data|arguments)"\s*:\s*(?:\{[^{}\[\]]*\}|\[[^{}\[\]]*\]|[^\s{\[])')


def _opaque_is_flat(body: bytes) -> bool:
    """Whether no `data` or `arguments` value in `body` can hold a documentation object (the
    in-place rewrite does not see where a key stands; the parsed path does)."""
    if not any(key in body for key in _OPAQUE_KEYS):
        return True
    count = sum(body.count(key) for key in _OPAQUE_KEYS)
    return count == len(_FLAT_OPAQUE.findall(body))


#: The key the no-escape path splits a completion answer at, what follows it when its value is
#: markdown, and the key and head of its plain-text replacement.
_DOC_KEY = b'"documentation"'
_MD_HEAD = b':{"kind":"markdown","value":"'
#: What else may follow it: a plain string or MarkupContent, or the word as a string value.
_KEPT_HEADS = (b':"', b':{"kind":"plaintext","value":"', b",", b"}", b"]")
_VALUE_START = len(_MD_HEAD)


def _fast_markdown(body: bytes) -> bytes | None:
    """`body`, an answer without a backslash (no JSON string in it has an escape: a value's
    bytes are its UTF-8 text), with each markdown documentation made plain text. None when a
    documentation is written otherwise (spaces, other key order, a member after the value):
    `_completion_markdown` or the parsed path handles those.

    One regular-expression split at every documentation key captures each markdown value
    (its literal head is found at the speed of a substring search); the values are converted
    all at once (`_plain_docs`) and put back where they were, with the new head and end, by
    one join: no Python code runs per item, and no whole-buffer pass beyond the split and the
    join."""
    if _ARGUMENTS in body:  # an opaque key the split does not look for: the careful way
        return _mixed_markdown(body) if _opaque_is_flat(body) else None
    parts = _DOC_SPLIT.split(body)  # [before, value, between, value, …, after]
    if len(parts) == 1:
        return None
    try:
        joined = b"\n".join(parts[1::2])
    except TypeError:  # None: other documentation, or an opaque value to look at
        return _mixed_markdown(body) if _opaque_is_flat(body) else None
    parts[1::2] = _plain_docs(joined)
    return b"".join(parts)


#: Every documentation key, and when its value is markdown content written as JSON encoders
#: write it (compact, `kind` first, nothing after `value`), that value's text: a bytes split
#: at it gives [before, text or None, between, …]. The key `data` (opaque, `_OPAQUE_KEYS`)
#: splits it too, with None: an answer without opaque keys needs no `_opaque_is_flat` scan.
#: Only for bytes without a backslash (a quote then always opens a string), and without the
#: other opaque key, `arguments` (`_ARGUMENTS`, looked for first): the pattern then starts with
#: `"d`, which `re` finds by a literal search, not at every quote (the bench's 2.5 MB list:
#: ~3.8 ms instead of ~5.4 to split, plus ~0.9 for that `in`).
_DOC_SPLIT = re.compile(rb'"d(?:ocumentation"(?::\{"kind":"markdown","value":"([^"]*)"\})?|ata")')
_ARGUMENTS = _OPAQUE_KEYS[1]
_PLAIN_DOC_HEAD = b'"documentation":{"kind":"plaintext","value":"'
_VALUE_END = b'"}'
#: Between two converted values joined by line breaks: the end of one, the head of the next.
_END_AND_HEAD = _VALUE_END + b"\n" + _PLAIN_DOC_HEAD


def _plain_docs(joined: bytes) -> list[bytes]:
    """Each markdown value in `joined` (the bytes of JSON strings without escapes, quotes left
    off, joined by line breaks) as its plain-text documentation's bytes, from the key on:
    `"documentation":{"kind":"plaintext","value":"…"}`."""
    # an encoded value holds no raw line break: each one ends a value
    docs = _plain_joined(joined).replace(b"\n", _END_AND_HEAD).split(b"\n")
    docs[0] = _PLAIN_DOC_HEAD + docs[0]  # small pieces: no copy of the whole
    docs[-1] += _VALUE_END
    return docs


def _mixed_markdown(body: bytes) -> bytes | None:
    """`_fast_markdown` of an answer where some documentation is not markdown (a plain string
    or MarkupContent, kept), or the word "documentation" is a string: split at the key, each
    piece told apart by what follows it."""
    pieces = body.split(_DOC_KEY)
    heads = pieces[1:]
    is_md = list(map(bytes.startswith, heads, repeat(_MD_HEAD)))
    md_heads = list(compress(heads, is_md))
    others = compress(heads, map(operator.not_, is_md))
    if not md_heads or not all(map(bytes.startswith, others, repeat(_KEPT_HEADS))):
        return None
    # Each value ends at its first quote (no escapes), which must end its MarkupContent too
    # (no member after "value"): the first `"}` then, with no quote before it in the value.
    ends = list(map(bytes.find, md_heads, repeat(_VALUE_END), repeat(_VALUE_START)))
    values = _cut(md_heads, map(slice, repeat(_VALUE_START), ends))
    joined = b"\n".join(values)
    if -1 in ends or b'"' in joined:
        return None
    rests = _cut(md_heads, map(slice, ends, repeat(None)))
    plain_head = _PLAIN_DOC_HEAD[len(_DOC_KEY) :]
    texts = _plain_values(joined)
    fitted = iter([plain_head + text + rest for text, rest in zip(texts, rests, strict=True)])
    heads = [next(fitted) if md else head for head, md in zip(heads, is_md, strict=True)]
    return _DOC_KEY.join([pieces[0], *heads])


def _cut(pieces: list[bytes], slices: Iterable[slice]) -> list[bytes]:
    """Each piece cut by its slice (C-level: no Python code per piece)."""
    return cast("list[bytes]", list(map(operator.getitem, pieces, slices)))


#: Inline markup outside code spans (`adapt._INLINE_MARKS`, bar the backtick).
_INLINE_MARK_BYTES = b"\\<>[]!*_&"
#: A value (after the line break before it) that starts with block markup (`adapt._BLOCK_MARKS`)
#: or white space (white space alone is made empty): not one line of inline text.
_BLOCK_START = re.compile(rb"\n[`~\-*_#> \t]")
#: The same for the first value, a byte each.
_BLOCK_MARK_BYTES = frozenset(bytes([c]) for c in b"`~-*_#> \t")

#: What the check of inline markup keeps of the values: the markup, backticks and line breaks.
_NOT_MARKUP = bytes(sorted(set(range(256)) - set(_INLINE_MARK_BYTES + b"`\n")))
#: That markup when code spans closed on their line are all there is (possessive: no retries).
_SPANS_ONLY = re.compile(rb"\n*+(?:`[^`\n]*+`\n*+)*+")


def _plain_values(joined: bytes) -> list[bytes]:
    """`_plain_joined`, split at its line breaks: one converted value each."""
    return _plain_joined(joined).split(b"\n")


def _plain_joined(joined: bytes) -> bytes:
    """`adapt.markdown_to_plaintext` of each value in `joined` (the bytes of JSON strings
    without escapes, quotes left off, joined by line breaks), as such bytes, joined so. The
    common case — ASCII, one line each, code spans the only markup — is its bytes without
    backticks, told by whole-buffer passes (a `translate` keeps the markup, a regular
    expression matches it); any other goes through `plain_texts`."""
    if (
        joined.isascii()
        and joined[:1] not in _BLOCK_MARK_BYTES
        and _BLOCK_START.search(joined) is None
    ):
        marks = joined.translate(None, _NOT_MARKUP)
        # backticks side by side in the values are so in `marks` too (a fraction of the bytes)
        if (b"``" not in marks or b"``" not in joined) and _SPANS_ONLY.fullmatch(marks):
            return joined.replace(b"`", b"")
    texts = joined.decode().split("\n")  # no value holds a raw line break (JSON escapes it)
    return b"\n".join(_encoded(plain_texts(texts)))  # nor does an encoded one


def _completion_markdown(body: bytes) -> bytes | None:
    """`body` with each item's markdown documentation made plain text in place, when that is
    all that must change in it (the caller saw no snippet to rewrite, no documentation in an
    opaque value); None when something else must change too."""
    if _holds(_LANGUAGE, body):
        return None
    parts = _MARKDOWN_DOC.split(body)  # [bytes, value, bytes, value, …, bytes]
    count = len(parts) // 2
    if not count or count != body.count(b'"markdown"'):
        return None  # markdown somewhere else than an item's documentation, or spelled so
    if body.count(b'"documentation"') != count and _holds(_DOC_LIST, body):
        return None
    texts = orjson.loads(b"[" + b",".join(parts[1::2]) + b"]")
    out: list[bytes] = [b""] * (4 * count + 1)  # between, head, value, tail, between, …
    out[0::4] = parts[0::2]
    out[1::4] = [_PLAIN_DOC + b'"'] * count
    out[2::4] = _encoded(plain_texts(texts))
    out[3::4] = [b'"}'] * count
    return b"".join(out)


def _encoded(texts: list[str]) -> list[bytes]:
    """Each text as a JSON string, without its quotes (one encoding for all when none holds a
    line break or a backslash)."""
    joined = "\n".join(texts)
    if "\\" not in joined and joined.count("\n") == len(texts) - 1:
        return orjson.dumps(joined)[1:-1].split(b"\\n")
    return [orjson.dumps(text)[1:-1] for text in texts]


#: Line breaks other than "\n" (`str.splitlines` breaks on each), and the ASCII ones.
_LINE_BREAK = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_ASCII_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")


def _breaks_lines(text: str) -> bool:
    """Whether `text` holds a line break other than "\n"."""
    if text.isascii():
        return any(c in text for c in _ASCII_BREAKS)
    return _LINE_BREAK.search(text) is not None


#: A line (after a "\n") that is blank or starts with block markup (`adapt._BLOCK_MARKS`).
_BLOCK_LINE = re.compile(r"\n[^\S\n]*(?:[`~\-*_#>]|\n|\Z)")
#: What inline markdown rules look at besides code spans (`adapt._INLINE_MARKS`).
_INLINE_MARK = re.compile(r"[\\<>\[\]!*_`&]")
_CODE = adapt.CODE_SPAN


def plain_texts(texts: list[str]) -> list[str]:
    """`adapt.markdown_to_plaintext` of each text. A completion list's documentation is mostly
    one line each, code spans its only markup: such texts are converted all at once (their
    code spans lose their backticks, nothing else changes), any other one by one."""
    joined = "\n".join(texts)
    if (
        joined.count("\n") == len(texts) - 1  # one line each …
        and not _breaks_lines(joined)
        and _BLOCK_LINE.search("\n" + joined) is None  # … none blank nor a block
    ):
        # Each line's first character is then outside any code span and not white: no line
        # becomes blank, so none is dropped as `markdown_to_plaintext` drops blank ones.
        if "``" not in joined:  # single backticks: spans are the pieces between them
            pieces = joined.split("`")
            pairs_on_lines = len(pieces) % 2 == 1 and "\n" not in "".join(pieces[1::2])
            if pairs_on_lines and _INLINE_MARK.search("".join(pieces[0::2])) is None:
                return "".join(pieces).split("\n")
        elif _INLINE_MARK.search(_CODE.sub("", joined)) is None:
            return _CODE.sub(r"\2", joined).split("\n")
    return [adapt.markdown_to_plaintext(text) for text in texts]
