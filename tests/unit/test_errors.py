"""lspmux.errors: error objects a peer sends come back as the class for their code."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux import errors
from lspmux.errors import (
    ContentModified,
    InternalError,
    JsonRpcError,
    MethodNotFound,
    RequestCancelled,
    ServerCancelled,
)


def _classes() -> list[type[JsonRpcError]]:
    return [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, JsonRpcError) and c is not JsonRpcError
    ]


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_every_class_round_trips_through_its_error_object(cls: type[JsonRpcError]) -> None:
    sent = cls("what went wrong", {"detail": 1}).to_response_error()
    back = JsonRpcError.from_error(sent)
    assert type(back) is cls
    assert (back.message, back.data, back.CODE) == ("what went wrong", {"detail": 1}, cls.CODE)


def test_codes_are_unique() -> None:
    codes = [c.CODE for c in _classes()]
    assert len(codes) == len(set(codes))


def test_a_received_error_is_caught_by_its_class() -> None:
    with pytest.raises(ContentModified):
        raise JsonRpcError.from_error({"code": -32801, "message": "content modified"})
    with pytest.raises(MethodNotFound, match="no such method"):
        raise JsonRpcError.from_error({"code": -32601, "message": "no such method"})
    assert isinstance(JsonRpcError.from_error({"code": -32800, "message": "x"}), RequestCancelled)


def test_an_unknown_code_is_kept() -> None:
    exc = JsonRpcError.from_error({"code": -31999, "message": "server specific", "data": [1]})
    assert type(exc) is JsonRpcError
    assert exc.to_response_error() == {"code": -31999, "message": "server specific", "data": [1]}
    assert JsonRpcError.CODE == -32603  # the class is untouched


@pytest.mark.parametrize("error", [None, {}, {"message": "no code"}, {"code": "x"}, {"code": True}])
def test_a_malformed_error_is_an_internal_error_that_says_so(error: Any) -> None:
    exc = JsonRpcError.from_error(error)
    assert type(exc) is InternalError
    assert "without a numeric code" in exc.message


def test_server_cancelled_says_whether_to_ask_again() -> None:
    again = JsonRpcError.from_error(
        {"code": -32802, "message": "", "data": {"retriggerRequest": True}}
    )
    assert isinstance(again, ServerCancelled) and again.retrigger
    assert not ServerCancelled("stop").retrigger
    assert not ServerCancelled("stop", data="text").retrigger
