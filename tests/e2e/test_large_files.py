"""Large files end to end: 1 MB and 10 MB documents through `lspmux proxy` with the real
basedpyright and clangd behind it.

Each file is real code at both ends (a class or function near the top, `main` with an error at
the bottom) around a body of comment lines with CJK text and an emoji (so UTF-16 positions
differ from code points). The client inserts a line at the top and single characters after
the emoji of many lines, then checks what each party saw: lspmux (Locate counts the inserted
characters and gives the position of the last one), the server (hover and the diagnostic at the
shifted line of `main`), and Locate with the server's symbols. Edits cost lspmux time in
proportion to the edit, so Locate answers at once after a burst of edits; and a hover on a
small file is not held up behind a stream of edits to a 10 MB one. The time limits are
generous (the machine is shared); docs/benchmarks.md has the precise figures.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest
from lsprotocol import types as t

from lspmux.text import units
from tests.e2e.conftest import Proxy

MB = 1_000_000
EMOJI = "😀"
#: The servers need their time with 10 MB (basedpyright re-checks the file after each edit);
#: what is timed here is lspmux.
PATIENT = "[servers.basedpyright]\nrequest_timeout = 150\n[servers.clangd]\nrequest_timeout = 150\n"


@dataclass(frozen=True)
class Shape:
    """Where things are in a generated file (0-based lines, before any edit)."""

    name: str
    language_id: str
    head: str
    filler: str  # one comment line, formatted with its index
    tail: str
    main_line: int  # in the tail: the line of the hover/Locate target
    main_find: str  # Locate: the text at that line, marker at the target
    main_char: int  # the target's character
    hover_char: int
    hover_text: str
    error_line: int  # in the tail: the line of the diagnostic
    error_word: str  # in the diagnostic's message


PY = Shape(
    name="big.py",
    language_id="python",
    head='class Greeter:\n    """Says hello."""\n\n    def greet(self) -> str:\n'
    '        return "Hello"\n\n\n',
    filler="# filler {:07d}: the quick brown fox jumps over the lazy dog 中文 " + EMOJI + " end\n",
    tail="\n\ndef main() -> None:\n    greeter = Greeter()\n    print(greeter.greet())\n"
    "    undefined_name\n",
    main_line=3,
    main_find="<|>greeter = Greeter",
    main_char=4,
    hover_char=6,
    hover_text="greeter: Greeter",
    error_line=5,
    error_word="undefined_name",
)
C = Shape(
    name="big.c",
    language_id="c",
    head='#include "hello.h"\n\nint add(int a, int b) { return a + b; }\n\n',
    filler="// filler {:07d}: the quick brown fox jumps over the lazy dog 中文 " + EMOJI + " end\n",
    tail="\nint main(void) {\n    int total = add(1, 2);\n    return totl;\n}\n",
    main_line=2,
    main_find="int total = <|>add",
    main_char=16,
    hover_char=16,
    hover_text="add",
    error_line=3,
    error_word="totl",
)


@dataclass(frozen=True)
class Generated:
    shape: Shape
    text: str
    head_lines: int
    filler_lines: int

    def tail_line(self, line: int, shift: int = 0) -> int:
        return self.head_lines + self.filler_lines + line + shift


def generate(shape: Shape, size: int) -> Generated:
    line_bytes = len(shape.filler.format(0).encode())
    count = max((size - len(shape.head) - len(shape.tail)) // line_bytes, 1)
    body = "".join(shape.filler.format(i) for i in range(count))
    return Generated(shape, shape.head + body + shape.tail, shape.head.count("\n"), count)


def insert(line: int, character: int, text: str) -> t.TextDocumentContentChangePartial:
    pos = t.Position(line, character)
    return t.TextDocumentContentChangePartial(range=t.Range(pos, pos), text=text)


def after_emoji(shape: Shape) -> int:
    """The UTF-16 character just after the emoji of a filler line."""
    return units(shape.filler.format(0).split(EMOJI)[0] + EMOJI, "utf-16")


def edit_filler(proxy: Proxy, uri: str, gen: Generated, edits: int, shift: int) -> int:
    """Insert "x" after the emoji of `edits` filler lines spread over the file, one didChange
    each; the (shifted) line of the last one."""
    stride = max(gen.filler_lines // edits, 1)
    line = 0
    for k in range(edits):
        line = gen.head_lines + shift + k * stride
        proxy.change(uri, [insert(line, after_emoji(gen.shape), "x")])
    return line


async def locate_inserted(proxy: Proxy, name: str, edits: int) -> dict[str, object]:
    """lspmux's own view of the edits: how many "😀x" there are, where the last one is."""
    return await proxy.request(
        "locate/resolve",
        {"locate": {"file_path": name, "find": f"{EMOJI}<|>x", "find_index": edits - 1}},
    )


async def hover_text(proxy: Proxy, uri: str, line: int, character: int) -> str:
    hover = await proxy.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(line, character))
    )
    assert hover is not None
    contents = hover.contents
    return contents.value if hasattr(contents, "value") else str(contents)


@pytest.mark.parametrize("size", [MB, 10 * MB], ids=["1MB", "10MB"])
@pytest.mark.parametrize("shape", [PY, C], ids=["basedpyright", "clangd"])
async def test_open_edit_hover_locate_and_diagnostics_on_a_large_file(
    proxy_factory: Callable[..., Awaitable[Proxy]], shape: Shape, size: int
) -> None:
    proxy = await proxy_factory(config=PATIENT)
    gen = generate(shape, size)
    (proxy.workspace / shape.name).write_text(gen.text)
    uri = proxy.open(shape.name, shape.language_id, gen.text)
    main = gen.tail_line(shape.main_line)
    text = await hover_text(proxy, uri, main, shape.hover_char)  # the server has the text
    assert shape.hover_text in text

    # A line at the top, then a burst of single-character edits all over the file.
    proxy.change(uri, [insert(0, 0, "# edited\n" if shape is PY else "// edited\n")])
    edits = 100
    last = edit_filler(proxy, uri, gen, edits, shift=1)
    start = time.perf_counter()
    found = await locate_inserted(proxy, shape.name, edits)
    elapsed = time.perf_counter() - start
    assert found["match"]["count"] == edits  # type: ignore[index]
    assert found["position"] == {"line": last, "character": after_emoji(shape)}
    assert elapsed < 5, f"Locate after {edits} edits took {elapsed:.2f}s"

    # The server saw the same edits: hover and the diagnostic at the shifted lines.
    text = await hover_text(proxy, uri, main + 1, shape.hover_char)
    assert shape.hover_text in text
    error = gen.tail_line(shape.error_line, shift=1)
    await proxy.diagnostics_where(
        uri,
        lambda ds: any(shape.error_word in d.message and d.range.start.line == error for d in ds),
        timeout=180,
    )
    # Locate with the server's symbols finds `main` where it now is.
    symbol = "main@" + shape.main_find
    found = await proxy.request("locate/resolve", {"locate": f"{shape.name}:{symbol}"})
    assert found["position"] == {"line": main + 1, "character": shape.main_char}


async def test_a_hover_is_not_held_up_by_a_stream_of_edits_to_a_large_file(proxy: Proxy) -> None:
    """1,000 edits of a 10 MB C file (clangd) stream in, then a hover on app.py (basedpyright):
    lspmux has processed every edit when the hover arrives, and the hover is answered at once;
    the text lspmux ends with is the client's (every edit there, in its place)."""
    small = proxy.open("app.py", "python")
    assert "greeter: Greeter" in await hover_text(proxy, small, 15, 6)  # basedpyright warm
    gen = generate(C, 10 * MB)
    (proxy.workspace / C.name).write_text(gen.text)
    big = proxy.open(C.name, C.language_id, gen.text)
    assert C.hover_text in await hover_text(proxy, big, gen.tail_line(C.main_line), C.hover_char)

    edits = 1000
    last = edit_filler(proxy, big, gen, edits, shift=0)
    start = time.perf_counter()
    text = await hover_text(proxy, small, 15, 6)
    elapsed = time.perf_counter() - start
    assert "greeter: Greeter" in text
    assert elapsed < 2, f"a hover behind {edits} edits of a 10 MB file took {elapsed:.2f}s"
    found = await locate_inserted(proxy, C.name, edits)
    assert found["match"]["count"] == edits  # type: ignore[index]
    assert found["position"] == {"line": last, "character": after_emoji(C)}
    error = gen.tail_line(C.error_line)
    await proxy.diagnostics_where(
        big,
        lambda ds: any(C.error_word in d.message and d.range.start.line == error for d in ds),
        timeout=180,
    )
