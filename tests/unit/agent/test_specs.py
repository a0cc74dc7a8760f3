"""The tool table: schemas for MCP, argument checks, paths confined, hover text flattened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lspmux.agent import specs
from lspmux.agent.errors import ToolError
from lspmux.agent.paths import confine
from lspmux.agent.render import flatten_markup

ISSUE_TOOLS = [
    "definition",
    "type_definition",
    "implementation",
    "declaration",
    "references",
    "hover",
    "symbols",
    "workspace_symbols",
    "diagnostics",
    "check_edit",
    "rename",
    "rename_file",
    "code_actions",
    "format",
    "call_hierarchy",
    "source",
    "replace_symbol",
    "insert_before",
    "insert_after",
    "safe_delete",
    "type_hierarchy",
    "explore",
    "batch",
    "locate",
    "describe",
    "status",
    "reload",
    "capabilities",
    "request",
]


def test_every_tool_of_the_issue_is_in_the_table_and_loads() -> None:
    assert list(specs.TOOLS) == ISSUE_TOOLS
    for tool in specs.TOOLS.values():
        assert callable(tool.function())
        schema = specs.input_schema(tool)
        assert schema["type"] == "object"
        assert set(schema["required"]) <= set(schema["properties"])
        assert len(tool.description) > 60  # written for a model: what, an example, what back


def test_descriptions_give_an_example_of_each_at_form() -> None:
    doc = specs.AT_DOC
    assert "@return <|>message" in doc and "12:16" in doc and "`symbol`" in doc


def test_check_arguments() -> None:
    rename = specs.TOOLS["rename"]
    kwargs = specs.check_arguments(rename, {"at": "a.py:1:1", "new_name": "b", "apply": True})
    assert kwargs == {"at": "a.py:1:1", "new_name": "b", "apply": True}
    with pytest.raises(ToolError, match="`new_name` is required"):
        specs.check_arguments(rename, {"at": "a.py:1:1"})
    with pytest.raises(ToolError, match="unknown argument"):
        specs.check_arguments(rename, {"at": "a.py:1:1", "new_name": "b", "aply": True})
    with pytest.raises(ToolError, match="`apply` must be boolean"):
        specs.check_arguments(rename, {"at": "a.py:1:1", "new_name": "b", "apply": "yes"})
    moved = specs.check_arguments(specs.TOOLS["rename_file"], {"from": "a", "to": "b"})
    assert moved == {"from_": "a", "to": "b"}


def test_confine(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "m.py").write_text("")
    (tmp_path / "out.py").write_text("")
    os.symlink(tmp_path / "out.py", root / "link.py")
    assert confine(root, "pkg/m.py") == root / "pkg" / "m.py"
    assert confine(root, str(root / "pkg" / "m.py")) == root / "pkg" / "m.py"
    for bad in ("../out.py", str(tmp_path / "out.py"), "link.py", "pkg/../../out.py"):
        with pytest.raises(ToolError, match="outside the workspace root"):
            confine(root, bad)
    with pytest.raises(ToolError, match="file not found"):
        confine(root, "pkg/none.py")
    assert confine(root, "pkg/new.py", must_exist=False) == root / "pkg" / "new.py"


def test_flatten_markup() -> None:
    hover = {"kind": "markdown", "value": "```python\n(class) Markup\n```\n---\nA \\*safe\\* str"}
    assert flatten_markup(hover) == "(class) Markup\n\nA *safe* str"
    assert flatten_markup([{"language": "c", "value": "int add(int a)"}, "doc"]) == (
        "int add(int a)\n\ndoc"
    )
    assert flatten_markup(None) == ""
