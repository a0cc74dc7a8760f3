"""Path mapping: prefixes, both directions, every LSP shape that carries a path."""

from __future__ import annotations

import copy

import pytest

from lspmux.remote.mapping import MapError, PathMap, parse_map, path_uri, uri_path

L, R = "/home/me/proj", "/srv/build/proj"
MIRROR = "/home/me/.cache/lspmux/remote/box"


def pm() -> PathMap:
    return PathMap([(L, R)], fallback=MIRROR)


@pytest.mark.parametrize(
    ("spec", "pair"),
    [
        ("/a=/b", ("/a", "/b")),
        ("/a/=/b/c/", ("/a", "/b/c")),
        ("/a/./x/../=/b", ("/a", "/b")),
        ("/=/", ("/", "/")),
    ],
)
def test_parse_map(spec: str, pair: tuple[str, str]) -> None:
    assert parse_map(spec) == pair


@pytest.mark.parametrize("spec", ["/a", "=/b", "/a=", "rel=/b", "/a=rel"])
def test_parse_map_refuses(spec: str) -> None:
    with pytest.raises(MapError):
        parse_map(spec)


@pytest.mark.parametrize(
    ("local", "remote"),
    [
        (L, R),
        (L + "/src/a.py", R + "/src/a.py"),
        (L + "/deep/er/x y.py", R + "/deep/er/x y.py"),
        (MIRROR + "/usr/lib/x.pyi", "/usr/lib/x.pyi"),
    ],
)
def test_paths_round_trip(local: str, remote: str) -> None:
    m = pm()
    assert m.remote_path(local) == remote
    assert m.local_path(remote, mirror=True) == local


@pytest.mark.parametrize("path", ["/home/me/projX/a.py", "/home/me", "/etc/hosts"])
def test_outside_every_pair_is_left_alone(path: str) -> None:
    m = pm()
    assert m.remote_path(path) is None
    assert m.local_path(path) is None


def test_outside_remote_goes_to_the_mirror() -> None:
    assert pm().local_path("/root/.cargo/registry/x/lib.rs", mirror=True) == (
        MIRROR + "/root/.cargo/registry/x/lib.rs"
    )


def test_longest_prefix_wins_both_ways() -> None:
    m = PathMap([("/l", "/r"), ("/l/vendor", "/opt/vendor"), ("/elsewhere", "/r/sub")])
    assert m.remote_path("/l/a") == "/r/a"
    assert m.remote_path("/l/vendor/b") == "/opt/vendor/b"
    assert m.local_path("/opt/vendor/b") == "/l/vendor/b"
    assert m.local_path("/r/sub/c") == "/elsewhere/c"
    assert m.local_path("/r/subway") == "/l/subway"


def test_uris_with_escapes() -> None:
    assert uri_path("file:///a%20b/c%23.py") == "/a b/c#.py"
    assert uri_path("file://host/a") is None
    assert uri_path("untitled:1") is None
    assert path_uri("/a b/c#.py") == "file:///a%20b/c%23.py"
    m = pm()
    assert m.to_remote(path_uri(L + "/x y.py")) == path_uri(R + "/x y.py")


def test_initialize_params() -> None:
    msg = {
        "processId": 1,
        "rootUri": path_uri(L),
        "rootPath": L,
        "workspaceFolders": [{"uri": path_uri(L), "name": "proj"}],
        "initializationOptions": {"cargo": {"noSysroot": True}},
    }
    out = pm().to_remote(copy.deepcopy(msg))
    assert out["rootUri"] == path_uri(R)
    assert out["rootPath"] == R
    assert out["workspaceFolders"] == [{"uri": path_uri(R), "name": "proj"}]
    assert out["initializationOptions"] == msg["initializationOptions"]


def test_document_text_is_never_rewritten() -> None:
    text = L + "/a.py"
    msg = {
        "textDocument": {"uri": path_uri(L + "/a.py"), "text": text, "version": 1},
        "contentChanges": [{"text": text}],
        "edit": {"newText": text},
        "item": {"insertText": text},
    }
    out = pm().to_remote(msg)
    assert out["textDocument"]["uri"] == path_uri(R + "/a.py")
    assert out["textDocument"]["text"] == text
    assert out["contentChanges"][0]["text"] == text
    assert out["edit"]["newText"] == text
    assert out["item"]["insertText"] == text


def test_strings_containing_a_path_are_left_alone() -> None:
    hover = {"contents": {"kind": "markdown", "value": f"see {R}/a.py"}}
    assert pm().to_local(copy.deepcopy(hover)) == hover


def test_workspace_edit_changes_keys_and_document_changes() -> None:
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    edit = {
        "changes": {path_uri(R + "/a.py"): [{"range": rng, "newText": "x"}]},
        "documentChanges": [
            {"textDocument": {"uri": path_uri(R + "/b.py"), "version": 3}, "edits": []},
            {"kind": "rename", "oldUri": path_uri(R + "/c.py"), "newUri": path_uri(R + "/d.py")},
            {"kind": "create", "uri": path_uri(R + "/e.py")},
            {"kind": "delete", "uri": path_uri(R + "/f.py")},
        ],
    }
    out = pm().to_local(edit)
    assert list(out["changes"]) == [path_uri(L + "/a.py")]
    dc = out["documentChanges"]
    assert dc[0]["textDocument"]["uri"] == path_uri(L + "/b.py")
    assert (dc[1]["oldUri"], dc[1]["newUri"]) == (path_uri(L + "/c.py"), path_uri(L + "/d.py"))
    assert dc[2]["uri"] == path_uri(L + "/e.py")
    assert dc[3]["uri"] == path_uri(L + "/f.py")


def test_locations_links_related_information_and_the_mirror() -> None:
    rng = {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 3}}
    result = [
        {"uri": path_uri(R + "/a.py"), "range": rng},
        {"targetUri": path_uri("/usr/lib/python3/typing.pyi"), "targetRange": rng},
    ]
    mirrored: set[str] = set()
    out = pm().to_local(result, mirrored)
    assert out[0]["uri"] == path_uri(L + "/a.py")
    assert out[1]["targetUri"] == path_uri(MIRROR + "/usr/lib/python3/typing.pyi")
    assert mirrored == {"/usr/lib/python3/typing.pyi"}
    diag = {
        "uri": path_uri(R + "/a.py"),
        "diagnostics": [
            {
                "range": rng,
                "message": "m",
                "relatedInformation": [
                    {"location": {"uri": path_uri(R + "/b.py"), "range": rng}, "message": "r"}
                ],
            }
        ],
    }
    out = pm().to_local(diag)
    related = out["diagnostics"][0]["relatedInformation"][0]["location"]["uri"]
    assert related == path_uri(L + "/b.py")
    # and the editor asking about the mirrored copy asks about the remote file
    back = pm().to_remote({"textDocument": {"uri": path_uri(MIRROR + "/usr/lib/x.pyi")}})
    assert back["textDocument"]["uri"] == path_uri("/usr/lib/x.pyi")


def test_watched_files_registration_and_events() -> None:
    reg = {
        "registrations": [
            {
                "id": "1",
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {
                    "watchers": [
                        {"globPattern": R + "/**/*.rs"},
                        {"globPattern": {"baseUri": path_uri(R), "pattern": "**/Cargo.toml"}},
                        {"globPattern": "**/*.py"},
                    ]
                },
            }
        ]
    }
    watchers = pm().to_local(reg)["registrations"][0]["registerOptions"]["watchers"]
    assert watchers[0]["globPattern"] == L + "/**/*.rs"
    assert watchers[1]["globPattern"]["baseUri"] == path_uri(L)
    assert watchers[2]["globPattern"] == "**/*.py"
    events = {"changes": [{"uri": path_uri(L + "/Cargo.toml"), "type": 2}]}
    assert pm().to_remote(events)["changes"][0]["uri"] == path_uri(R + "/Cargo.toml")


def test_command_arguments_and_locate_results() -> None:
    action = {
        "title": "fix",
        "command": {"command": "x.apply", "arguments": [path_uri(R + "/a.py"), {"file": R + "/b"}]},
    }
    out = pm().to_local(action)
    assert out["command"]["arguments"] == [path_uri(L + "/a.py"), {"file": L + "/b"}]
    located = {"uri": path_uri(R + "/a.py"), "position": {"line": 0, "character": 0}}
    assert pm().to_local(located)["uri"] == path_uri(L + "/a.py")


def test_bare_paths_outside_pairs_never_go_to_the_mirror() -> None:
    msg = {"pattern": "/", "glob": "/usr/**", "rootPath": "/usr/lib"}
    assert pm().to_local(copy.deepcopy(msg)) == msg


def test_the_mirror_is_never_left_through_dot_dot() -> None:
    assert pm().local_path("/../../home/me/.bashrc", mirror=True) == MIRROR + "/home/me/.bashrc"
    assert pm().local_path("/usr/../etc/x", mirror=True) == MIRROR + "/etc/x"


@pytest.mark.parametrize(
    ("body", "may"),
    [
        (b'{"id":1,"result":[{"newText":"x = [1, 2]\\n"}]}', False),
        (b'{"id":1,"result":{"uri":"file:///srv/build/proj/a.py"}}', True),
        (b'{"id":1,"result":{"path":"/srv/build/proj/a.py"}}', True),
        (b'{"id":1,"result":{"path":"\\/srv\\/build\\/proj"}}', True),
        (b'{"id":1,"result":{"path":"/srv/build/caf\\u00e9"}}', False),  # not the prefix
        (b'{"id":1,"result":{"path":"/usr/lib/x"}}', False),  # bare, outside: left as is
    ],
)
def test_may_name_paths_is_never_wrong_when_it_says_no(body: bytes, may: bool) -> None:
    import orjson

    m = pm()
    assert m.may_name_paths(body) is may
    if not may:
        msg = orjson.loads(body)
        assert m.to_local(copy.deepcopy(msg)) == msg


def test_may_name_paths_sees_escaped_spellings_of_the_prefix() -> None:
    m = PathMap([("/home/me/p", "/srv/café")])
    for spelled in ('"/srv/café/a"', '"\\/srv\\/café/a"', '"/srv/caf\\u00e9/a"',
                    '"\\/srv\\/caf\\u00e9"'):  # fmt: skip
        assert m.may_name_paths(spelled.encode()), spelled
