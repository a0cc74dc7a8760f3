"""JSON-RPC errors that lspmux answers with, as exception classes with a class-level CODE.

Raise one anywhere a request is handled; the session turns it into the error response with
`to_response_error()`. Messages say what was wrong and what to do. The other way round,
`JsonRpcError.from_error(error)` turns an error object a peer sent into the class for its code,
so a caller tests `except ContentModified:` instead of comparing numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_BY_CODE: dict[int, type[JsonRpcError]] = {}


class JsonRpcError(Exception):
    CODE = -32603  # InternalError

    def __init__(self, message: str, data: Any = None, *, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None and code != self.CODE:
            self.CODE = code  # a code lspmux has no class for

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _BY_CODE[cls.CODE] = cls

    @staticmethod
    def from_error(error: Mapping[str, Any] | None) -> JsonRpcError:
        """The exception for an error object a peer sent: an instance of the class for its
        code (MethodNotFound, ContentModified, …), else a JsonRpcError carrying the code."""
        error = error if isinstance(error, Mapping) else {}
        message = str(error.get("message") or "error")
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            return InternalError(
                f"{message} (the error came without a numeric code)", error.get("data")
            )
        cls = _BY_CODE.get(code)
        if cls is None:
            return JsonRpcError(message, error.get("data"), code=code)
        return cls(message, error.get("data"))

    def to_response_error(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.CODE, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class ParseError(JsonRpcError):
    CODE = -32700


class InvalidRequest(JsonRpcError):
    CODE = -32600


class MethodNotFound(JsonRpcError):
    CODE = -32601


class InvalidParams(JsonRpcError):
    CODE = -32602


class InternalError(JsonRpcError):
    CODE = -32603


class ServerNotInitialized(JsonRpcError):
    CODE = -32002


class RequestFailed(JsonRpcError):
    CODE = -32803


class ServerCancelled(JsonRpcError):
    CODE = -32802

    @property
    def retrigger(self) -> bool:
        """The server asks to be asked again (`data.retriggerRequest`, for diagnostic pulls)."""
        return isinstance(self.data, Mapping) and bool(self.data.get("retriggerRequest"))


class RequestCancelled(JsonRpcError):
    CODE = -32800


class ContentModified(JsonRpcError):
    CODE = -32801
