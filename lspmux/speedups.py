"""lspmux's optional C speedups (`lspmux/_speedups.c`), and whether this process uses them.

The extension is built at install time when the machine has a C compiler (`setup.py`,
optional); each function it has computes what a Python function of lspmux computes, on the
inputs it takes, and returns None for the others, which the caller then gives to the Python.
Without the extension, or with `LSPMUX_PURE_PYTHON=1` in the environment, every caller runs
the Python alone: the answers are the same, only slower (`lspmux doctor` says which is in use).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType

#: The environment variable that turns the speedups off (any value but "" and "0").
PURE_PYTHON_ENV = "LSPMUX_PURE_PYTHON"

#: The version of the extension's functions this source expects (`SPEEDUPS_ABI` in the C).
ABI = 6

#: What the extension has; a build without one of them is not used at all.
FUNCTIONS = (
    "contains",
    "fit_markdown_docs",
    "fit_hover_markdown",
    "split_frames",
    "scan_request",
    "sniff_response",
    "rewrite_response_id",
    "run_requests",
    "run_answers",
    "configure",
    "Reader",
)


def _load() -> tuple[ModuleType | None, str]:
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return None, f"off ({PURE_PYTHON_ENV} is set)"
    try:
        from lspmux import _speedups
    except ImportError as exc:
        return None, f"not built ({exc}); reinstall lspmux on a machine with a C compiler"
    missing = [name for name in FUNCTIONS if not hasattr(_speedups, name)]
    built = getattr(_speedups, "ABI", None)
    if missing or built != ABI:  # a build of an older source (an editable install not rebuilt)
        what = f"no {', '.join(missing)}" if missing else f"ABI {built}, this source's is {ABI}"
        return None, f"out of date ({what}); rebuild: pip install -e ."
    return _speedups, "in use"


native, status = _load()


def _contains(haystack: bytes | bytearray, needle: bytes) -> bool:
    return needle in haystack


#: `needle in haystack` (C: glibc's memmem, ~3x CPython's search over a large haystack).
contains: Callable[[bytes | bytearray, bytes], bool] = (
    native.contains if native is not None else _contains
)

#: `routing.fit_raw._fast_markdown` for answers whose markdown documentation is simple text
#: (None for the others); None when the speedups are not in use.
fit_markdown_docs: Callable[[bytes | bytearray], bytes | None] | None = (
    native.fit_markdown_docs if native is not None else None
)
#: `routing.fit_raw.fit_found` of a hover whose markdown is code blocks and lines without
#: markup, for a client without markdown hovers (None for the others); None when the speedups
#: are not in use.
fit_hover_markdown: Callable[[bytes | bytearray], bytes | None] | None = (
    native.fit_hover_markdown if native is not None else None
)
