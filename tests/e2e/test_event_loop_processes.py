"""`$LSPMUX_EVENT_LOOP` reaches the lspmux processes: a real `lspmux proxy` runs on the loop it
names (its debug log says which), and `lspmux proxy` / `lspmux server` refuse a value that is
no loop, saying which ones are allowed, before they serve anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lspmux.cli_common import EVENT_LOOP_ENV, EVENT_LOOPS
from tests.e2e.conftest import proxy_env

pytestmark = pytest.mark.e2e


def lspmux(tmp_path: Path, loop: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**proxy_env(tmp_path), EVENT_LOOP_ENV: loop}
    return subprocess.run(
        [sys.executable, "-m", "lspmux", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )


@pytest.mark.parametrize("loop", EVENT_LOOPS)
def test_the_proxy_runs_on_the_loop_it_is_told(tmp_path: Path, loop: str) -> None:
    log = tmp_path / "proxy.log"
    run = lspmux(tmp_path, loop, "proxy", "--log-level", "debug", "--log-file", str(log))
    assert run.returncode == 1, run.stderr  # its input ended without `exit`
    assert f"event loop: {loop} (python {sys.version.split()[0]})" in log.read_text()


def test_the_suite_passes_its_choice_on() -> None:
    """tests/conftest.py spells the choice out for the processes the tests start."""
    assert os.environ[EVENT_LOOP_ENV] in EVENT_LOOPS


@pytest.mark.parametrize("command", [["proxy"], ["server"]])
def test_a_value_that_is_no_loop_stops_the_command(tmp_path: Path, command: list[str]) -> None:
    run = lspmux(tmp_path, "tokio", *command)
    assert run.returncode == 2, run.stderr
    err = run.stderr.decode()
    assert f"{EVENT_LOOP_ENV}='tokio' is not an event loop lspmux knows" in err, err
    assert "one of uvloop, asyncio" in err and "Traceback" not in err
