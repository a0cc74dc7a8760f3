"""A server that never publishes diagnostics is not waited for after an edit, and the answer
says it did not report (never a false all-clear)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.agent_harness import run_verb
from tests.e2e.conftest import proxy_env
from tests.e2e.daemon_harness import scripted_server

pytestmark = pytest.mark.e2e


def test_rename_against_a_server_that_never_publishes_answers_fast_and_says_so(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "main.fault").write_text("alpha = 1\nbeta = alpha + alpha\n")
    config = tmp_path / "rename.toml"
    config.write_text(scripted_server("rename", tmp_path / "scripted.jsonl"))
    env = proxy_env(tmp_path)
    started = time.monotonic()
    out = run_verb(root, env, "rename", "main.fault:1:1", "gamma", "--config", str(config),
                   "--json")  # fmt: skip
    took = time.monotonic() - started
    assert out.returncode == 0, out.stderr
    assert took < 10, f"the rename took {took:.1f}s: it waited for a server that never reports"
    data = json.loads(out.stdout)
    assert "+gamma = 1" in json.dumps(data)
    unchecked = data["check"]["unchecked"] if "check" in data else data["unchecked"]
    assert [(u["path"], u["source"]) for u in unchecked] == [("main.fault", "scripted")], data
    assert "did not report" in unchecked[0]["reason"], unchecked
    assert (root / "main.fault").read_text() == "alpha = 1\nbeta = alpha + alpha\n"
