"""When the daemon ends on its own (lspmux/daemon/lifetime.py): the idle clock, the idle
timeout's sources, and what "lspmux changed on disk" means."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import lspmux
from lspmux.daemon import lifetime
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


def test_installed_changes_with_the_version_or_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "lspmux"
    shutil.copytree(Path(lspmux.__file__).parent, package)  # the files' times kept: all older
    before = installed(package)
    assert before[0] == lspmux.__version__
    assert installed(package) == before
    module = package / "daemon" / "server.py"
    stamp = before[1] + 1_000_000_000  # newer than every file there
    # an upgrade (or git) replaces a file: its folder changes, seen at the next look
    replacement = module.with_suffix(".new")
    replacement.write_text(module.read_text())
    os.utime(replacement, ns=(stamp, stamp))
    replacement.replace(module)
    assert installed(package) == (before[0], stamp)
    # a file edited in place: seen by the next full look, at most WALK_EVERY seconds later
    later = stamp + 1_000_000_000
    os.utime(module, ns=(later, later))
    assert installed(package) == (before[0], stamp)
    monkeypatch.setattr(lifetime, "WALK_EVERY", 0.0)
    assert installed(package) == (before[0], later)
    # the version: `__init__.py` is looked at every time
    monkeypatch.setattr(lifetime, "WALK_EVERY", 3600.0)
    init = package / "__init__.py"
    init.write_text(init.read_text().replace(lspmux.__version__, "99.0"))
    assert installed(package)[0] == "99.0"
