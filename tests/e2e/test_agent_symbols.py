"""Symbols as units an agent reads, against the real basedpyright and clangd: `source`,
`call_hierarchy` with every call site of every caller, `type_hierarchy` where served."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.agent_harness import mcp_client
from tests.e2e.conftest import proxy_env

pytestmark = pytest.mark.e2e

CALLS = """\
from app import Greeter


def twice() -> str:
    g = Greeter("a")
    return g.greet() + g.greet()
"""

DECORATED = '''\
import functools


@functools.cache
def answer() -> int:
    """The answer."""
    return 42
'''

SHAPES = """\
struct Shape {
  virtual double area() const = 0;
};

struct Square : Shape {
  double area() const override { return 4.0; }
};

struct Cube : Square {};
"""


async def test_source_call_sites_and_type_hierarchy(workspace: Path, tmp_path: Path) -> None:
    (workspace / "calls.py").write_text(CALLS)
    (workspace / "deco.py").write_text(DECORATED)
    (workspace / "shapes.cpp").write_text(SHAPES)
    async with mcp_client(workspace, proxy_env(tmp_path), "--private") as mcp:
        text, data = await mcp.call("source", at="deco.py:answer")
        assert data["source"] == DECORATED.split("\n\n\n", 1)[1].rstrip("\n"), text
        assert data["label"] == "deco.py:4:1-7:14"
        # any position inside: the innermost symbol there
        text, data = await mcp.call("source", at="app.py:12:12")
        assert data["name"] == "greet" and data["source"].startswith("    def greet(self)")
        assert text.splitlines()[0] == "greet  app.py:10:5-12:23"

        # every call site of every caller, and each caller's own place
        text, data = await mcp.call("call_hierarchy", at="app.py:Greeter.greet")
        twice = next(c for c in data["calls"] if c["name"] == "twice")
        assert [s["label"] for s in twice["sites"]] == ["calls.py:6:14", "calls.py:6:26"]
        assert twice["calls"] == 2 and twice["symbol"]["label"] == "calls.py:4:5"
        assert "twice  calls.py:4:5  def twice() -> str:" in text
        assert "  calls.py:6:26  return g.greet() + g.greet()" in text
        assert "(3 call sites)" in text.splitlines()[0], text

        # type hierarchy from clangd; basedpyright does not serve it, and the error says so
        text, data = await mcp.call("type_hierarchy", at="shapes.cpp:5:8")
        assert [r["label"] for r in data["supertypes"]] == ["shapes.cpp:1:8"], text
        assert [r["name"] for r in data["subtypes"]] == ["Cube"]
        message = await mcp.error("type_hierarchy", at="app.py:4:7")
        assert "prepareTypeHierarchy" in message and "basedpyright" in message


LIB = """\
def unused_helper() -> int:
    return 1


def kept() -> int:
    return 2
"""


async def test_symbol_edits_diff_write_and_check(workspace: Path, tmp_path: Path) -> None:
    app, lib = workspace / "app.py", workspace / "lib.py"
    lib.write_text(LIB)
    (workspace / "calls.py").write_text(CALLS)
    original = app.read_text()
    async with mcp_client(workspace, proxy_env(tmp_path), "--private") as mcp:
        new = "    def greet(self) -> str:\n        return nme"
        text, data = await mcp.call("replace_symbol", at="app.py:Greeter.greet", new_text=new)
        assert '-        message = f"Hello, {self.name}!"\n' in data["diff"]
        assert "+        return nme\n" in data["diff"] and app.read_text() == original
        assert ("ruff", "F821") in {(r["source"].lower(), r["code"]) for r in data["introduced"]}
        assert "Would introduce" in text

        _, data = await mcp.call(
            "insert_after", at="app.py:Greeter.greet",
            new_text="\n    def bye(self) -> str:\n        return \"bye\"", apply=True,
        )  # fmt: skip
        assert data["applied"] and data["introduced"] == []
        assert (
            '        return message\n\n    def bye(self) -> str:\n        return "bye"\n\n\ndef main'
            in (app.read_text())
        )
        _, data = await mcp.call(
            "insert_before", at="app.py:main", new_text="def helper() -> int:\n    return 1\n\n",
            apply=True,
        )  # fmt: skip
        assert "\ndef helper() -> int:\n    return 1\n\ndef main() -> None:" in app.read_text()

        # safe_delete: refused while referenced (the references listed), done when not
        text, data = await mcp.call("safe_delete", at="app.py:Greeter.greet", apply=True)
        assert data["deleted"] is False and "def greet" in app.read_text()
        assert {r["label"] for r in data["references"]} >= {"calls.py:6:14", "calls.py:6:26"}
        assert text.startswith("Found 3 references of Greeter.greet: not deleted"), text
        _, data = await mcp.call("safe_delete", at="lib.py:unused_helper", apply=True)
        assert data["deleted"] is True
        assert lib.read_text() == "\n\ndef kept() -> int:\n    return 2\n"


async def test_explore_and_batch(workspace: Path, tmp_path: Path) -> None:
    (workspace / "calls.py").write_text(CALLS)
    async with mcp_client(workspace, proxy_env(tmp_path), "--private") as mcp:
        text, data = await mcp.call("explore", at="app.py:Greeter.greet")
        assert "def greet(self" in data["hover"]["hover"]
        assert data["definition"]["locations"][0]["label"] == "app.py:10:9"
        assert data["references"]["count"] == 3  # main's call and twice's two
        twice = next(c for c in data["callers"]["calls"] if c["name"] == "twice")
        assert len(twice["sites"]) == 2
        assert data["source"]["source"].startswith("    def greet(self) -> str:")
        assert text.startswith("## hover\n") and "\n## source\nGreeter.greet  app.py:10:5" in text

        calls = [
            {"tool": "hover", "arguments": {"at": "app.py:Greeter"}},
            {"tool": "definition", "arguments": {"at": "app.py:Greeter.nope"}},
            {"tool": "locate", "arguments": {"at": "app.py:main"}},
        ]
        text, data = await mcp.call("batch", calls=calls)
        first, second, third = data["results"]
        assert first["ok"] and "Says hello." in first["text"]
        assert not second["ok"] and "Greeter.nope" in second["error"]
        assert third["ok"] and third["data"]["position"] == {"line": 14, "character": 4}
        assert "## 2. definition: error" in text
        message = await mcp.error("batch", calls=[{"tool": "batch", "arguments": {}}] * 51)
        assert "at most 50" in message
