"""Locate through `lspmux proxy`, with real basedpyright answering documentSymbol."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Proxy, proxy_env


async def test_symbol_scope_and_find_resolve_to_an_lsp_position(proxy: Proxy) -> None:
    proxy.open("app.py", "python")
    result = await proxy.request(
        "locate/resolve", {"locate": "app.py:Greeter.greet@return <|>message"}
    )
    assert result["position"] == {"line": 11, "character": 15}
    assert result["scope"]["kind"] == "symbol"
    assert result["scope"]["symbol_path"] == ["Greeter", "greet"]
    assert result["match"]["count"] == 1
    assert result["label"] == "app.py:12:16"


async def test_natural_position_of_a_symbol_without_opening_it(proxy: Proxy) -> None:
    # The client never opened app.py: lspmux reads it and asks the server for its symbols.
    result = await proxy.request("locate/resolve", {"locate": "app.py:Greeter.__init__"})
    assert result["position"] == {"line": 6, "character": 8}


async def test_unsaved_text_is_what_locate_sees(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    proxy.change(
        uri,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(11, 15), t.Position(11, 22)), text="message.upper()"
            )
        ],
    )
    result = await proxy.request(
        "locate/resolve",
        {
            "locate": {
                "file_path": "app.py",
                "scope": {"symbol_path": ["Greeter", "greet"]},
                "find": "message.<|>upper",
            }
        },
    )
    assert result["position"] == {"line": 11, "character": 23}


async def test_locate_inside_an_ordinary_request(proxy: Proxy) -> None:
    proxy.open("app.py", "python")
    hover = await proxy.raw_request(
        "textDocument/hover", {"locate": "app.py:main@<|>greeter = Greeter"}
    )
    assert "greeter: Greeter" in str(hover)


async def test_describe_round_trips(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    position = {"line": 16, "character": 18}  # print(greeter.<g>reet())
    described = await proxy.request(
        "locate/describe", {"textDocument": {"uri": uri}, "position": position}
    )
    assert described["locate"].startswith("app.py:main")
    again = await proxy.request("locate/resolve", {"locate": described["locate"]})
    assert again["position"] == position


async def test_unknown_symbol_is_an_error_with_candidates(proxy: Proxy) -> None:
    proxy.open("app.py", "python")
    with pytest.raises(JsonRpcException) as info:
        await proxy.request("locate/resolve", {"locate": "app.py:Greeter.greeet"})
    err: Any = info.value
    assert "-32803" in str(err) or "greeet" in str(err)
    assert "greet" in str(err)


def _cli(workspace: Path, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`lspmux locate ARGS...` in the workspace, with a private proxy."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lspmux", "locate", *args],
            cwd=workspace,
            env=proxy_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run


def test_locate_command_line(workspace: Path, tmp_path: Path) -> None:
    run = _cli(workspace, tmp_path)
    found = run("app.py:Greeter.greet@return <|>message")
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "app.py:12:16"
    ranged = run("--range", "app.py@undefined_<|>name")
    assert ranged.stdout.strip() == "app.py:18:5-18:19"
    missing = run("app.py:Greeter.nope")
    assert missing.returncode == 1
    assert "Greeter.greet" in missing.stderr  # the nearest existing paths are suggested


# --- fuzzy: a near match when the exact find matches nothing -------------------------------


async def test_fuzzy_resolve_in_a_symbol_scope(proxy: Proxy) -> None:
    proxy.open("app.py", "python")
    result = await proxy.request(
        "locate/resolve", {"locate": "app.py:Greeter.greet~@return <|>mesage"}
    )
    assert result["position"] == {"line": 11, "character": 15}
    assert result["scope"]["symbol_path"] == ["Greeter", "greet"]
    match = result["match"]
    assert match["fuzzy"] is True and match["text"] == "return message"
    assert match["edits"] == [
        {
            "op": "changed",
            "find": "mesage",
            "text": "message",
            "typo": True,
            "range": {"start": {"line": 11, "character": 15}, "end": {"line": 11, "character": 22}},
        }
    ]
    # the same find without `~` fails, naming the closest line
    with pytest.raises(JsonRpcException) as info:
        await proxy.request("locate/resolve", {"locate": "app.py:Greeter.greet@return <|>mesage"})
    assert "matches nothing" in str(info.value)


async def test_fuzzy_resolve_range_with_both_markers(proxy: Proxy) -> None:
    proxy.open("app.py", "python")
    result = await proxy.request(
        "locate/resolveRange",
        {
            "locate": {
                "file_path": "app.py",
                "scope": {"symbol_path": ["Greeter", "greet"]},
                "find": 'message = f"Hello, {self.<|>nme<|>}!"',
                "fuzzy": True,
            }
        },
    )
    assert result["range"] == {
        "start": {"line": 10, "character": 33},
        "end": {"line": 10, "character": 37},
    }
    assert [m["landed_on"] for m in result["match"]["markers"]] == ["name", "name"]


async def test_fuzzy_locate_inside_an_ordinary_request(proxy: Proxy) -> None:
    proxy.open("app.py", "python")
    hover = await proxy.raw_request(
        "textDocument/hover",
        {"locate": {"file_path": "app.py", "find": 'greeter = <|>Greter("world")', "fuzzy": True}},
    )
    assert "class Greeter" in str(hover)


async def test_fuzzy_tie_is_an_error_with_the_candidates(proxy: Proxy) -> None:
    proxy.open("app.py", "python")
    with pytest.raises(JsonRpcException) as info:
        # `self.<|>nme` is one typo away from both `self.name` lines
        await proxy.request("locate/resolve", {"locate": "app.py~@self.<|>nme"})
    assert "ambiguous" in str(info.value) and "lines 8, 11" in str(info.value)


def test_fuzzy_locate_command_line(workspace: Path, tmp_path: Path) -> None:
    run = _cli(workspace, tmp_path)
    found = run("app.py:main~@print(greeter.<|>gret())")
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "app.py:17:19"
    near = run("--json", "app.py~@print(greeter.<|>gret())")
    assert json.loads(near.stdout)["match"]["fuzzy"] is True
    refused = run("app.py:main~@print(<|>nothing_like_it)")
    assert refused.returncode == 1
    assert "not even approximately" in refused.stderr
