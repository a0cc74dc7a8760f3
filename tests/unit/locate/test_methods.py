"""The method layer over a LocateHost test double: files, params, answers and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lspmux.errors import InvalidParams, RequestFailed
from lspmux.locate import methods
from lspmux.locate.methods import describe, resolve, resolve_range, rewrite_params

from .helpers import FakeHost, python_symbols, read

APP = '''class Greeter:
    """Says hello."""

    def __init__(self, name):
        self.name = name

    def greet(self, message):
        label = "👋 " + self.name
        print(label)

        return message
'''


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "app.py").write_text(APP, encoding="utf-8")
    (root / "crlf.js").write_bytes(read("widgets.js").encode("utf-8"))
    (root / "web" / "@types").mkdir(parents=True)
    (root / "web" / "@types" / "index.d.ts").write_text("export declare const version: string;\n")
    (tmp_path / "secret.py").write_text("password = 1\n")
    return root


@pytest.fixture
def host(ws: Path) -> FakeHost:
    uri = (ws / "pkg" / "app.py").as_uri()
    return FakeHost([ws], symbols={uri: python_symbols(APP)})


async def test_resolve_string_on_disk(host: FakeHost, ws: Path) -> None:
    out = await resolve(host, {"locate": "pkg/app.py:Greeter.greet@return <|>message"})
    assert out == {
        "uri": (ws / "pkg" / "app.py").as_uri(),
        "position": {"line": 10, "character": 15},
        "match": {
            "range": {"start": {"line": 10, "character": 8}, "end": {"line": 10, "character": 22}},
            "text": "return message",
            "count": 1,
            "partial": False,
        },
        "scope": {
            "kind": "symbol",
            "symbol_path": ["Greeter", "greet"],
            "range": {"start": {"line": 6, "character": 4}, "end": {"line": 10, "character": 22}},
        },
        "label": "pkg/app.py:11:16",
    }
    assert host.symbol_calls == [((ws / "pkg" / "app.py").as_uri(), None)]


async def test_open_documents_win_over_the_disk(host: FakeHost, ws: Path) -> None:
    uri = (ws / "pkg" / "app.py").as_uri()
    host.docs[uri] = ("# unsaved\n" + APP, 7)
    host.symbols[uri] = python_symbols("# unsaved\n" + APP)
    out = await resolve(
        host, {"locate": {"file_path": "pkg/app.py", "symbol_path": ["Greeter", "greet"]}}
    )
    assert out["position"] == {"line": 7, "character": 8}
    assert host.symbol_calls == [(uri, 7)]


async def test_symbols_are_asked_only_for_symbol_scopes(host: FakeHost) -> None:
    await resolve(host, {"locate": "pkg/app.py:5@self.<|>name"})
    await resolve(host, {"locate": "pkg/app.py@print(<|>label)"})
    assert host.symbol_calls == []


async def test_label_counts_code_points_and_positions_use_the_host_encoding(host: FakeHost) -> None:
    out = await resolve(host, {"locate": "pkg/app.py@+ self.<|>name"})
    assert out["position"] == {"line": 7, "character": 29}  # UTF-16: the emoji is two units
    assert out["label"] == "pkg/app.py:8:29"  # 1-based, code points
    host.encoding = "utf-8"
    out = await resolve(host, {"locate": "pkg/app.py@+ self.<|>name"})
    assert out["position"] == {"line": 7, "character": 31}
    assert out["label"] == "pkg/app.py:8:29"


async def test_resolve_by_uri_and_absolute_path(host: FakeHost, ws: Path) -> None:
    path = ws / "pkg" / "app.py"
    a = await resolve(host, {"locate": {"uri": path.as_uri(), "find": "def <|>greet"}})
    b = await resolve(host, {"locate": {"file_path": str(path), "find": "def <|>greet"}})
    c = await resolve(host, {"locate": f"{path}@def <|>greet"})
    assert a == b == c
    assert a["position"] == {"line": 6, "character": 8}


async def test_crlf_file_read_from_disk_keeps_its_line_breaks(host: FakeHost) -> None:
    out = await resolve(host, {"locate": "crlf.js:8@constructor() {"})
    assert out["position"] == {"line": 7, "character": 2}
    out = await resolve_range(host, {"locate": "crlf.js:9-10"})
    assert out["range"] == {
        "start": {"line": 8, "character": 0},
        "end": {"line": 9, "character": 3},
    }
    out = await resolve(host, {"locate": "crlf.js@listeners = <|>new Map"})
    assert out["position"] == {"line": 8, "character": 21}


async def test_path_with_an_at_sign(host: FakeHost) -> None:
    out = await resolve(host, {"locate": "web/@types/index.d.ts@declare <|>const"})
    assert out["label"] == "web/@types/index.d.ts:1:16"


async def test_resolve_range(host: FakeHost) -> None:
    out = await resolve_range(
        host, {"locate": "pkg/app.py:Greeter.__init__@self.<|>name = name<|>"}
    )
    assert "position" not in out
    assert out["range"] == {
        "start": {"line": 4, "character": 13},
        "end": {"line": 4, "character": 24},
    }
    out = await resolve_range(host, {"locate": "pkg/app.py:Greeter.__init__"})
    assert out["range"] == {
        "start": {"line": 3, "character": 4},
        "end": {"line": 4, "character": 24},
    }


async def test_describe_round_trips(host: FakeHost, ws: Path) -> None:
    uri = (ws / "pkg" / "app.py").as_uri()
    position = {"line": 8, "character": 14}  # `label` in print(label)
    out = await describe(host, {"textDocument": {"uri": uri}, "position": position})
    assert out["locate"] == "pkg/app.py:Greeter.greet@(<|>label"
    assert out["spec"] == {
        "file_path": "pkg/app.py",
        "scope": {"symbol_path": ["Greeter", "greet"]},
        "find": "(<|>label",
    }
    assert out["position"] == position and out["exact"] is True
    assert (await resolve(host, {"locate": out["locate"]}))["position"] == position
    assert (await resolve(host, {"locate": out["spec"]}))["position"] == position


async def test_describe_a_document_outside_the_workspace_by_uri(
    host: FakeHost, tmp_path: Path
) -> None:
    uri = (tmp_path / "scratch.py").as_uri()
    host.docs[uri] = ("x = 1\ny = x\n", 1)
    out = await describe(
        host, {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 4}}
    )
    assert out["spec"]["uri"] == uri and "file_path" not in out["spec"]
    assert (await resolve(host, {"locate": out["spec"]}))["position"] == {"line": 1, "character": 4}


async def test_rewrite_params(host: FakeHost, ws: Path) -> None:
    uri = (ws / "pkg" / "app.py").as_uri()
    params = {
        "locate": "pkg/app.py:Greeter.greet@print(<|>label)",
        "context": {"includeDeclaration": True},
    }
    out = await rewrite_params(host, params, wants="position")
    assert out == {
        "context": {"includeDeclaration": True},
        "textDocument": {"uri": uri},
        "position": {"line": 8, "character": 14},
    }
    assert "locate" in params  # the caller's params are left alone
    # a locate object without a file applies to the request's textDocument
    out = await rewrite_params(
        host,
        {"textDocument": {"uri": uri}, "locate": {"symbol_path": ["Greeter", "greet"]}},
        wants="range",
    )
    assert out["range"] == {
        "start": {"line": 6, "character": 4},
        "end": {"line": 10, "character": 22},
    }
    assert await rewrite_params(
        host,
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        wants="position",
    ) == {
        "textDocument": {"uri": uri},
        "position": {"line": 0, "character": 0},
    }


# --- errors -------------------------------------------------------------------------------


async def _fails(host: FakeHost, params: Any, call: Any = resolve) -> InvalidParams | RequestFailed:
    with pytest.raises((InvalidParams, RequestFailed)) as err:
        await call(host, params)
    assert isinstance(err.value, InvalidParams | RequestFailed)
    return err.value


async def test_missing_file(host: FakeHost, ws: Path) -> None:
    err = await _fails(host, {"locate": "pkg/nope.py@x"})
    assert isinstance(err, RequestFailed) and err.CODE == -32803
    assert "file not found" in err.message and str(ws) in err.message
    assert err.data == {"file_path": "pkg/nope.py", "workspace_roots": [str(ws.resolve())]}
    err = await _fails(host, {"locate": {"uri": (ws / "gone.py").as_uri(), "find": "x"}})
    assert isinstance(err, RequestFailed) and "file not found" in err.message


@pytest.mark.parametrize("where", ["../secret.py", "{tmp}/secret.py", "pkg/../../secret.py"])
async def test_files_outside_the_workspace_are_refused(
    host: FakeHost, tmp_path: Path, where: str
) -> None:
    err = await _fails(
        host, {"locate": {"file_path": where.format(tmp=tmp_path), "find": "password"}}
    )
    assert isinstance(err, RequestFailed) and err.CODE == -32803
    assert "outside the workspace" in err.message
    err = await _fails(
        host, {"locate": {"uri": (tmp_path / "secret.py").as_uri(), "find": "password"}}
    )
    assert isinstance(err, RequestFailed) and "outside the workspace" in err.message


async def test_a_symlink_out_of_the_workspace_is_refused(
    host: FakeHost, ws: Path, tmp_path: Path
) -> None:
    (ws / "link.py").symlink_to(tmp_path / "secret.py")
    err = await _fails(host, {"locate": "link.py@password"})
    assert isinstance(err, RequestFailed) and "outside the workspace" in err.message


async def test_symbol_and_find_errors_pass_through(host: FakeHost) -> None:
    err = await _fails(host, {"locate": "pkg/app.py:Greeter.gret"})
    assert isinstance(err, RequestFailed) and err.data["candidates"][0] == ["Greeter", "greet"]
    err = await _fails(host, {"locate": "pkg/app.py:Greeter.greet@retrun message"})
    assert isinstance(err, RequestFailed) and err.data["closest"]["line"] == 11
    err = await _fails(
        host, {"locate": {"file_path": "pkg/app.py", "find": "self", "find_index": 9}}
    )
    assert isinstance(err, RequestFailed) and err.data["count"] == 4
    err = await _fails(host, {"locate": "crlf.js:Widget"})  # no symbols for this file
    assert isinstance(err, RequestFailed) and err.data == {
        "symbol_path": ["Widget"],
        "candidates": [],
    }


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"locate": 3},
        {"locate": "pkg/app.py"},
        {"locate": "pkg/app.py:0"},
        {"locate": "pkg/app.py:99"},
        {"locate": {"find": "x"}},  # no file and no textDocument
        {"locate": {"file_path": "pkg/app.py", "line": [3, 1]}},
        [],
    ],
)
async def test_malformed_params_are_invalid_params(host: FakeHost, params: Any) -> None:
    err = await _fails(host, params)
    assert isinstance(err, InvalidParams) and err.CODE == -32602
    assert "<file>[:<scope>][@<find>]" in err.message


async def test_describe_and_rewrite_param_errors(host: FakeHost, ws: Path) -> None:
    uri = (ws / "pkg" / "app.py").as_uri()
    for params in [
        {},
        {"textDocument": {"uri": uri}},
        {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}},
    ]:
        err = await _fails(host, params, describe)
        assert isinstance(err, InvalidParams) and "locate/describe takes" in err.message
    with pytest.raises(InvalidParams, match="not both"):
        await rewrite_params(
            host,
            {"locate": "pkg/app.py:3", "position": {"line": 0, "character": 0}},
            wants="position",
        )


async def test_disk_reads_are_cached_until_the_file_changes(host: FakeHost, ws: Path) -> None:
    path = ws / "pkg" / "app.py"
    first = await resolve(host, {"locate": "pkg/app.py:3"})
    assert methods._read(path) is methods._read(path)
    path.write_text("\n\n\n    moved = 1\n", encoding="utf-8")
    second = await resolve(host, {"locate": "pkg/app.py:4"})
    assert first["position"] == {"line": 2, "character": 0}  # a blank line: its start
    assert second["position"] == {"line": 3, "character": 4}


# --- fuzzy ----------------------------------------------------------------------------------


async def test_fuzzy_string_form_resolve_and_range(host: FakeHost) -> None:
    # the agent remembers `nme`; the file says `name` (after an emoji: 2 UTF-16 units)
    locate = 'pkg/app.py:Greeter.greet~@label = "👋 " + self.<|>nme'
    out = await resolve(host, {"locate": locate})
    assert out["position"] == {"line": 7, "character": 29}
    assert out["label"] == "pkg/app.py:8:29"
    assert out["match"]["fuzzy"] is True
    assert out["match"]["edits"][0]["text"] == "name"
    out = await resolve_range(host, {"locate": "pkg/app.py~@print(<|>lable<|>)"})
    assert out["range"] == {
        "start": {"line": 8, "character": 14},
        "end": {"line": 8, "character": 19},
    }
    assert [m["status"] for m in out["match"]["markers"]] == ["changed", "changed"]
    # without `~` the same find is an error
    err = await _fails(host, {"locate": locate.replace("~@", "@")})
    assert isinstance(err, RequestFailed) and "fuzzy" not in err.data


async def test_fuzzy_inside_an_ordinary_request(host: FakeHost, ws: Path) -> None:
    uri = (ws / "pkg" / "app.py").as_uri()
    params = {
        "textDocument": {"uri": uri},
        "locate": {"find": "self.name = <|>nme", "fuzzy": True},
    }
    out = await rewrite_params(host, params, wants="position")
    assert out == {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 20}}


async def test_fuzzy_errors_pass_through_with_candidates(host: FakeHost) -> None:
    host.docs["file:///t.py"] = ("f(a, b)\nx = 1\nf(a, c)\n", 1)
    err = await _fails(host, {"locate": {"uri": "file:///t.py", "find": "f(a, d)", "fuzzy": True}})
    assert isinstance(err, RequestFailed) and err.CODE == -32803
    assert [c["line"] for c in err.data["fuzzy"]["candidates"]] == [1, 3]
