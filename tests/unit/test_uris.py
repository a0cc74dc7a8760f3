"""lspmux.uris: the one `file:` URI ⇄ path conversion, on the cases editors and servers send."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lspmux.uris import NotAFileURI, file_path, path_to_uri, uri_to_path


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///tmp/a.py", "/tmp/a.py"),
        ("file:///tmp/with%20space/a.py", "/tmp/with space/a.py"),
        ("file:///tmp/odd%23name%3F.py", "/tmp/odd#name?.py"),  # escaped '#' and '?'
        ("file:///tmp/100%25.py", "/tmp/100%.py"),  # '%' itself, unescaped once only
        ("file:///tmp/%2541.py", "/tmp/%41.py"),
        ("file:///tmp/%C3%A9%20%F0%9F%98%80.py", "/tmp/é 😀.py"),  # UTF-8 escapes
        ("file:///tmp/é.py", "/tmp/é.py"),  # unescaped non-ASCII (some clients send it)
        ("file://localhost/tmp/a.py", "/tmp/a.py"),
        ("file://LOCALHOST/tmp/a.py", "/tmp/a.py"),
        ("file:/tmp/a.py", "/tmp/a.py"),  # RFC 8089's short form
        ("FILE:///tmp/a.py", "/tmp/a.py"),  # schemes are case-insensitive
        ("file:///tmp/dir/", "/tmp/dir"),  # no trailing slash
        ("file:///", "/"),
        ("file:///tmp/a.py#L3", "/tmp/a.py"),  # a fragment is not part of the name
        ("file:///tmp/a.py?x=1", "/tmp/a.py"),
        ("file:///c%3A/Users/me/a.py", "/c:/Users/me/a.py"),  # on POSIX: a legal POSIX path
    ],
)
def test_posix_paths(uri: str, path: str) -> None:
    assert uri_to_path(uri, windows=False) == path
    assert file_path(uri, windows=False) == path


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///C:/Users/me/a.py", r"C:\Users\me\a.py"),
        ("file:///c%3A/Users/me/a%20b.py", r"C:\Users\me\a b.py"),  # VS Code's spelling
        ("file:///c:/Users/me/", "C:\\Users\\me"),
        ("file:///C|/Users/me/a.py", r"C:\Users\me\a.py"),  # the old '|' form
        ("file:///d:", "D:"),
        ("file://localhost/C:/a.py", r"C:\a.py"),
        ("file://server/share/dir/a.py", r"\\server\share\dir\a.py"),  # a UNC share
    ],
)
def test_windows_paths(uri: str, path: str) -> None:
    assert uri_to_path(uri, windows=True) == path


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        (r"C:\Users\me\a b.py", "file:///C:/Users/me/a%20b.py"),
        (r"\\server\share\a.py", "file://server/share/a.py"),
    ],
)
def test_windows_uris(path: str, uri: str) -> None:
    assert path_to_uri(path, windows=True) == uri
    assert uri_to_path(uri, windows=True) == path


def test_a_relative_windows_path_has_no_uri_off_windows() -> None:
    if os.name == "nt":
        pytest.skip("on Windows a relative path is taken from the current directory")
    with pytest.raises(ValueError, match=r"'a\\\\b.py' is not an absolute Windows path"):
        path_to_uri("a\\b.py", windows=True)


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("untitled:Untitled-1", "scheme 'untitled'"),
        ("vscode-notebook-cell:/tmp/nb.ipynb#W0sZmlsZQ", "scheme 'vscode-notebook-cell'"),
        ("https://example.com/a.py", "scheme 'https'"),
        ("/tmp/a.py", "no scheme"),
        ("jdt://contents/rt.jar/java.lang/String.class", "scheme 'jdt'"),
    ],
)
def test_other_schemes_are_not_files(uri: str, why: str) -> None:
    with pytest.raises(NotAFileURI, match=f"{uri!r} is not a file: URI \\({why}\\)"):
        uri_to_path(uri)
    assert file_path(uri) is None


def test_a_file_on_another_host_is_not_local_on_posix() -> None:
    with pytest.raises(NotAFileURI, match="names a file on host 'server', not on this machine"):
        uri_to_path("file://server/share/a.py", windows=False)
    assert file_path("file://server/share/a.py", windows=False) is None


def test_not_a_file_uri_is_a_value_error() -> None:
    """Callers that already catch ValueError (a NUL in a path) catch this too."""
    assert issubclass(NotAFileURI, ValueError)


@pytest.mark.parametrize(
    "path", ["/tmp/a.py", "/tmp/with space/é 😀.py", "/tmp/odd#name?.py", "/tmp/100%.py", "/"]
)
def test_path_uri_round_trip(path: str) -> None:
    uri = path_to_uri(path, windows=False)
    assert uri.startswith("file:///")
    assert uri_to_path(uri, windows=False) == path


def test_a_relative_path_is_taken_from_the_current_directory() -> None:
    assert path_to_uri("a b.py", windows=False) == path_to_uri(
        os.path.join(os.getcwd(), "a b.py"), windows=False
    )


def test_a_name_that_is_not_utf8_round_trips_to_the_same_bytes() -> None:
    uri = "file:///tmp/caf%E9.py"  # Latin-1 é: not UTF-8
    path = uri_to_path(uri, windows=False)
    assert os.fsencode(path) == b"/tmp/caf\xe9.py"
    assert path_to_uri(path, windows=False) == uri


_name = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1
).filter(lambda s: s not in (".", ".."))


@given(st.lists(_name, min_size=1, max_size=4))
def test_every_posix_path_round_trips(parts: list[str]) -> None:
    path = "/" + "/".join(parts)
    assert uri_to_path(path_to_uri(path, windows=False), windows=False) == path
