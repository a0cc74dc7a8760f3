"""Emacs + eglot, batch, with docs/editors.md's eglot snippet as its whole configuration.

What a user of that setup sees on the sample workspace (tests/data/workspace/app.py): each
diagnostic once in flymake, nothing stale after an unsaved edit, and ruff's "Remove unused
import" offered once and applied. Emacs >= 29 has eglot built in; on older Emacs the driver
loads Debian's elpa-eglot (scripts/setup-tests installs both as root).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.editors.harness import (
    ACTION_TITLE,
    EDITS,
    EXPECT_AFTER,
    HERE,
    STALE,
    EditorHarness,
    EditorRun,
    check_not_stale,
    check_once,
    doc_snippet,
    publish_to_shown,
    report,
)

HEADING = "Emacs (eglot)"
ELPA = Path("/usr/share/emacs/site-lisp/elpa")


def emacs_skip_reason() -> str:
    emacs = shutil.which("emacs")
    if emacs is None:
        return (
            "emacs not found (scripts/setup-tests installs Debian's emacs-nox + elpa-eglot as root)"
        )
    probe = subprocess.run(
        [emacs, "--batch", "-Q", "--eval", "(princ emacs-major-version)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    major = int(probe.stdout.strip() or 0)
    if major < 29 and not any(ELPA.glob("eglot-*")):
        return f"Emacs {major} has no built-in eglot and Debian's elpa-eglot is not installed"
    return ""


SKIP = emacs_skip_reason()
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(bool(SKIP), reason=SKIP)]


def run_emacs(harness: EditorHarness, scenario: str, **extra: Any) -> EditorRun:
    init = harness.tmp / "init.el"
    init.write_text(doc_snippet(HEADING, "elisp"))
    emacs = shutil.which("emacs")
    assert emacs is not None
    argv = [emacs, "--batch", "-Q", "-l", str(init), "-l", str(HERE / "eglot_driver.el")]
    events = harness.tmp / "eglot-events.log"
    plan = harness.plan(scenario, events_log=str(events), **extra)
    run = harness.run("emacs", argv, plan, {"eglot events": events})
    assert "error" not in run.data, f"the Emacs driver failed\n{run.explain()}"
    assert not run.data.get("leftovers"), f"processes outlived Emacs\n{run.explain()}"
    return run


def test_snippet_is_the_documented_one() -> None:
    snippet = doc_snippet(HEADING, "elisp")
    assert "eglot-server-programs" in snippet and '"lspmux" "proxy"' in snippet


def test_each_diagnostic_shown_once(harness: EditorHarness) -> None:
    run = run_emacs(harness, "diagnostics")
    assert run.data["major_mode"] == "python-mode", run.explain()
    diags = run.data["diagnostics"]
    check_once(run, diags)
    report(run, shown=sorted({(d["source"], d.get("code"), d["lnum"]) for d in diags}))


def test_unsaved_edit_leaves_no_stale_diagnostic(harness: EditorHarness) -> None:
    run = run_emacs(harness, "stale", edits=EDITS, stale=STALE, expect_after=EXPECT_AFTER)
    seconds = check_not_stale(run)
    assert seconds < 10, f"the edited text's diagnostics took {seconds:.1f}s\n{run.explain()}"
    report(run, edit_to_clean_s=round(seconds, 2), publish_to_shown_s=publish_to_shown(run))


def test_remove_unused_import_offered_once_and_applied(harness: EditorHarness) -> None:
    original = (harness.workspace / "app.py").read_text()
    run = run_emacs(
        harness, "code_action", cursor=[0, 7], action_title=ACTION_TITLE, apply_deadline=10
    )
    data = run.data
    assert len(data["matching"]) == 1, (
        f"{ACTION_TITLE!r} offered {len(data['matching'])} times: {data['offered']}\n"
        f"{run.explain()}"
    )
    assert data["menu"] is None, f"a menu opened instead of applying\n{run.explain()}"
    assert data["text"] == original.replace("import os\n", "", 1), (
        f"the buffer after applying {data['matching']}:\n{data['text']}\n{run.explain()}"
    )
    check_once(run, data["before"])
    report(run, offered=data["offered"])
