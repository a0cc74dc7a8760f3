"""`lspmux mcp`'s stdin reader: a line over the limit is refused with an error under its id and
skipped; the lines around it are served (one 16 MiB line used to kill the server)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from lspmux.agent.mcp_server import _PipeLines, top_level_id


class Sink:
    def __init__(self) -> None:
        self.text = ""

    async def write(self, text: str) -> None:
        self.text += text

    async def flush(self) -> None:
        pass


async def read_all(data: list[bytes], limit: int) -> tuple[list[str], list[dict[str, Any]]]:
    reader = asyncio.StreamReader()
    for piece in data:
        reader.feed_data(piece)
    reader.feed_eof()
    sink = Sink()
    lines = [line async for line in _PipeLines(reader, sink, limit=limit)]  # type: ignore[arg-type]
    return lines, [json.loads(x) for x in sink.text.splitlines()]


async def test_a_line_over_the_limit_is_refused_under_its_id_and_the_next_is_served() -> None:
    big = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"arguments": {"text": "x" * 5000}}}) + "\n"  # fmt: skip
    pieces = [b'{"id": 1}\n', big[:1000].encode(), big[1000:].encode(), b'{"id": 2}\n']
    lines, errors = await read_all(pieces, limit=2000)
    assert lines == ['{"id": 1}\n', '{"id": 2}\n']
    [error] = errors
    assert error["id"] == 7 and error["error"]["code"] == -32600
    assert "MiB was refused" in error["error"]["message"]


async def test_lines_of_any_chunking_come_out_whole() -> None:
    text = b'{"a": 1}\n{"b": 2}\n{"c": 3}'
    for size in (1, 2, 5, 64):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        lines, errors = await read_all(pieces, limit=100)
        assert lines == ['{"a": 1}\n', '{"b": 2}\n', '{"c": 3}'] and not errors


def test_the_id_is_the_top_levels_not_one_in_params() -> None:
    assert top_level_id(b'{"params": {"id": 3}, "id": "x\\"y"') == 'x"y'
    assert top_level_id(b'{"jsonrpc": "2.0", "params": {"arguments": {"id": 3}') is None
    assert top_level_id(b'{"id": -12, "method"') == -12
    assert top_level_id(b'[{"id": 1}]') is None
