"""backends/documents.py: one copy and versions. The server's text is always one holder's text,
found by an O(1) question (`holds`); changes go incrementally when the server holds the
changing holder's previous text, whole otherwise; replay and re-sync read the text from the
holder. The server here is a recorder that applies what it is sent, as a server would, so every
test can check the text the server ends up with."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lspmux.backends.documents import BackendDocuments, HeldText
from lspmux.session.documents import Documents
from lspmux.text import apply_changes
from tests.profiles import examples

URI = "file:///w/a.py"


class Server:
    """Applies didOpen/didChange/didClose to its own texts and checks versions increase."""

    def __init__(self, change_kind: int = 2, include_text: bool = False) -> None:
        self.label = "srv[w]"
        self.capabilities: dict[str, Any] = {
            "textDocumentSync": {
                "openClose": True,
                "change": change_kind,
                "save": {"includeText": include_text},
            }
        }
        self.connected = True
        self.sent: list[tuple[str, Any]] = []
        self.raw: list[bytes] = []  # messages relayed as they came
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))
        td = params["textDocument"]
        uri = td["uri"]
        if method == "textDocument/didOpen":
            assert uri not in self.texts, "opened twice"
            self.texts[uri] = td["text"]
        elif method == "textDocument/didChange":
            self.texts[uri] = apply_changes(self.texts[uri], params["contentChanges"])
        elif method == "textDocument/didClose":
            del self.texts[uri]
            self.versions.pop(uri, None)
            return
        else:
            return
        assert td["version"] > self.versions.get(uri, -1)
        self.versions[uri] = td["version"]

    def notify_raw(self, body: bytes) -> None:
        self.raw.append(body)
        msg = orjson.loads(body)
        self.notify(msg["method"], msg["params"])

    def methods(self) -> list[str]:
        return [m.rsplit("/", 1)[1] for m, _ in self.sent]


class Holder:
    """A client: its own documents (the session's real `Documents`) and the protocol."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.docs = Documents("utf-16", chunk_size=4)

    def __repr__(self) -> str:
        return self.name

    def document_text(self, uri: str) -> tuple[str, int | None] | None:
        doc = self.docs.get(uri)
        return (doc.text, doc.version) if doc is not None else None

    def open(self, backend: BackendDocuments, text: str, version: int = 1) -> None:
        self.docs.open(URI, "python", version, text)
        backend.open(self, URI, "python", version, text)

    def edit(self, backend: BackendDocuments, line: int, char: int, new: str) -> None:
        doc = self.docs.get(URI)
        assert doc is not None
        pos = {"line": line, "character": char}
        changes = [{"range": {"start": pos, "end": pos}, "text": new}]
        doc.update(doc.version + 1, changes, "utf-16")
        backend.change(self, URI, doc.version, changes)

    def text(self) -> str:
        got = self.document_text(URI)
        assert got is not None
        return got[0]


def opened(*texts: str, **server: Any) -> tuple[Server, BackendDocuments, list[Holder]]:
    """A server, its documents, and one holder per text ("a", "b", …), each opened in turn."""
    srv = Server(**server)
    docs = BackendDocuments(srv)
    holders = [Holder(chr(ord("a") + i)) for i in range(len(texts))]
    for holder, text in zip(holders, texts, strict=True):
        holder.open(docs, text)
    return srv, docs, holders


def test_a_single_holder_sends_open_then_incremental_changes() -> None:
    server, docs, (a,) = opened("x = 1\n")
    a.edit(docs, 0, 5, "0")
    assert server.methods() == ["didOpen", "didChange"]
    assert server.sent[1][1]["contentChanges"][0]["range"]["start"] == {"line": 0, "character": 5}
    assert server.texts[URI] == a.text() == "x = 10\n"
    assert docs.holds(a, URI) and URI in docs and len(docs) == 1 and list(docs) == [URI]


def test_a_second_holder_with_the_same_text_costs_nothing() -> None:
    server = Server()
    docs = BackendDocuments(server)
    a, b = Holder("a"), Holder("b")
    a.open(docs, "same\n")
    b.open(docs, "same\n", version=7)
    assert server.methods() == ["didOpen"]
    assert docs.holds(a, URI) and docs.holds(b, URI)


def test_holders_that_differ_get_their_whole_text_sent() -> None:
    server = Server()
    docs = BackendDocuments(server)
    a, b = Holder("a"), Holder("b")
    a.open(docs, "one\n")
    b.open(docs, "two\n")  # another text: the server gets it in full
    assert server.texts[URI] == "two\n" and docs.holds(b, URI) and not docs.holds(a, URI)
    a.edit(docs, 0, 0, "#")  # the server holds b's text: a's whole text goes
    assert server.sent[-1][1]["contentChanges"] == [{"text": "#one\n"}]
    assert server.texts[URI] == a.text() and docs.holds(a, URI) and not docs.holds(b, URI)
    a.edit(docs, 0, 1, "!")  # now incremental again
    assert "range" in server.sent[-1][1]["contentChanges"][0]
    assert server.texts[URI] == "#!one\n"


def test_ensure_holds_resends_only_when_needed() -> None:
    server, docs, (a, b) = opened("a\n", "a\n")
    b.edit(docs, 0, 0, "b")
    sent = len(server.sent)
    assert docs.ensure_holds(b, URI) is False and len(server.sent) == sent
    assert docs.ensure_holds(a, URI) is True  # b changed it last: a's text goes back
    assert server.texts[URI] == "a\n" and docs.holds(a, URI)
    assert docs.ensure_holds(Holder("stranger"), URI) is False  # not a holder: nothing


def test_a_server_that_takes_only_full_text_gets_the_holders_text() -> None:
    server, docs, (a,) = opened("abc\n", change_kind=1)
    a.edit(docs, 0, 3, "d")
    assert server.sent[-1][1]["contentChanges"] == [{"text": "abcd\n"}]


def test_close_counts_references_and_a_closed_owner_leaves_no_owner() -> None:
    server, docs, (a, b) = opened("t\n", "t\n")
    a.edit(docs, 0, 0, "a")
    assert docs.close(a, URI) is False and URI in docs  # b still holds it
    assert not docs.holds(b, URI)  # the server has the text a left behind
    b.edit(docs, 0, 0, "b")  # so b's whole text goes
    assert server.sent[-1][1]["contentChanges"] == [{"text": "bt\n"}]
    assert docs.close(b, URI) is True and URI not in docs
    assert server.methods()[-1] == "didClose" and URI not in server.texts
    assert docs.close(b, URI) is False  # closing twice is harmless


def test_replay_reopens_with_the_current_holders_text() -> None:
    server, docs, (_, b) = opened("base\n", "base\n")
    b.edit(docs, 0, 0, "b-")
    restarted = Server()  # a new process knows nothing
    assert docs.replay(restarted.notify) == 1
    assert restarted.texts[URI] == "b-base\n" and docs.holds(b, URI)
    (_, params), *_ = restarted.sent
    assert params["textDocument"]["version"] > server.versions[URI]  # versions keep increasing


def test_replay_falls_back_to_any_holder_and_skips_a_document_nobody_can_give() -> None:
    _, docs, (a, b) = opened("one\n", "two\n")
    docs.close(b, URI)  # the server holds b's text, which is gone
    restarted = Server()
    assert docs.replay(restarted.notify) == 1
    assert restarted.texts[URI] == "one\n" and docs.holds(a, URI)
    silent = object()  # a holder that cannot give any text
    docs.open(silent, "file:///w/b.py", "python", 1, "x")  # type: ignore[arg-type]
    again = Server()
    assert docs.replay(again.notify) == 1 and "file:///w/b.py" not in again.texts


def test_held_text_is_a_holder_for_borrowed_files() -> None:
    server = Server(change_kind=1)
    docs = BackendDocuments(server)
    borrowed = HeldText("from disk\n")
    docs.open(borrowed, URI, "python", 0, "from disk\n")
    assert docs.replay(Server().notify) == 1 and docs.holds(borrowed, URI)
    assert docs.close(borrowed, URI) is True


def test_a_server_not_running_is_sent_nothing_and_no_text_is_built() -> None:
    """While the server starts or restarts, edits only move versions: no holder's text is read
    (that would cost O(file) per keystroke), and the replay gives the latest text."""
    server, docs, (a, b) = opened("ab\n", "ab\n", change_kind=1)
    server.connected = False
    reads: list[str] = []
    a_text = a.document_text
    a.document_text = lambda uri: reads.append(uri) or a_text(uri)  # type: ignore[method-assign]
    sent = len(server.sent)
    a.edit(docs, 0, 0, "1")
    a.edit(docs, 0, 0, "2")
    assert docs.ensure_holds(a, URI) is False and docs.holds(a, URI) and not docs.holds(b, URI)
    assert len(server.sent) == sent and reads == []
    restarted = Server()
    assert docs.replay(restarted.notify) == 1 and restarted.texts[URI] == "21ab\n"


def test_holder_version_drops_stale_server_versions() -> None:
    server = Server()
    docs = BackendDocuments(server)
    a = Holder("a")
    a.open(docs, "x\n", version=10)
    a.edit(docs, 0, 0, "y")  # holder version 11, server version 2
    assert docs.holder_version(URI, a, 2) == 11
    assert docs.holder_version(URI, a, None) == 11
    assert docs.holder_version(URI, a, 1) is None  # computed for an older text
    assert docs.holder_version("file:///other", a, 2) is None


@pytest.mark.parametrize(
    ("include", "given", "expected"), [(True, None, "mine\n"), (True, "g", "g")]
)
def test_save_sends_the_text_when_the_server_asks(
    include: bool, given: str | None, expected: str
) -> None:
    server, docs, (a,) = opened("mine\n", include_text=include)
    docs.save(URI, given, a)
    assert server.sent[-1] == (
        "textDocument/didSave",
        {"textDocument": {"uri": URI}, "text": expected},
    )
    docs.save("file:///not-open", None, a)
    assert server.sent[-1][0] == "textDocument/didSave" and len(server.sent) == 2


# -- property: whatever several holders do, a holder that `holds` has its text on the server ----

ops = st.lists(
    st.tuples(
        st.sampled_from(["open", "edit", "close", "ensure", "replay"]),
        st.integers(0, 2),  # which holder
        st.sampled_from(["", "x", "中", "😀", "\n", "\r\n"]),
    ),
    max_size=30,
)


@settings(max_examples=examples(150), deadline=None)
@given(ops=ops, change_kind=st.sampled_from([1, 2]))
def test_holds_is_true_exactly_when_the_server_has_the_holders_text(
    ops: list[tuple[str, int, str]], change_kind: int
) -> None:
    server = Server(change_kind)
    docs = BackendDocuments(server)
    holders = [Holder("a"), Holder("b"), Holder("c")]
    for op, who, piece in ops:
        h = holders[who]
        is_open = URI in h.docs
        if op == "open" and not is_open:
            h.open(docs, f"base{piece}\n")
        elif op == "edit" and is_open:
            h.edit(docs, 0, 1, piece)
            assert docs.holds(h, URI)  # the last to change it
        elif op == "close" and is_open:
            h.docs.close(URI)
            docs.close(h, URI)
        elif op == "ensure" and is_open:
            docs.ensure_holds(h, URI)
            assert docs.holds(h, URI)
        elif op == "replay" and URI in docs:
            server.texts.clear()  # the process died; a new one starts empty
            server.versions.clear()
            docs.replay(server.notify)
        for other in holders:
            if URI in other.docs and docs.holds(other, URI):
                assert server.texts[URI] == other.text()
        assert (URI in docs) == any(URI in o.docs for o in holders) == (URI in server.texts)


# -- a large didOpen relayed as the client's bytes -------------------------------------------------


def did_open(text: str, version: Any = 5) -> bytes:
    td = {"uri": URI, "languageId": "python", "version": version, "text": text}
    return orjson.dumps(
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": td}}
    )


def test_the_first_open_is_relayed_as_it_came_and_versions_go_on_from_the_clients() -> None:
    server = Server()
    backend = BackendDocuments(server)
    a = Holder("a")
    a.docs.open(URI, "python", 5, "x = 1\n")
    backend.open(a, URI, "python", 5, "x = 1\n", did_open("x = 1\n"))
    assert server.raw == [did_open("x = 1\n")]
    a.edit(backend, 0, 4, "2")
    assert server.sent[-1][1]["textDocument"]["version"] == 6
    assert server.texts[URI] == "x = 21\n"
    assert backend.holds(a, URI)


@pytest.mark.parametrize("version", [None, -1, True, "5"])
def test_an_open_with_an_odd_version_is_encoded_by_lspmux(version: Any) -> None:
    server = Server()
    backend = BackendDocuments(server)
    backend.open(Holder("a"), URI, "python", version, "x\n", did_open("x\n", version))
    assert server.raw == []
    assert server.sent[0][1]["textDocument"]["version"] == 1


def test_an_open_is_not_relayed_to_a_server_not_running_or_for_a_second_holder() -> None:
    server = Server()
    server.connected = False
    backend = BackendDocuments(server)
    a, b = Holder("a"), Holder("b")
    a.docs.open(URI, "python", 5, "x\n")
    backend.open(a, URI, "python", 5, "x\n", did_open("x\n"))
    assert server.raw == []
    server.sent, server.texts, server.versions = [], {}, {}  # a real backend drops it...
    server.connected = True  # ...and the replay opens it once it runs
    assert backend.replay(server.notify) == 1
    b.docs.open(URI, "python", 5, "y\n")
    backend.open(b, URI, "python", 5, "y\n", did_open("y\n"))
    assert server.raw == []
    assert server.texts[URI] == "y\n"  # the second holder's text, as a full change
