"""`file:` URIs ⇄ filesystem paths: the one conversion every module uses.

Built on the standard library (`urllib.parse` to split and unescape, `pathlib` to build the
URI) rather than a third-party package: the rules lspmux needs are short (RFC 8089 with the
forms editors really send), and this module sits on the proxy's start path, where each import
counts. Python 3.13's `Path.from_uri` does the same, but lspmux supports 3.11.

The hard cases, each tested in tests/unit/test_uris.py:

- percent-escapes are undone once (`%20` → space, `%23` → `#`, `%25` → `%`); a byte that is
  not UTF-8 comes back as the surrogate `os.fsencode` turns into that byte again, so an odd
  file name round-trips;
- `file:///p`, `file:/p` and `file://localhost/p` name the same local file; any other host
  is a file on another machine (a UNC share on Windows, an error elsewhere);
- `file:///C:/p` and `file:///c%3A/p` are the Windows path `C:\\p` (with `windows=True`, the
  default on Windows); on POSIX they stay `/C:/p`, a legal POSIX path;
- a query or fragment is not part of the path (a literal `#` in a name is escaped as `%23`);
- the path has no trailing `/` (except the root itself);
- other schemes (`untitled:`, `vscode-notebook-cell:`, `https:`) are not files:
  `uri_to_path` raises `NotAFileURI`, `file_path` answers None — pick the one the caller
  needs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import unquote, urlsplit

__all__ = ["NotAFileURI", "file_path", "path_to_uri", "uri_to_path"]

_WINDOWS = os.name == "nt"
_DRIVE = re.compile(r"/?([A-Za-z])(:|%3[Aa]|\|)(?=/|$)")


class NotAFileURI(ValueError):
    """A URI that names no file on this machine (another scheme, another host, no path)."""


def uri_to_path(uri: str, *, windows: bool = _WINDOWS) -> str:
    """The local path a `file:` URI names, as a string in the platform's form.

    Raises NotAFileURI, naming the URI and what is wrong with it, for anything else.
    """
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        what = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
        raise NotAFileURI(f"{uri!r} is not a file: URI ({what}); only local files have a path")
    host = parts.netloc
    path = parts.path or "/"
    if windows:
        drive = _DRIVE.match(path)
        if drive:
            path = f"{drive.group(1).upper()}:{path[drive.end() :]}"
        text = unquote(path, errors="surrogateescape")
        if host and host.lower() != "localhost":
            text = f"//{host}{text}"
        return str(PureWindowsPath(text))
    if host and host.lower() != "localhost":
        raise NotAFileURI(
            f"{uri!r} names a file on host {host!r}, not on this machine; use file:///path"
        )
    text = unquote(path, errors="surrogateescape")
    return text.rstrip("/") or "/"


def file_path(uri: str, *, windows: bool = _WINDOWS) -> str | None:
    """The local path of a `file:` URI; None for a URI that names no local file."""
    try:
        return uri_to_path(uri, windows=windows)
    except NotAFileURI:
        return None


def path_to_uri(path: str | os.PathLike[str], *, windows: bool = _WINDOWS) -> str:
    """The `file:` URI of a path (a relative one is taken from the current directory), with
    every character a URI may not hold percent-escaped: `path_to_uri(uri_to_path(u))` gives
    `u` back in its canonical form."""
    if windows:
        win = PureWindowsPath(path)
        if not win.is_absolute() and _WINDOWS:
            return Path(path).absolute().as_uri()
        if not win.is_absolute():
            raise ValueError(
                f"{os.fspath(path)!r} is not an absolute Windows path (C:\\… or \\\\host\\share\\…)"
            )
        return win.as_uri()
    posix = PurePosixPath(path)
    if not posix.is_absolute():
        posix = PurePosixPath(os.getcwd(), posix)
    return posix.as_uri()
