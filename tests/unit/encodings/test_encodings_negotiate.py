"""Choosing the session's encoding from the client's capabilities."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.encodings.negotiate import choose, client_encodings
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
