"""Types of lspmux's optional C speedups (`lspmux/_speedups.c`; see `lspmux/speedups.py`)."""

from typing import Any

ABI: int

def fit_markdown_docs(body: bytes | bytearray, /) -> bytes | None: ...
def fit_hover_markdown(body: bytes | bytearray, /) -> bytes | None: ...
def contains(haystack: bytes | bytearray, needle: bytes, /) -> bool: ...
def split_frames(
    data: bytes | bytearray | memoryview, start: int, max_size: int, /
) -> tuple[list[bytes], int]: ...
def sniff_response(body: bytes | bytearray, /) -> tuple[int, int] | None: ...
def rewrite_response_id(
    body: bytes | bytearray, offset: int, new_id: int | str, /
) -> bytes | None: ...
def lane_requests(
    items: list[Any],
    start: int,
    session: Any,
    routes: dict[str, tuple[int, str | None, str | None]],
    exchange_type: type,
    now_loop: float,
    now_mono: float,
    dirty: list[Any],
    /,
) -> tuple[int, BaseException | None]: ...
def lane_answers(
    items: list[Any], start: int, conn: Any, exchange_type: type, dirty: list[Any], /
) -> tuple[int, BaseException | None]: ...
