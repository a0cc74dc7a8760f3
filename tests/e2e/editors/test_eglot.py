"""Emacs + eglot, batch, with docs/editors.md's eglot snippet as its whole configuration.

What a user of that setup sees on the sample workspace (tests/data/workspace/app.py): each
diagnostic once in flymake, nothing stale after an unsaved edit, and ruff's "Remove unused
import" offered once and applied (the checks of `EditorTests`). Emacs >= 29 has eglot built in;
on older Emacs the driver loads Debian's elpa-eglot (scripts/setup-tests installs both as root).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.editors.checks import EditorTests
from tests.e2e.editors.harness import EGLOT_HEADING, HERE, EditorHarness, EditorRun, doc_snippet

ELPA = Path("/usr/share/emacs/site-lisp/elpa")


def emacs_skip_reason() -> str:
    emacs = shutil.which("emacs")
    if emacs is None:
        return "emacs not found (scripts/setup-tests installs Debian's emacs-nox + elpa-eglot)"
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


class TestEglot(EditorTests):
    def run(self, harness: EditorHarness, scenario: str, **extra: Any) -> EditorRun:
        init = harness.tmp / "init.el"
        init.write_text(doc_snippet(EGLOT_HEADING, "elisp"))
        emacs = shutil.which("emacs")
        assert emacs is not None
        argv = [emacs, "--batch", "-Q", "-l", str(init), "-l", str(HERE / "eglot_driver.el")]
        events = harness.tmp / "eglot-events.log"
        plan = harness.plan(scenario, events_log=str(events), **extra)
        run = harness.run("emacs", argv, plan, {"eglot events": events})
        assert run.data["major_mode"] == f"{extra.get('language', 'python')}-mode", run.explain()
        return run
