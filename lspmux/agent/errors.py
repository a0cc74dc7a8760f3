"""The one error type of the agent tools: a message for the model plus structured data.

A tool raises `ToolError` for anything the caller can fix (a path outside the root, a Locate
string that matches nothing, a stale file); the MCP face turns it into a result with
`isError: true`, the command line into a message on stderr and exit status 1.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the verbs import this at start (typing ~3 ms)
if TYPE_CHECKING:
    from typing import Any


class ToolError(Exception):
    """What went wrong and what to do next; `data` goes to `structuredContent`."""

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
