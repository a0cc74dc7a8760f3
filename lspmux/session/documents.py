"""The text of every open document, mirrored from didOpen/didChange/didClose.

A `Document` is what the client has in its buffer (unsaved edits included), so Locate and the
linters read the same text the user sees. Line starts are computed lazily and cached per version.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from lspmux.text import Encoding, apply_changes, line_starts


class Document:
    __slots__ = ("_starts", "language_id", "text", "uri", "version")

    def __init__(self, uri: str, language_id: str, version: int, text: str) -> None:
        self.uri = uri
        self.language_id = language_id
        self.version = version
        self.text = text
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            self._starts = line_starts(self.text)
        return self._starts

    @property
    def path(self) -> str:
        return uri_to_path(self.uri)

    def update(self, version: int, changes: list[dict[str, Any]], encoding: Encoding) -> None:
        self.text = apply_changes(self.text, changes, encoding)
        self.version = version
        self._starts = None


class Documents:
    """Open documents by URI."""

    def __init__(self, encoding: Encoding = "utf-16") -> None:
        self.encoding: Encoding = encoding
        self._docs: dict[str, Document] = {}

    def open(self, uri: str, language_id: str, version: int, text: str) -> Document:
        doc = Document(uri, language_id, version, text)
        self._docs[uri] = doc
        return doc

    def change(self, uri: str, version: int, changes: list[dict[str, Any]]) -> Document | None:
        doc = self._docs.get(uri)
        if doc is not None:
            doc.update(version, changes, self.encoding)
        return doc

    def close(self, uri: str) -> Document | None:
        return self._docs.pop(uri, None)

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def __contains__(self, uri: object) -> bool:
        return uri in self._docs

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._docs.values()))

    def __len__(self) -> int:
        return len(self._docs)


def uri_to_path(uri: str) -> str:
    """The filesystem path of a file: URI (other schemes: the URI's path part)."""
    parsed = urlparse(uri)
    return unquote(parsed.path)


def path_to_uri(path: str) -> str:
    from pathlib import Path

    return Path(path).absolute().as_uri()
