"""LSP globs and watcher registrations: the glob syntax table, RelativePattern, kinds, routing."""

from __future__ import annotations

import pytest

from lspmux.workspace.globs import (
    GlobError,
    Registrations,
    Watcher,
    WatchKind,
    file_events,
    glob_match,
    parse_watchers,
)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "dir/a.py", False),  # `*` stays inside a segment
        ("*.py", ".py", True),
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/z/a.py", True),
        ("**/*.py", "x/y/z/a.pyc", False),
        ("**/pyproject.toml", "/home/u/proj/pyproject.toml", True),
        ("**/pyproject.toml", "pyproject.toml", True),
        ("**/pyproject.toml", "proj/xpyproject.toml", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/a/b/test_a.py", True),
        ("src/**/test_*.py", "lib/src/test_a.py", False),
        ("src/**", "src/a/b", True),
        ("src/**", "srcx/a", False),
        ("a**b", "axxb", True),  # `**` inside a segment is a `*`
        ("a**b", "ax/xb", False),
        ("?.txt", "a.txt", True),
        ("?.txt", "ab.txt", False),
        ("?.txt", "/.txt", False),  # `?` never matches the separator
        ("*.{ts,js}", "a.ts", True),
        ("*.{ts,js}", "a.js", True),
        ("*.{ts,js}", "a.py", False),
        ("**/{ruff,.ruff}.toml", "x/.ruff.toml", True),
        ("**/{ruff,.ruff}.toml", "x/ruff.toml", True),
        ("**/{ruff,.ruff}.toml", "x/pyruff.toml", False),
        ("{a,b{c,d}}.x", "bd.x", True),  # nested braces
        ("{a,b{c,d}}.x", "a.x", True),
        ("{a,b{c,d}}.x", "b.x", False),
        ("{**/*.py,docs/*.md}", "docs/a.md", True),
        ("{**/*.py,docs/*.md}", "x/y.py", True),
        ("file[0-9].c", "file7.c", True),
        ("file[0-9].c", "filex.c", False),
        ("file[abc].c", "fileb.c", True),
        ("file[!abc].c", "filed.c", True),
        ("file[!abc].c", "filea.c", False),
        ("file[^abc].c", "filea.c", False),
        ("file[^abc].c", "filez.c", True),
        ("x[!a]y", "x/y", False),  # a negated class never matches the separator
        ("a.b", "axb", False),  # regex characters are literal
        ("a+(b)", "a+(b)", True),
        ("", "", True),
    ],
)
def test_glob_table(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


@pytest.mark.parametrize("pattern", ["{a,b", "file[ab", "**/{x,{y}"])
def test_bad_globs_are_errors(pattern: str) -> None:
    with pytest.raises(GlobError, match="never closed"):
        glob_match(pattern, "x")


def test_relative_pattern_matches_under_its_base_only() -> None:
    (w,) = parse_watchers(
        {"watchers": [{"globPattern": {"baseUri": "file:///ws/sub", "pattern": "*.toml"}}]}
    )
    assert w.base == "/ws/sub"
    assert w.matches("/ws/sub/a.toml")
    assert not w.matches("/ws/sub/deeper/a.toml")
    assert not w.matches("/ws/a.toml")
    assert not w.matches("/ws/subx/a.toml")


def test_relative_pattern_base_may_be_a_workspace_folder() -> None:
    raw = {"globPattern": {"baseUri": {"uri": "file:///w%20s", "name": "w"}, "pattern": "**/*"}}
    w = Watcher.parse(raw)
    assert w.base == "/w s"
    assert w.matches("/w s/a/b")


def test_string_pattern_matches_absolute_or_root_relative() -> None:
    w = Watcher.parse({"globPattern": "src/*.py"})
    assert w.matches("/ws/src/a.py", roots=["/ws"])
    assert not w.matches("/ws/src/a.py")  # no root: only the absolute path
    assert not w.matches("/other/src/a.py", roots=["/ws"])


@pytest.mark.parametrize(
    ("kind", "wanted"),
    [
        (None, {1, 2, 3}),
        (7, {1, 2, 3}),
        (1, {1}),
        (2, {2}),
        (4, {3}),
        (5, {1, 3}),
        (6, {2, 3}),
    ],
)
def test_watch_kinds(kind: int | None, wanted: set[int]) -> None:
    raw: dict[str, object] = {"globPattern": "**/*.toml"}
    if kind is not None:
        raw["kind"] = kind
    w = Watcher.parse(raw)
    assert {c for c in (1, 2, 3) if w.wants("/a/x.toml", c)} == wanted
    assert w.kind == WatchKind(kind or 7)


def test_bad_watchers_are_errors() -> None:
    with pytest.raises(GlobError, match="neither a string"):
        Watcher.parse({"globPattern": 3})
    with pytest.raises(GlobError, match="baseUri"):
        Watcher.parse({"globPattern": {"pattern": "*"}})


def test_file_events_one_per_path_sorted_as_uris() -> None:
    assert file_events([("/b c", 2), ("/a", 1), ("/b c", 3)]) == [
        {"uri": "file:///a", "type": 1},
        {"uri": "file:///b%20c", "type": 3},
    ]


RUFF = {
    "watchers": [
        {"globPattern": "**/.ruff.toml"},
        {"globPattern": "**/ruff.toml"},
        {"globPattern": "**/pyproject.toml"},
    ]
}


def test_registrations_route_per_backend_and_unregister() -> None:
    regs: Registrations[str] = Registrations()
    regs.register("ruff", "1", RUFF)
    regs.register("pyright", "1", {"watchers": [{"globPattern": "**/*.py", "kind": 4}]})
    events = [("/ws/ruff.toml", 2), ("/ws/a.py", 2), ("/ws/b.py", 3), ("/ws/x.txt", 1)]
    assert regs.route(events) == {
        "ruff": {"changes": [{"uri": "file:///ws/ruff.toml", "type": 2}]},
        "pyright": {"changes": [{"uri": "file:///ws/b.py", "type": 3}]},
    }
    assert regs.unregister("ruff", "1")
    assert not regs.unregister("ruff", "1")
    assert regs.route(events) == {"pyright": {"changes": [{"uri": "file:///ws/b.py", "type": 3}]}}
    assert regs.forget("pyright") == ["1"]
    assert not regs
    assert regs.route(events) == {}


def test_registration_ids_are_per_backend_and_replace() -> None:
    regs: Registrations[str] = Registrations()
    regs.register("a", "1", {"watchers": [{"globPattern": "*.x"}]})
    regs.register("b", "1", {"watchers": [{"globPattern": "*.y"}]})
    regs.register("a", "1", {"watchers": [{"globPattern": "*.z"}]})  # same id: replaced
    assert [w.pattern for w in regs.watchers("a")] == ["*.z"]
    assert [w.pattern for w in regs.watchers("b")] == ["*.y"]
    assert regs.names("z") and not regs.names("node_modules")


def test_a_bad_watcher_is_skipped_and_logged_the_others_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    regs: Registrations[str] = Registrations()
    options = {
        "watchers": [{"globPattern": "{a,b"}, {"globPattern": "**/ok.toml"}, {"globPattern": 3}]
    }
    watchers = regs.register("ruff", "1", options)
    assert [w.pattern for w in watchers] == ["**/ok.toml"]
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("ruff: file watcher {'globPattern': '{a,b'} skipped") for m in messages)
    assert len(messages) == 2
