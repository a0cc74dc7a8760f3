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
  `documentationFormat` — is rewritten in place: each item's
  `"documentation": {"kind": "markdown", "value": …}` becomes its plain text
  (`adapt.markdown_to_plaintext`), every other byte is kept;
- anything else (snippets, location links, marked strings, hovers, signatures) is parsed and
  fitted by `adapt.adapt`, then encoded again.

`fit_found` is the second half alone, for an answer the scan already found something in (the
loop scans before it hands an answer to the fitting worker).

The bytes are read as servers write them: a key spelled with `\\u` escapes would not be seen
(JSON encoders never escape the characters of a key such as `kind`), and a markdown
`"documentation"` object is taken for an item's wherever it stands (also in an item's opaque
`data`, where servers keep identifiers, not documentation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

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
_LANGUAGE_ANY = re.compile(_LANGUAGE)
_DOC_LIST_ANY = re.compile(_DOC_LIST)
_SNIPPET_ANY = re.compile(_SNIPPET)


def _lacks(kind: str, client: Mapping[str, Any]) -> tuple[bool, bool, bool]:
    """(link support, snippets, markdown) that `client` lacks for answers of `kind`."""
    links = adapt.lacks_link_support(client, kind)
    snippets = kind == adapt.COMPLETION and adapt.lacks_snippets(client)
    markdown = adapt.lacks_markdown(client, kind)
    return links, snippets, markdown


def _triggers_for(kind: str, client: Mapping[str, Any]) -> tuple[re.Pattern[bytes], ...]:
    """Patterns, one of which is found in every answer of `kind` that holds something
    `client` cannot take (none: nothing to look for)."""
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
    return tuple(re.compile(part) for part in parts)


#: Patterns by (kind, id of the client's capabilities), with the capabilities themselves:
#: a session's capabilities are one dict for its lifetime, held here so that its id is not
#: reused while cached.
_triggers: dict[tuple[str, int], tuple[Mapping[str, Any], tuple[re.Pattern[bytes], ...]]] = {}


def needs_fitting(kind: str, body: bytes, client: Mapping[str, Any]) -> bool:
    """Whether the response `body` holds anything `client` cannot take (a scan, no parse)."""
    key = (kind, id(client))
    cached = _triggers.get(key)
    if cached is None or cached[0] is not client:
        if len(_triggers) > 1024:  # a bound: entries of sessions long gone go
            _triggers.clear()
        cached = _triggers[key] = (client, _triggers_for(kind, client))
    return any(pattern.search(body) is not None for pattern in cached[1])


def fit_body(kind: str, body: bytes, client: Mapping[str, Any]) -> bytes | None:
    """The response `body` (an answer of fitting `kind`, with a "result") fitted to `client`:
    None when it holds nothing the client cannot take (relay it as it is), else the new body."""
    return fit_found(kind, body, client) if needs_fitting(kind, body, client) else None


def fit_found(kind: str, body: bytes, client: Mapping[str, Any]) -> bytes:
    """`fit_body` of an answer the scan found something in (`needs_fitting`), not scanned
    again: the new body."""
    if kind == adapt.COMPLETION:
        spliced = _completion_markdown(body, client)
        if spliced is not None:
            return spliced
    msg = orjson.loads(body)
    msg["result"] = adapt.adapt(kind, msg.get("result"), client)
    return orjson.dumps(msg)


def _completion_markdown(body: bytes, client: Mapping[str, Any]) -> bytes | None:
    """`body` with each item's markdown documentation made plain text in place, when that is
    all the client cannot take in it; None when something else must change too."""
    if not adapt.lacks_markdown(client, adapt.COMPLETION):
        return None
    if adapt.lacks_snippets(client) and _SNIPPET_ANY.search(body):
        return None
    if _LANGUAGE_ANY.search(body):
        return None
    parts = _MARKDOWN_DOC.split(body)  # [bytes, value, bytes, value, …, bytes]
    count = len(parts) // 2
    if not count or count != body.count(b'"markdown"'):
        return None  # markdown somewhere else than an item's documentation, or spelled so
    if body.count(b'"documentation"') != count and _DOC_LIST_ANY.search(body):
        return None
    texts = orjson.loads(b"[" + b",".join(parts[1::2]) + b"]")
    out: list[bytes] = [b""] * (4 * count + 1)  # between, head, value, tail, between, …
    out[0::4] = parts[0::2]
    out[1::4] = [_PLAIN_DOC + b'"'] * count
    out[2::4] = _encoded(plain_texts(texts))
    out[3::4] = [b'"}'] * count
    return b"".join(out)


def _encoded(texts: list[str]) -> list[bytes]:
    """Each text as a JSON string, without its quotes; one encoding for all when none holds a
    line break or a backslash (the encoded lines are then the encoded texts)."""
    joined = "\n".join(texts)
    if "\\" not in joined and joined.count("\n") == len(texts) - 1:
        return orjson.dumps(joined)[1:-1].split(b"\\n")
    return [orjson.dumps(text)[1:-1] for text in texts]


#: Line breaks other than "\n" (`str.splitlines` breaks on each).
_LINE_BREAK = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
#: The ASCII ones (a text of ASCII alone needs no scan for the others).
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
