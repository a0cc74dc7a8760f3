"""The text of every open document, mirrored from didOpen/didChange/didClose.

A `Document` is what the client has in its buffer (unsaved edits included), so Locate and the
linters read the same text the user sees. Its text is a `ChunkedText`: an incremental change
costs in proportion to the change and the lines it touches, not to the file. `text` (the whole
string) and `starts` (the line starts) are built when a reader asks, then cached until the next
change.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lspmux.memory import release_soon
from lspmux.text import Encoding, line_starts
from lspmux.text_chunks import TARGET, ChunkedText


class Document:
    __slots__ = ("_body", "_starts", "language_id", "uri", "version")

    def __init__(
        self, uri: str, language_id: str, version: int, text: str, *, chunk_size: int = TARGET
    ) -> None:
        self.uri = uri
        self.language_id = language_id
        self.version = version
        self._body = ChunkedText(
            text, target=chunk_size, max_size=2 * chunk_size, min_size=max(chunk_size // 4, 1)
        )
        self._starts: list[int] | None = None

    @property
    def text(self) -> str:
        """The whole text (built once per change, on demand)."""
        return self._body.text()

    @property
    def starts(self) -> list[int]:
        """Offsets at which each line of `text` begins (built once per change, on demand)."""
        if self._starts is None:
            self._starts = line_starts(self.text)
        return self._starts

    def __len__(self) -> int:
        return len(self._body)

    def line(self, line: int) -> str | None:
        """One line's text without its line break; None past the end. This makes a Document
        a `Lines` text source for position conversion (lspmux/encodings), which then reads
        only the lines it converts."""
        return self._body.line(line)

    def offset_at(self, line: int, character: int, encoding: Encoding) -> int:
        """The offset of an LSP position (clamped as `lspmux.text.position_to_offset`)."""
        return self._body.offset_at(line, character, encoding)

    def position_at(self, offset: int, encoding: Encoding) -> tuple[int, int]:
        """The LSP (line, character) of an offset."""
        return self._body.position_at(offset, encoding)

    def update(self, version: int, changes: list[dict[str, Any]], encoding: Encoding) -> None:
        """Apply a didChange's `contentChanges` in order, in place."""
        body = self._body
        fresh = body.chunk_count == 0  # a text never edited: this cuts it into chunks
        for change in changes:
            body.apply(change, encoding)
            fresh = fresh or "range" not in change
        self.version = version
        self._starts = None
        if fresh:  # the old whole text was freed: give the memory back if it was large
            release_soon(len(body))


class Documents:
    """Open documents by URI. `chunk_size`: about how many characters each chunk of a
    document's text holds (small values only make tests cross chunk boundaries often)."""

    def __init__(self, encoding: Encoding = "utf-16", *, chunk_size: int = TARGET) -> None:
        self.encoding: Encoding = encoding
        self.chunk_size = chunk_size
        self._docs: dict[str, Document] = {}

    def open(self, uri: str, language_id: str, version: int, text: str) -> Document:
        doc = Document(uri, language_id, version, text, chunk_size=self.chunk_size)
        self._docs[uri] = doc
        release_soon(len(text))  # the large message it came in is about to be freed
        return doc

    def close(self, uri: str) -> Document | None:
        return self._docs.pop(uri, None)

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def __contains__(self, uri: object) -> bool:
        return uri in self._docs

    def __iter__(self) -> Iterator[Document]:
        return iter(list(self._docs.values()))

    def __len__(self) -> int:
        return len(self._docs)


def uri_of(params: Any) -> str | None:
    """The document a message is about: `textDocument.uri`, else `uri`; None when it names
    none."""
    if not isinstance(params, dict):
        return None
    td = params.get("textDocument")
    if isinstance(td, dict):
        uri = td.get("uri")
        return uri if isinstance(uri, str) else None
    uri = params.get("uri")
    return uri if isinstance(uri, str) else None
