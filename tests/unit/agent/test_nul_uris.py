"""A server's URI with `%00` in it (a NUL in the path) is a file that cannot exist: the agent
tools read no text for it instead of failing with a traceback (`embedded null byte`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lspmux.agent.apply import read_disk
from lspmux.agent.lsp import AgentLsp


def test_reading_a_nul_path_finds_nothing(tmp_path: Path) -> None:
    assert read_disk(tmp_path / "a\0b.py") is None


def test_a_location_with_a_nul_uri_has_no_text(tmp_path: Path) -> None:
    class Client:  # nothing is asked of the server here
        on_request: Any = None

    lsp = AgentLsp(tmp_path, client=Client())  # type: ignore[arg-type]
    uri: Any = (tmp_path / "x.py").as_uri() + "%00.py"
    assert lsp.text_of(uri) is None
    assert lsp.line(uri, 0) is None
