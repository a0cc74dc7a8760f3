"""Diagnostics kept per (document, source); the client sees their union.

Every backend and linter ("source") publishes its own diagnostics for a document; a publish
replaces only that source's slice. A publish for an older version than the document's current
one is dropped. `merged` is the union the client is shown: each diagnostic tagged with a
`source`, identical ones (same range, message and code) shown once. For a code action request
`attribute` hands every source back its own original diagnostics (with their `data`).

Pure and in memory: a dict of documents, each a dict of slices, with the merged list (and the
index `attribute` uses) cached per document and rebuilt only when one of its slices changes, so
publishing for one file costs the same with one or a thousand files open. The returned dicts are
shared with the store: treat them as read-only.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

Diagnostic = dict[str, Any]
_Key = tuple[Any, ...]


def diagnostic_key(diag: Diagnostic) -> _Key:
    """What makes two diagnostics "the same": range, message and code."""
    rng = diag.get("range") or {}
    start, end = rng.get("start") or {}, rng.get("end") or {}
    code = diag.get("code")
    if code is not None and not isinstance(code, (int, str)):
        code = repr(code)
    return (
        start.get("line"),
        start.get("character"),
        end.get("line"),
        end.get("character"),
        diag.get("message"),
        code,
    )


class _Entry:
    """One original diagnostic in the merged view: who reported it and what the client sees."""

    __slots__ = ("original", "shown_source", "source")

    def __init__(self, source: str, original: Diagnostic, shown_source: str) -> None:
        self.source = source
        self.original = original
        self.shown_source = shown_source


class _Document:
    __slots__ = ("fresh", "index", "merged", "result_id", "slices", "version")

    def __init__(self) -> None:
        self.version: int | None = None
        #: Sources that reported since the document last changed version.
        self.fresh: set[str] = set()
        #: source → its diagnostics as published, in first-publish order.
        self.slices: dict[str, list[Diagnostic]] = {}
        self.merged: list[Diagnostic] | None = None
        #: diagnostic key → every original with that key, the shown one first.
        self.index: dict[_Key, list[_Entry]] = {}
        self.result_id = "0"


class DiagnosticStore:
    """Diagnostics per (uri, source), merged per uri."""

    def __init__(self) -> None:
        self._docs: dict[str, _Document] = {}
        self._ids = itertools.count(1)

    # -- documents ------------------------------------------------------------------------

    def set_version(self, uri: str, version: int | None) -> None:
        """Record the document's current version (from didOpen / didChange)."""
        doc = self._doc(uri)
        if doc.version != version:
            doc.fresh = set()
        doc.version = version

    def forget(self, uri: str) -> None:
        """Drop everything about `uri` (didClose)."""
        self._docs.pop(uri, None)

    def uris(self) -> list[str]:
        """Every uri the store holds a version or diagnostics for."""
        return list(self._docs)

    # -- publishing -----------------------------------------------------------------------

    def update(
        self,
        uri: str,
        source: str,
        diagnostics: list[Diagnostic],
        version: int | None = None,
    ) -> bool:
        """Replace `source`'s diagnostics for `uri`.

        Returns False, storing nothing, when `version` is older than the document's current
        version; otherwise True when the merged set changed.
        """
        doc = self._docs.get(uri)
        if doc is None:
            doc = self._doc(uri)
        elif version is not None and doc.version is not None and version < doc.version:
            return False
        doc.fresh.add(source)
        old = doc.slices.get(source)
        if old is not None and old == diagnostics:
            return False
        if old is None and not diagnostics:
            doc.slices[source] = []
            return False
        before = self._merged(doc)
        doc.slices[source] = list(diagnostics)
        doc.merged = None
        return self._settle(doc, before)

    def drop_source(self, source: str) -> list[str]:
        """Remove `source`'s slices everywhere (its backend went away); the uris whose merged
        diagnostics changed, for republishing."""
        affected: list[str] = []
        for uri, doc in self._docs.items():
            if source not in doc.slices:
                continue
            before = self._merged(doc)
            del doc.slices[source]
            doc.merged = None
            if self._settle(doc, before):
                affected.append(uri)
        return affected

    # -- reading --------------------------------------------------------------------------

    def merged(self, uri: str) -> list[Diagnostic]:
        """The union over sources for `uri`: in source order (first publish first) then as
        reported, identical diagnostics once, each with a `source`."""
        doc = self._docs.get(uri)
        return [] if doc is None else self._merged(doc)

    def slice(self, uri: str, source: str) -> list[Diagnostic]:
        """`source`'s diagnostics for `uri`, as it published them."""
        doc = self._docs.get(uri)
        if doc is None:
            return []
        return list(doc.slices.get(source, ()))

    def sources(self, uri: str) -> list[str]:
        """The sources that published for `uri`, in first-publish order."""
        doc = self._docs.get(uri)
        return [] if doc is None else list(doc.slices)

    def fresh_sources(self, uri: str) -> set[str]:
        """The sources that reported for `uri` since its text last changed version."""
        doc = self._docs.get(uri)
        return set() if doc is None else set(doc.fresh)

    def result_id(self, uri: str) -> str:
        """An id that changes whenever `merged(uri)` changes (pull diagnostics' resultId)."""
        doc = self._docs.get(uri)
        return "0" if doc is None else doc.result_id

    def attribute(
        self,
        uri: str,
        diagnostics: list[Diagnostic],
        sources: Iterable[str] | None = None,
    ) -> dict[str, list[Diagnostic]]:
        """Split a code action request's `context.diagnostics` per source.

        Each diagnostic the client sends is matched by range, message and code (and by its
        `source` when the client kept it) to the originals it stands for, which go back to
        their sources unchanged (their own `data` and `source`). One the store does not know
        goes, as sent, to every source. The result has a (possibly empty) list for every
        source in `sources` (default: those that published for `uri`).
        """
        doc = self._docs.get(uri)
        names = list(sources) if sources is not None else self.sources(uri)
        out: dict[str, list[Diagnostic]] = {name: [] for name in names}
        if doc is not None:
            self._merged(doc)
        for diag in diagnostics:
            entries = doc.index.get(diagnostic_key(diag), []) if doc is not None else []
            client_source = diag.get("source")
            # The client sees only the first of identical diagnostics; it stands for all of them,
            # unless the source it kept names none of them.
            if client_source is not None and not any(
                e.shown_source == client_source for e in entries
            ):
                entries = []
            if not entries:
                for name in names:
                    out[name].append(diag)
                continue
            for entry in entries:
                out.setdefault(entry.source, []).append(entry.original)
        return out

    # -- internals ------------------------------------------------------------------------

    def _doc(self, uri: str) -> _Document:
        doc = self._docs.get(uri)
        if doc is None:
            doc = self._docs[uri] = _Document()
        return doc

    def _settle(self, doc: _Document, before: list[Diagnostic]) -> bool:
        if self._merged(doc) == before:
            return False
        doc.result_id = str(next(self._ids))
        return True

    def _merged(self, doc: _Document) -> list[Diagnostic]:
        if doc.merged is not None:
            return doc.merged
        merged: list[Diagnostic] = []
        index: dict[_Key, list[_Entry]] = {}
        for source, diagnostics in doc.slices.items():
            for diag in diagnostics:
                own = diag.get("source")
                shown = own if isinstance(own, str) and own else source
                key = diagnostic_key(diag)
                entries = index.get(key)
                if entries is None:
                    index[key] = [_Entry(source, diag, shown)]
                    merged.append(diag if shown == own else {**diag, "source": shown})
                else:
                    entries.append(_Entry(source, diag, shown))
        doc.merged = merged
        doc.index = index
        return merged
