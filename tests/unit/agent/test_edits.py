"""WorkspaceEdits into plans and diffs; writing plans atomically, never over a changed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from lspmux.agent.apply import write_plan
from lspmux.agent.edits import apply_text_edits, plan_edit, unified_diff
from lspmux.agent.errors import ToolError


def _edit(l1: int, c1: int, l2: int, c2: int, text: str) -> dict[str, object]:
    return {"range": {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}},
            "newText": text}  # fmt: skip


def test_text_edits_refer_to_the_original_text() -> None:
    text = "a = 1\nb = a\n"
    edits = [_edit(1, 4, 1, 5, "alpha"), _edit(0, 0, 0, 1, "alpha")]
    assert apply_text_edits(text, edits, "utf-16") == "alpha = 1\nb = alpha\n"


def test_utf16_edit_after_an_emoji() -> None:
    text = 's = "😀"; x = 1\n'
    # `x` is at code point 9, UTF-16 character 10
    assert apply_text_edits(text, [_edit(0, 10, 0, 11, "y")], "utf-16") == 's = "😀"; y = 1\n'


def test_plan_and_diff_of_changes_and_resource_operations() -> None:
    files = {"file:///r/a.py": "x = 1\n", "file:///r/b.py": "from a import x\n"}
    edit = {
        "documentChanges": [
            {"textDocument": {"uri": "file:///r/a.py", "version": 1},
             "edits": [_edit(0, 0, 0, 1, "y")]},
            {"kind": "rename", "oldUri": "file:///r/b.py", "newUri": "file:///r/c.py"},
            {"kind": "create", "uri": "file:///r/d.py"},
        ]
    }  # fmt: skip
    plan = plan_edit(edit, files.get, "utf-16")
    assert plan.files["file:///r/a.py"].after == "y = 1\n"
    assert plan.files["file:///r/b.py"].after is None
    assert plan.files["file:///r/c.py"].after == "from a import x\n"
    assert plan.renames == [("file:///r/b.py", "file:///r/c.py")]
    diff = unified_diff(plan, lambda uri: uri.rsplit("/", 1)[1])
    assert "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+y = 1\n" in diff
    assert "--- a/b.py\n+++ b/c.py\n" in diff
    assert "--- /dev/null\n+++ b/d.py\n" in diff


def test_write_plan_atomic_and_refuses_a_stale_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("print(x)\n")
    edit = {"changes": {a.as_uri(): [_edit(0, 0, 0, 1, "y")], b.as_uri(): [_edit(0, 6, 0, 7, "y")]}}

    def read(uri: str) -> str:
        return Path(uri[7:]).read_text()

    plan = plan_edit(edit, read, "utf-16")
    b.write_text("print(x)  # changed meanwhile\n")
    with pytest.raises(ToolError, match=r"b\.py changed on disk since the edit was computed"):
        write_plan(plan, tmp_path)
    assert a.read_text() == "x = 1\n"  # nothing written, not even the unchanged file
    plan = plan_edit(edit, read, "utf-16")
    plan.files[b.as_uri()].after = "print(y)  # changed meanwhile\n"
    assert sorted(p.name for p in write_plan(plan, tmp_path)) == ["a.py", "b.py"]
    assert a.read_text() == "y = 1\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".lspmux")]  # no temp left


def test_write_plan_refuses_paths_outside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "victim.py"
    outside.write_text("ok\n")
    plan = plan_edit({"changes": {outside.as_uri(): [_edit(0, 0, 0, 2, "pwned")]}},
                     lambda uri: "ok\n", "utf-16")  # fmt: skip
    with pytest.raises(ToolError, match="outside the workspace root"):
        write_plan(plan, root)
    assert outside.read_text() == "ok\n"


# -- never clobber: creates and renames onto existing files, edits through links (issue 20) ----


def _disk(uri: str) -> str | None:
    path = Path(uri[7:])
    return path.read_text() if path.is_file() else None


def test_creating_an_existing_file_is_refused_skipped_or_overwritten(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("precious\n")
    create = {"kind": "create", "uri": a.as_uri()}
    with pytest.raises(ToolError, match=r"creates .*a\.py, which exists"):
        plan_edit({"documentChanges": [create]}, _disk, "utf-16")
    assert a.read_text() == "precious\n"
    skipped = {**create, "options": {"ignoreIfExists": True}}
    plan = plan_edit({"documentChanges": [skipped]}, _disk, "utf-16")
    assert plan.empty
    write_plan(plan, tmp_path)
    assert a.read_text() == "precious\n"
    # overwrite wins over ignoreIfExists, as the protocol says
    both = {**create, "options": {"overwrite": True, "ignoreIfExists": True}}
    write_plan(plan_edit({"documentChanges": [both]}, _disk, "utf-16"), tmp_path)
    assert a.read_text() == ""
    new = tmp_path / "new.py"
    write_plan(plan_edit({"documentChanges": [{"kind": "create", "uri": new.as_uri()}]},
                         _disk, "utf-16"), tmp_path)  # fmt: skip
    assert new.read_text() == ""


def test_renaming_onto_an_existing_file_is_refused_unless_overwrite(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("a\n")
    b.write_text("b\n")
    rename = {"kind": "rename", "oldUri": a.as_uri(), "newUri": b.as_uri()}
    with pytest.raises(ToolError, match=r"renames onto .*b\.py, which exists"):
        plan_edit({"documentChanges": [rename]}, _disk, "utf-16")
    skipped = {**rename, "options": {"ignoreIfExists": True}}
    assert plan_edit({"documentChanges": [skipped]}, _disk, "utf-16").empty
    assert (a.read_text(), b.read_text()) == ("a\n", "b\n")
    over = {**rename, "options": {"overwrite": True}}
    write_plan(plan_edit({"documentChanges": [over]}, _disk, "utf-16"), tmp_path)
    assert not a.exists() and b.read_text() == "a\n"
    gone = {"kind": "rename", "oldUri": a.as_uri(), "newUri": (tmp_path / "c.py").as_uri()}
    with pytest.raises(ToolError, match="does not exist"):  # it would delete c.py's slot
        plan_edit({"documentChanges": [gone]}, _disk, "utf-16")


def test_an_edit_through_an_in_root_link_edits_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_text("x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    plan = plan_edit({"changes": {link.as_uri(): [_edit(0, 0, 0, 1, "y")]}}, _disk, "utf-16")
    write_plan(plan, tmp_path)
    assert link.is_symlink() and link.resolve() == target
    assert target.read_text() == "y = 1\n"


def test_an_edit_through_a_link_out_of_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    victim = tmp_path / "victim.py"
    victim.write_text("x = 1\n")
    link = root / "link.py"
    link.symlink_to(victim)
    plan = plan_edit({"changes": {link.as_uri(): [_edit(0, 0, 0, 1, "y")]}}, _disk, "utf-16")
    with pytest.raises(ToolError, match="outside the workspace root"):
        write_plan(plan, root)
    assert link.is_symlink() and victim.read_text() == "x = 1\n"
