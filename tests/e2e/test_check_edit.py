"""`check_edit`: an edit shown to the real basedpyright and ruff (and clangd) as an unsaved
change, the problems it would introduce and fix, nothing written — and a second client of the
daemon answered for its own text while the check runs."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agent_harness import REPO, mcp_client
from tests.e2e.conftest import proxy_env
from tests.e2e.daemon_harness import DaemonUnderTest, daemon_fixture
from tests.e2e.test_sharing_own_text import hover

pytestmark = pytest.mark.e2e

NEW_NAME = "value = undefined_thing\n"


def _codes(rows: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(r["source"].lower(), r["code"]) for r in rows}


async def test_check_edit_reports_what_an_edit_introduces_and_writes_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    app = workspace / "app.py"
    before, mtime = app.read_bytes(), app.stat().st_mtime_ns
    async with mcp_client(workspace, proxy_env(tmp_path), "--private") as mcp:
        # at + new_text: one <|> inserts
        text, data = await mcp.call(
            "check_edit", at="app.py:main@<|>greeter = ", new_text="value = undefined_thing\n    "
        )
        introduced = [r for r in data["introduced"] if "undefined_thing" in r["message"]]
        assert _codes(introduced) == {("ruff", "F821"), ("basedpyright", "reportUndefinedVariable")}
        assert {r["label"] for r in introduced} == {"app.py:16:13"}
        assert data["fixed"] == [] and data["checked"] is True and data["written"] is False
        assert text.startswith("Introduced ") and "app.py:16:13 error" in text, text
        assert text.endswith("Nothing was written (app.py unchanged on disk).")
        # the problems already there are not new: the undefined name of line 18 moved to 19
        assert not any("undefined_name" in r["message"] for r in data["introduced"])

        # a unified diff that fixes a problem, over two files
        diff = (
            "--- a/app.py\n+++ b/app.py\n@@ -16,3 +16,2 @@\n"
            '     greeter = Greeter("world")\n     print(greeter.greet())\n-    undefined_name\n'
            "--- a/hello.c\n+++ b/hello.c\n@@ -7 +7 @@\n-    return totl;\n+    return total;\n"
        )
        text, data = await mcp.call("check_edit", diff=diff)
        fixed = _codes(data["fixed"])
        assert ("ruff", "F821") in fixed and ("basedpyright", "reportUndefinedVariable") in fixed
        assert any(r["path"] == "hello.c" and r["source"] == "clang" for r in data["fixed"]), text
        assert data["introduced"] == []
        assert "totl" in (workspace / "hello.c").read_text()

        # a list of edits, by range (0-based, as the structured results give them)
        edit = {"file": "app.py", "range": {"start": {"line": 0, "character": 0},
                                            "end": {"line": 0, "character": 0}},
                "new_text": NEW_NAME}  # fmt: skip
        _, data = await mcp.call("check_edit", edits=[edit])
        assert ("ruff", "F821") in _codes(data["introduced"])

        # the tool says what is wrong with an edit
        message = await mcp.error(
            "check_edit", diff="--- a/app.py\n+++ b/app.py\n@@ -3 +3 @@\n-nope\n+x\n"
        )
        assert "hunk 1 of app.py does not apply: expected 'nope'" in message
        message = await mcp.error("check_edit", at="app.py:1:1")
        assert "new_text" in message
        # and the agent's own view is back to the disk's text
        _, data = await mcp.call("diagnostics", file="app.py")
        assert not any("undefined_thing" in r["message"] for r in data["diagnostics"])
    assert app.read_bytes() == before and app.stat().st_mtime_ns == mtime


async def test_writing_tools_report_only_the_problems_they_introduce(
    workspace: Path, tmp_path: Path
) -> None:
    app = workspace / "app.py"
    async with mcp_client(workspace, proxy_env(tmp_path), "--private") as mcp:
        # a rename that clashes with `import os`: the preview says what it would introduce
        text, data = await mcp.call("rename", at="app.py:Greeter", new_name="os")
        assert "Would introduce 2 problems:" in text, text
        assert ("ruff", "F811") in _codes(data["introduced"])
        assert ("basedpyright", "reportAssignmentType") in _codes(data["introduced"])
        # ... and only new ones: the undefined name already there is not listed
        assert not any("undefined_name" in r["message"] for r in data["introduced"])
        assert "class Greeter" in app.read_text()
        _, data = await mcp.call("rename", at="app.py:Greeter", new_name="os", check=False)
        assert "introduced" not in data
        # written: the same problems, now on disk
        text, data = await mcp.call("rename", at="app.py:Greeter", new_name="os", apply=True)
        assert "class os" in app.read_text()
        assert "Applied: wrote 1 file.\nIntroduced 2 problems:" in text, text
        assert ("ruff", "F811") in _codes(data["introduced"]) and data["checked"] is True
        # a code action that fixes a problem introduces none
        (workspace / "unused.py").write_text("import sys\n\nprint(1)\n")
        text, data = await mcp.call(
            "code_actions", at="unused.py:1:8", kind="quickfix", apply="Remove unused import"
        )
        assert (workspace / "unused.py").read_text() == "\nprint(1)\n"
        assert data["introduced"] == [] and text.endswith("Introduced no problems."), text
        # format: no new problem either
        (workspace / "ugly.py").write_text("x  =  1\n")
        text, data = await mcp.call("format", file="ugly.py", apply=True)
        assert (workspace / "ugly.py").read_text() == "x = 1\n"
        assert data["introduced"] == [] and data["checked"] is True, text


async def test_a_second_client_keeps_its_own_text_during_a_check(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    editor = await daemon.client(workspace)
    uri = editor.open("app.py", "python")
    await editor.diagnostics_where(uri, lambda ds: bool(ds))
    assert "class Greeter" in await hover(editor, uri, 3, 7)
    # the check inserts a line at the top: in its text, line 4 (0-based 3) is blank
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lspmux", "check-edit", "--json", "--at", "app.py:1:1",
        "--new-text", NEW_NAME, cwd=workspace, env={**daemon.env, "PYTHONPATH": str(REPO)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    answers: list[str] = []
    seen: list[str] = []
    waiting = asyncio.ensure_future(proc.communicate())
    while not waiting.done():
        answers.append(await hover(editor, uri, 3, 7))
        seen += [d.message for d in editor.client.diagnostics.get(uri, [])]
        await asyncio.sleep(0.02)
    out, err = await waiting
    assert proc.returncode == 0, err.decode()
    data = json.loads(out)
    assert {("ruff", "F821"), ("basedpyright", "reportUndefinedVariable")} <= _codes(
        data["introduced"]
    ), data
    assert len(answers) >= 5 and all("class Greeter" in a for a in answers), answers
    assert not any("undefined_thing" in m for m in seen)  # nor its diagnostics
    assert NEW_NAME not in (workspace / "app.py").read_text()


_: Any = daemon_fixture
