"""Choosing the session's encoding, telling backends, reading what they answered."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.encodings.negotiate import answered, choose, client_encodings, for_backend
from lspmux.text import Encoding


@pytest.mark.parametrize(
    ("caps", "expected"),
    [
        ({}, ["utf-16"]),
        (None, ["utf-16"]),
        ({"general": {"positionEncodings": ["utf-8", "utf-16"]}}, ["utf-8", "utf-16"]),
        ({"general": {"positionEncodings": ["utf-32"]}}, ["utf-32", "utf-16"]),
        ({"general": {"positionEncodings": ["latin-1"]}}, ["utf-16"]),
        ({"offsetEncoding": ["utf-8", "utf-16"]}, ["utf-8", "utf-16"]),  # nvim-lspconfig clangd
        (
            {"general": {"positionEncodings": ["utf-16"]}, "offsetEncoding": ["utf-8"]},
            ["utf-16"],  # the standard field wins
        ),
    ],
)
def test_client_encodings(caps: dict[str, Any] | None, expected: list[str]) -> None:
    assert client_encodings(caps) == expected


@pytest.mark.parametrize(
    ("caps", "servable", "expected"),
    [
        ({"general": {"positionEncodings": ["utf-8", "utf-16"]}}, ("utf-8", "utf-16"), "utf-8"),
        ({"general": {"positionEncodings": ["utf-8", "utf-16"]}}, ("utf-16",), "utf-16"),
        ({"general": {"positionEncodings": ["utf-32"]}}, ("utf-8",), "utf-16"),
        ({}, ("utf-8",), "utf-16"),
    ],
)
def test_choose(caps: dict[str, Any], servable: tuple[Encoding, ...], expected: str) -> None:
    assert choose(caps, servable) == expected


def test_for_backend_asks_for_the_session_encoding_only() -> None:
    caps = {
        "offsetEncoding": ["utf-8", "utf-16"],
        "general": {"positionEncodings": ["utf-8"]},
        "x": 1,
    }
    assert for_backend(caps, "utf-16") == {"general": {"positionEncodings": ["utf-16"]}, "x": 1}
    assert for_backend(caps, "utf-8")["general"]["positionEncodings"] == ["utf-8", "utf-16"]
    assert caps["offsetEncoding"] == ["utf-8", "utf-16"]  # not mutated


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"capabilities": {"positionEncoding": "utf-8"}}, "utf-8"),
        ({"capabilities": {}, "offsetEncoding": "utf-8"}, "utf-8"),  # clangd < 16
        ({"capabilities": {}}, "utf-16"),
        (None, "utf-16"),
        ({"capabilities": {"positionEncoding": "ebcdic"}}, "utf-16"),
    ],
)
def test_answered(result: dict[str, Any] | None, expected: str) -> None:
    assert answered(result, "clangd") == expected
