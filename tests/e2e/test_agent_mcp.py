"""`lspmux mcp` end to end: every tool through the `mcp` SDK's own client, against real
basedpyright, ruff and clangd, on MarkupSafe's real source (and the sample C files)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.agent_harness import MARKUPSAFE, WORKSPACE, copy_project, mcp_client
from tests.e2e.conftest import proxy_env

pytestmark = pytest.mark.e2e

EXTRA = """\
import os

from markupsafe import Markup

# café — the columns after non-ASCII text count characters
naïve = "😀"; bad = undefined_name


def wrap(text: str) -> Markup:
    result = Markup(text)
    return result
"""

SHAPES = """\
class Shape:
    def area(self) -> float:
        raise NotImplementedError


class Square(Shape):
    def area(self) -> float:
        return 4.0
"""


async def test_reading_tools_on_markupsafe(tmp_path: Path) -> None:
    root = copy_project(MARKUPSAFE, tmp_path)
    (root / "src/markupsafe/extra.py").write_text(EXTRA)
    async with mcp_client(root, proxy_env(tmp_path), "--private") as mcp:
        names = {t.name for t in (await mcp.session.list_tools()).tools}
        assert {"definition", "references", "rename", "code_actions", "request"} <= names

        # references on a cold start: the test files' uses are there, not only the declaration
        text, data = await mcp.call(
            "references", at="src/markupsafe/__init__.py:24", symbol="escape"
        )
        paths = {r["path"] for r in data["references"]}
        assert "tests/test_escape.py" in paths, text
        assert text.startswith(f"Found {data['count']} reference")
        assert "src/markupsafe/__init__.py:24:5" in text
        # include_declaration false: every use, never the declaration
        _, uses = await mcp.call(
            "references", at="src/markupsafe/__init__.py:24", symbol="escape",
            include_declaration=False,
        )  # fmt: skip
        labels = [r["label"] for r in uses["references"]]
        assert "src/markupsafe/__init__.py:24:5" not in labels
        assert uses["count"] == data["count"] - 1
        _, few = await mcp.call("references", at="src/markupsafe/__init__.py:24:5", limit=2)
        assert len(few["references"]) == 2 and few["count"] == data["count"] and few["truncated"]

        # cross-file definition, by line + symbol and by Locate
        text, data = await mcp.call("definition", at="tests/test_escape.py:34", symbol="Markup")
        assert data["locations"][0]["label"] == "src/markupsafe/__init__.py:84:7", text
        assert "class Markup(str):" in text
        _, again = await mcp.call("definition", at="tests/test_escape.py:test_escape@== <|>Markup")
        assert again["locations"] == data["locations"]

        # type definition of a variable; hover flattened to plain text
        _, data = await mcp.call(
            "type_definition", at="src/markupsafe/extra.py:wrap@return <|>result"
        )
        assert data["locations"][0]["label"] == "src/markupsafe/__init__.py:84:7"
        text, _ = await mcp.call("hover", at="src/markupsafe/extra.py:11:12")
        assert "result: Markup" in text and "```" not in text

        # columns after non-ASCII text are characters, both ways
        text, data = await mcp.call("diagnostics", file="src/markupsafe/extra.py")
        assert "src/markupsafe/extra.py:6:20 error" in text, text
        sources = {d["source"].lower() for d in data["diagnostics"]}
        assert {"ruff", "basedpyright"} <= sources
        assert any(d["code"] == "F401" for d in data["diagnostics"])  # ruff's unused import
        bad = next(d for d in data["diagnostics"] if d["code"] == "F821")
        assert bad["label"] == "src/markupsafe/extra.py:6:20"  # characters
        assert bad["range"]["start"] == {"line": 5, "character": 20}  # UTF-16: the emoji is 2
        text, _ = await mcp.call("hover", at="src/markupsafe/extra.py:6:15")
        assert "bad" in text

        # implementations of a method: the override in the subclass
        (root / "src/markupsafe/shapes.py").write_text(SHAPES)
        text, data = await mcp.call("implementation", at="src/markupsafe/shapes.py:Shape.area")
        assert "src/markupsafe/shapes.py:7:9  def area(self) -> float:" in text, text

        # the symbol tree, workspace symbols, call hierarchy
        text, data = await mcp.call("symbols", file="src/markupsafe/__init__.py")
        assert "class Markup  src/markupsafe/__init__.py:84:7" in text
        assert "  method striptags  src/markupsafe/__init__.py:199:9" in text
        text, data = await mcp.call("workspace_symbols", query="EscapeFormatter")
        assert "class EscapeFormatter  src/markupsafe/__init__.py:332:7" in text
        text, data = await mcp.call("call_hierarchy", at="src/markupsafe/__init__.py:soft_str")
        assert data["calls"] and text.startswith("Found")
        assert any(c["path"] == "tests/test_markupsafe.py" for c in data["calls"]), text
        _, out = await mcp.call(
            "call_hierarchy", at="src/markupsafe/extra.py:wrap", direction="outgoing"
        )
        assert [c["name"] for c in out["calls"]] == ["Markup"] or "__new__" in str(out["calls"])

        # locate and describe are each other's inverse
        text, data = await mcp.call("locate", at="src/markupsafe/extra.py:wrap@return <|>result")
        assert text.startswith("src/markupsafe/extra.py:11:12")
        text, data = await mcp.call("describe", at="src/markupsafe/extra.py:11:12")
        assert text == "src/markupsafe/extra.py:wrap@return <|>result"

        # the session tools
        text, data = await mcp.call("status")
        assert any(b["server"].startswith("basedpyright") for b in data["backends"]), text
        text, data = await mcp.call("capabilities", file="src/markupsafe/extra.py")
        assert "basedpyright" in data["servers"] and "ruff" in data["servers"]
        _, data = await mcp.call(
            "request", method="textDocument/documentHighlight", at="src/markupsafe/extra.py:10:5"
        )
        assert len(data["result"]) == 2  # `result` assigned, then returned


async def test_errors_are_tool_results(tmp_path: Path) -> None:
    root = copy_project(MARKUPSAFE, tmp_path)
    outside = tmp_path / "secret.py"
    outside.write_text("password = 1\n")
    os.symlink(outside, root / "link.py")
    env = proxy_env(tmp_path)
    # gopls is kept off the PATH (where a developer has it): the last check needs a missing server
    env["PATH"] = os.pathsep.join(
        d for d in env["PATH"].split(os.pathsep) if shutil.which("gopls", path=d) is None
    )
    async with mcp_client(root, env, "--private") as mcp:
        for at in ("../secret.py:1:1", f"{outside}:1:1", "link.py:1:1"):
            message = await mcp.error("hover", at=at)
            assert "outside the workspace root" in message
        message = await mcp.error("definition", at="src/markupsafe/__init__.py:Markup.nope")
        assert "Markup.striptags" in message or "nearest" in message  # Locate's candidates
        message = await mcp.error("hover", at="src/markupsafe/__init__.py:24", symbol="nothere")
        assert "does not occur on line 24" in message
        message = await mcp.error("rename", at="src/markupsafe/__init__.py:24:5")
        assert "new_name" in message
        message = await mcp.error("diagnostics", file="../*.py")
        assert "outside" in message or "matches no file" in message
        message = await mcp.error(
            "rename_file", **{"from": "src/markupsafe/_native.py", "to": "../x.py"}
        )
        assert "outside the workspace root" in message
        assert not (tmp_path / "x.py").exists()
        message = await mcp.error("hover", at="nowhere.py:1:1")
        assert "file not found" in message
        # a server's workspace/applyEdit outside an `apply` writes nothing
        fixable = root / "src/markupsafe/fixable.py"
        fixable.write_text("import os\nimport sys\n")
        await mcp.call("diagnostics", file="src/markupsafe/fixable.py")
        await mcp.session.call_tool("request", {
            "method": "workspace/executeCommand",
            "params": {"command": "ruff.applyAutofix",
                       "arguments": [{"uri": fixable.as_uri(), "version": 1}]},
        })  # fmt: skip
        assert fixable.read_text() == "import os\nimport sys\n"
        # no server installed for the file: the error names it and how to install it
        (root / "main.go").write_text("package main\n\nfunc main() {}\n")
        message = await mcp.error("definition", at="main.go:3:6")
        assert (
            "Not installed: gopls (install: go install golang.org/x/tools/gopls@latest)" in message
        )
        text, data = await mcp.call("status")
        assert any(m["server"] == "gopls" and m["install"] for m in data["missing"]), text


async def test_rename_preview_then_apply_is_seen_by_the_next_query(tmp_path: Path) -> None:
    root = copy_project(MARKUPSAFE, tmp_path)
    init = root / "src/markupsafe/__init__.py"
    before = {p: p.read_text() for p in root.rglob("*.py")}
    async with mcp_client(root, proxy_env(tmp_path), "--private") as mcp:
        text, data = await mcp.call("rename", at="src/markupsafe/__init__.py:64", symbol="soft_str",
                                    new_name="to_text")  # fmt: skip
        assert (
            "--- a/src/markupsafe/__init__.py" in text and "+++ b/tests/test_markupsafe.py" in text
        )
        assert "-def soft_str(s: t.Any, /) -> str:" in text and "+def to_text(" in text
        assert data["applied"] is False and "tests/test_markupsafe.py" in data["files"]
        assert {p: p.read_text() for p in root.rglob("*.py")} == before  # nothing written

        text, data = await mcp.call("rename", at="src/markupsafe/__init__.py:64", symbol="soft_str",
                                    new_name="to_text", apply=True)  # fmt: skip
        assert data["applied"] and "Applied" in text
        assert "def to_text(s: t.Any, /) -> str:" in init.read_text()
        tests_text = (root / "tests/test_markupsafe.py").read_text()
        assert "from markupsafe import to_text" in tests_text
        assert "type(soft_str(" not in tests_text
        # the servers were told: the next query sees the new text (old name unknown, new found)
        text, data = await mcp.call(
            "references", at="src/markupsafe/__init__.py:64", symbol="to_text"
        )
        assert any(r["path"] == "tests/test_markupsafe.py" for r in data["references"]), text
        text, _ = await mcp.call("workspace_symbols", query="to_text")
        assert "function to_text  src/markupsafe/__init__.py:64:5" in text


async def test_code_actions_format_and_rename_file(tmp_path: Path) -> None:
    root = copy_project(MARKUPSAFE, tmp_path)
    extra = root / "src/markupsafe/extra.py"
    extra.write_text(EXTRA)
    async with mcp_client(root, proxy_env(tmp_path), "--private") as mcp:
        text, data = await mcp.call(
            "code_actions", at="src/markupsafe/extra.py:1:8", kind="quickfix"
        )
        titles = [a["title"] for a in data["actions"]]
        assert any("Remove unused import" in t for t in titles), text
        assert text.splitlines()[1].startswith("0: [quickfix]")
        text, data = await mcp.call("code_actions", at="src/markupsafe/extra.py:1:8",
                                    kind="quickfix", apply="Remove unused import")  # fmt: skip
        assert "-import os" in text and "import os" not in extra.read_text()
        _, data = await mcp.call("diagnostics", file="src/markupsafe/extra.py")
        assert not any(d["code"] == "F401" for d in data["diagnostics"])

        extra.write_text("x  =  [1,2]\n")
        text, data = await mcp.call("format", file="src/markupsafe/extra.py")
        assert "-x  =  [1,2]" in text and "+x = [1, 2]" in text
        assert extra.read_text() == "x  =  [1,2]\n"
        await mcp.call("format", file="src/markupsafe/extra.py", apply=True)
        assert extra.read_text() == "x = [1, 2]\n"

        text, data = await mcp.call("rename_file", **{"from": "src/markupsafe/extra.py",
                                                      "to": "src/markupsafe/more.py"})  # fmt: skip
        assert "--- a/src/markupsafe/extra.py" in text and "+++ b/src/markupsafe/more.py" in text
        assert extra.exists()
        text, _ = await mcp.call("rename_file", **{"from": "src/markupsafe/extra.py",
                                         "to": "src/markupsafe/more.py", "apply": True})  # fmt: skip
        assert "Applied: moved src/markupsafe/extra.py to src/markupsafe/more.py." in text
        assert (
            not extra.exists() and (root / "src/markupsafe/more.py").read_text() == "x = [1, 2]\n"
        )
        text, _ = await mcp.call("symbols", file="src/markupsafe/more.py")
        assert "variable x  src/markupsafe/more.py:1:1" in text


async def test_clangd_declaration_definition_and_reload(tmp_path: Path) -> None:
    root = copy_project(WORKSPACE, tmp_path)
    async with mcp_client(root, proxy_env(tmp_path), "--private") as mcp:
        text, data = await mcp.call("declaration", at="hello.c:main@<|>add(")
        assert data["locations"][0]["label"] == "hello.h:1:5", text
        text, data = await mcp.call("definition", at="hello.c:main@<|>add(")
        assert data["locations"][0]["label"] == "hello.c:3:5", text
        text, data = await mcp.call("diagnostics", file="hello.c", severity="error")
        assert "hello.c:7:12 error clang" in text and "totl" in text
        # clangd's fix for the diagnostic: listed, then applied (written, seen by the next query)
        text, data = await mcp.call("code_actions", at="hello.c:7:12", kind="quickfix")
        assert "0: [quickfix] change 'totl' to 'total'" in text
        await mcp.call("code_actions", at="hello.c:7:12", kind="quickfix", apply=0)
        assert "return total;" in (root / "hello.c").read_text()
        text, _ = await mcp.call("diagnostics", file="hello.c", severity="error")
        assert text.startswith("OK"), text
        text, data = await mcp.call("reload")
        assert "restarted" in text
        text, data = await mcp.call("hover", at="hello.c:main@<|>add(")
        assert "int add(int a, int b)" in text


async def test_apply_refuses_a_file_changed_since_the_edit_was_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lspmux.agent.edit_tools import make_plan
    from lspmux.agent.errors import ToolError
    from lspmux.agent.lsp import AgentLsp
    from lspmux.agent.writing import write

    root = copy_project(MARKUPSAFE, tmp_path)
    for key, value in proxy_env(tmp_path).items():
        if key.startswith("XDG_"):
            monkeypatch.setenv(key, value)
    lsp = await AgentLsp.connect(root, private=True)
    try:
        target = await lsp.target("src/markupsafe/__init__.py:64", "soft_str")
        await lsp.settle([target.uri], quiet=0.0)
        edit = await lsp.request("textDocument/rename", {
            "textDocument": {"uri": target.uri}, "position": target.position, "newName": "to_text"})  # fmt: skip
        plan = make_plan(lsp, edit)
        init = root / "src/markupsafe/__init__.py"
        tests = root / "tests/test_markupsafe.py"
        before = init.read_text()
        tests.write_text(tests.read_text() + "\n# edited meanwhile\n")
        with pytest.raises(ToolError, match=r"tests/test_markupsafe\.py changed on disk"):
            await write(lsp, plan)
        assert init.read_text() == before  # nothing written, not even the unchanged file
    finally:
        await lsp.close()
