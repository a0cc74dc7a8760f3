"""Real clangd, once on UTF-8 and once on the client's encoding (UTF-16, then UTF-32): converting
the UTF-8 clangd's answers with lspmux/encodings gives exactly the other clangd's answers
(definition, hover range, document symbols, highlights, diagnostics), and an incremental edit in
the client's encoding converted for the UTF-8 clangd leaves both with the same text (no drift).
(Names ending in 16 are the client's side, whichever encoding it uses.)

Every line that matters has non-ASCII (2-, 3-byte) and non-BMP (emoji) text before identifiers.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

import lspmux.routing.table  # noqa: F401  (hands the routes' shapes to positions)
from lspmux.backends.client_caps import answered_encoding, for_backend
from lspmux.session.positions import convert_notification, convert_params, convert_result
from lspmux.text import Encoding
from tests.e2e.rawlsp import RawClient

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("clangd") is None, reason="clangd is not installed"),
]

SOURCE = """\
struct point { int x; int y; };
/* é中😀 */ static int helper(int v) { return v + 1; }
int main(void) { const char *s = "😀é中😀"; int value = helper(2); int bad = missing_thing; return value + s[0] + bad; }
/* 😀😀 */ int other(struct point p) { int q = also_missing; return p.x + helper(p.y) + q; }
"""


def index_of(line: int, needle: str, nth: int = 0) -> int:
    text = SOURCE.split("\n")[line]
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    return at


def position(line: int, index: int, enc: Encoding) -> dict[str, int]:
    prefix = SOURCE.split("\n")[line][:index]
    return {"line": line, "character": units(prefix, enc)}


def units(text: str, enc: Encoding) -> int:
    """Length in `enc` units, by Python's codecs (not by lspmux)."""
    codec, width = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}[
        enc
    ]
    return len(text.encode(codec)) // width


CLIENT_CAPS: dict[str, Any] = {
    "textDocument": {
        "hover": {"contentFormat": ["plaintext"]},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "definition": {"linkSupport": False},
        "publishDiagnostics": {"relatedInformation": True},
    },
}


def told(enc: Encoding) -> dict[str, Any]:
    """Capabilities asking for `enc` only, both the LSP 3.17 way and clangd's own."""
    return {**CLIENT_CAPS, "general": {"positionEncodings": [enc]}, "offsetEncoding": [enc]}


async def start_clangd(
    tmp_path: Path, name: str, capabilities: dict[str, Any]
) -> tuple[RawClient, str, dict[str, Any]]:
    folder = tmp_path / name
    folder.mkdir()
    source = folder / "main.c"
    source.write_text(SOURCE, encoding="utf-8")
    client = RawClient()
    await client.start("clangd", "--background-index=false", "--log=error", cwd=str(folder))
    init = await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": folder.as_uri(),
            "capabilities": capabilities,
        },
    )
    client.notify("initialized", {})
    uri = source.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "c", "version": 1, "text": SOURCE}},
    )
    return client, uri, init


@pytest_asyncio.fixture(params=["utf-16", "utf-32"])
async def clangds(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    started: list[RawClient] = []
    out: dict[str, Any] = {"target": request.param}
    try:
        for enc in ("utf-8", request.param):
            client, uri, init = await start_clangd(tmp_path, enc, told(enc))  # type: ignore[arg-type]
            started.append(client)
            out[enc] = (client, uri, init)
        yield out
    finally:
        for client in started:
            await client.stop()


def rebase(value: Any, old: str, new: str) -> Any:
    """The same answer with the UTF-8 server's file URI replaced by the UTF-16 server's."""
    import orjson

    return orjson.loads(orjson.dumps(value).replace(old.encode(), new.encode()))


async def test_converted_utf8_answers_equal_clangds_own_answers(clangds: dict[str, Any]) -> None:
    target = clangds["target"]
    c8, uri8, init8 = clangds["utf-8"]
    c16, uri16, init16 = clangds[target]
    assert answered_encoding(init8) == "utf-8"
    assert answered_encoding(init16) == target

    def text_of(uri: str) -> str | None:
        return SOURCE if uri == uri8 else None

    # Both have parsed the file once they publish.
    d8 = await c8.wait_for(lambda: c8.published(uri8), "utf-8 clangd's diagnostics")
    d16 = await c16.wait_for(lambda: c16.published(uri16), f"{target} clangd's diagnostics")

    async def both(method: str, params16: dict[str, Any]) -> tuple[Any, Any]:
        """Ask the target clangd with params in its encoding and the UTF-8 clangd with the same
        params converted; return (the UTF-8 answer converted back, the target's answer)."""
        params8 = convert_params(method, rebase(params16, uri16, uri8), target, "utf-8", text_of)
        got8 = await c8.request(method, params8)
        got16 = await c16.request(method, params16)
        converted = convert_result(method, got8, "utf-8", target, text_of, params8)
        return rebase(converted, uri8, uri16), got16

    td = {"textDocument": {"uri": uri16}}
    calls = [
        ("textDocument/definition", {**td, "position": position(2, index_of(2, "helper") + 2, target)}),
        ("textDocument/definition", {**td, "position": position(3, index_of(3, "helper") + 1, target)}),
        ("textDocument/hover", {**td, "position": position(2, index_of(2, "value", 1) + 1, target)}),
        ("textDocument/hover", {**td, "position": position(3, index_of(3, "p.x") + 2, target)}),
        ("textDocument/documentSymbol", td),
        ("textDocument/documentHighlight", {**td, "position": position(1, index_of(1, "v)") , target)}),
    ]  # fmt: skip
    for method, params in calls:
        converted, expected = await both(method, params)
        assert expected, f"{method} {params}: clangd gave no answer to compare"
        raw8 = await c8.request(
            method, convert_params(method, rebase(params, uri16, uri8), target, "utf-8", text_of)
        )
        assert rebase(raw8, uri8, uri16) != expected, f"{method}: the encodings do not differ here"
        assert converted == expected, method

    # Diagnostics: both report the two undeclared identifiers, after non-BMP text.
    assert len(d16[-1]["diagnostics"]) >= 2
    converted = convert_notification(
        "textDocument/publishDiagnostics", d8[-1], "utf-8", target, text_of
    )
    assert converted["diagnostics"] != d8[-1]["diagnostics"]
    assert rebase(converted, uri8, uri16) == d16[-1]


async def test_incremental_edits_converted_keep_both_copies_equal(clangds: dict[str, Any]) -> None:
    target = clangds["target"]
    c8, uri8, _ = clangds["utf-8"]
    c16, uri16, _ = clangds[target]
    await c8.wait_for(lambda: c8.published(uri8), "first diagnostics (utf-8)")
    await c16.wait_for(lambda: c16.published(uri16), f"first diagnostics ({target})")

    # Two changes in one didChange, in the client's positions: rename `missing_thing` to `gone`, then,
    # in the text that change leaves, insert `😀` into the string literal before `é`. Sent
    # unconverted, the UTF-8 clangd's copy drifts (it splits a character: "Illegal character
    # encoding in string literal", as seen in the issue).
    line2 = SOURCE.split("\n")[2]
    start = index_of(2, "missing_thing")
    after_first = line2[:start] + "gone" + line2[start + len("missing_thing") :]
    lit = after_first.index("é")

    def col16(text: str, index: int) -> int:
        return units(text[:index], target)

    change16 = {
        "textDocument": {"uri": uri16, "version": 2},
        "contentChanges": [
            {
                "range": {
                    "start": {"line": 2, "character": col16(line2, start)},
                    "end": {"line": 2, "character": col16(line2, start + len("missing_thing"))},
                },
                "text": "gone",
            },
            {
                "range": {"start": {"line": 2, "character": col16(after_first, lit)}, "end": {"line": 2, "character": col16(after_first, lit)}},
                "text": "😀",
            },
        ],
    }  # fmt: skip
    change8 = convert_notification(
        "textDocument/didChange",
        rebase(change16, uri16, uri8),
        target,
        "utf-8",
        lambda uri: SOURCE if uri == uri8 else None,
    )
    n8, n16 = len(c8.published(uri8)), len(c16.published(uri16))
    c8.notify("textDocument/didChange", change8)
    c16.notify("textDocument/didChange", change16)
    await c8.wait_for(lambda: len(c8.published(uri8)) > n8, "diagnostics after the edit (utf-8)")
    await c16.wait_for(
        lambda: len(c16.published(uri16)) > n16, f"diagnostics after the edit ({target})"
    )

    # clangd's copies are equal: same diagnostics, same selection ranges on the edited line.
    edited = SOURCE.split("\n")
    edited[2] = after_first[:lit] + "😀" + after_first[lit:]
    edited_text = "\n".join(edited)

    def text_of(uri: str) -> str | None:
        return edited_text if uri == uri8 else None

    last8 = convert_notification(
        "textDocument/publishDiagnostics", c8.published(uri8)[-1], "utf-8", target, text_of
    )
    last16 = c16.published(uri16)[-1]
    assert rebase(last8, uri8, uri16) == last16
    messages = " ".join(d["message"] for d in last16["diagnostics"])
    assert "gone" in messages and "missing_thing" not in messages, messages
    pos = {"line": 2, "character": col16(edited[2], edited[2].index("gone") + 1)}
    sel16 = await c16.request(
        "textDocument/selectionRange", {"textDocument": {"uri": uri16}, "positions": [pos]}
    )
    params8 = convert_params(
        "textDocument/selectionRange",
        {"textDocument": {"uri": uri8}, "positions": [pos]},
        target,
        "utf-8",
        text_of,
    )
    sel8 = await c8.request("textDocument/selectionRange", params8)
    assert (
        convert_result("textDocument/selectionRange", sel8, "utf-8", target, text_of, params8)
        == sel16
    )


async def test_a_client_offering_utf8_leaves_clangd_on_utf16_through_for_backend(
    tmp_path: Path,
) -> None:
    """nvim-lspconfig's clangd setup sends `offsetEncoding: ["utf-8", "utf-16"]`: passed on as
    it is, clangd picks UTF-8 (the bug of the issue); `client_caps.for_backend` with the
    session's UTF-16 keeps it there."""
    nvim = {**CLIENT_CAPS, "offsetEncoding": ["utf-8", "utf-16"]}
    as_is, _, init_as_is = await start_clangd(tmp_path, "as-is", nvim)
    try:
        assert answered_encoding(init_as_is) == "utf-8"
    finally:
        await as_is.stop()
    planned, _, init_planned = await start_clangd(
        tmp_path, "planned", for_backend(nvim, position_encoding="utf-16")
    )
    try:
        assert answered_encoding(init_planned) == "utf-16"
    finally:
        await planned.stop()
