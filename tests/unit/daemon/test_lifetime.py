"""When the daemon ends on its own (lspmux/daemon/lifetime.py): the idle clock, the idle
timeout's sources, and what "lspmux changed on disk" means."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import lspmux
from lspmux.daemon.lifetime import DEFAULT_IDLE, IDLE_ENV, Idle, idle_timeout, installed


def test_idle_counts_from_the_first_quiet_check_and_restarts_when_busy() -> None:
    idle = Idle(10.0)
    assert not idle.check(False, 100.0)  # quiet from now
    assert not idle.check(False, 109.0)
    assert not idle.check(True, 109.5)  # a client came: the clock starts again
    assert not idle.check(False, 110.0)
    assert not idle.check(False, 119.9)
    assert idle.check(False, 120.0)
    assert not Idle(None).check(False, 1e9)  # never


def test_idle_timeout_from_the_command_line_the_environment_or_the_default() -> None:
    assert idle_timeout(None, {}) == DEFAULT_IDLE
    assert idle_timeout(None, {IDLE_ENV: "2.5"}) == 2.5
    assert idle_timeout(3.0, {IDLE_ENV: "2.5"}) == 3.0
    assert idle_timeout(0.0, {}) is None
    assert idle_timeout(None, {IDLE_ENV: "0"}) is None
    with pytest.raises(ValueError, match=IDLE_ENV):
        idle_timeout(None, {IDLE_ENV: "soon"})
    with pytest.raises(ValueError, match=">= 0"):
        idle_timeout(-1.0, {})


def test_installed_changes_with_the_version_or_any_file(tmp_path: Path) -> None:
    package = tmp_path / "lspmux"
    shutil.copytree(Path(lspmux.__file__).parent, package)
    before = installed(package)
    assert before[0] == lspmux.__version__
    assert installed(package) == before
    module = package / "daemon" / "server.py"
    stamp = before[1] + 1_000_000_000  # newer than every file there
    os.utime(module, ns=(stamp, stamp))  # a file rewritten by an upgrade
    assert installed(package) == (before[0], stamp)
    init = package / "__init__.py"
    init.write_text(init.read_text().replace(lspmux.__version__, "99.0"))
    assert installed(package)[0] == "99.0"
