"""JSON-RPC errors that lspmux answers with, as exception classes with a class-level CODE.

Raise one anywhere a request is handled; the session turns it into the error response with
`to_response_error()`. Messages say what was wrong and what to do.
"""

from __future__ import annotations

from typing import Any


class JsonRpcError(Exception):
    CODE = -32603  # InternalError

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

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


class RequestCancelled(JsonRpcError):
    CODE = -32800


class ContentModified(JsonRpcError):
    CODE = -32801
