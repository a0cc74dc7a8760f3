"""Choosing the session's encoding from the client's capabilities."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.encodings.negotiate import client_encodings, session_encoding


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
    ("caps", "expected"),
    [
        ({"general": {"positionEncodings": ["utf-8", "utf-16"]}}, "utf-16"),  # Neovim: no cost
        ({"general": {"positionEncodings": ["utf-8"]}}, "utf-8"),  # cannot take UTF-16
        ({"general": {"positionEncodings": ["utf-32"]}}, "utf-32"),
        ({"general": {"positionEncodings": ["latin-1"]}}, "utf-16"),
        ({"offsetEncoding": ["utf-8"]}, "utf-16"),  # the old extension is not the standard field
        ({}, "utf-16"),
        (None, "utf-16"),
    ],
)
def test_session_encoding(caps: dict[str, Any] | None, expected: str) -> None:
    assert session_encoding(caps) == expected
