"""The file watcher on real files in temporary folders: events per backend, globs, kinds,
RelativePattern, noise, unregistering, and a clean stop (no thread left)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from lspmux.workspace.watch import Watcher, coalesce, is_noise, watched_folders, with_contents
from tests.polling import eventually

ROOT = Path(__file__).resolve().parents[3]


class Seen:
    """What the watcher delivered, per backend."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.event = asyncio.Event()

    async def __call__(self, backend: str, params: dict[str, Any]) -> None:
        self.calls.append((backend, params))
        self.event.set()

    def events(self, backend: str) -> set[tuple[str, int]]:
        return {(c["uri"], c["type"]) for b, p in self.calls if b == backend for c in p["changes"]}

    async def until(
        self, backend: str, expected: set[tuple[str, int]], timeout: float = 10
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not expected <= self.events(backend):
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"{backend}: wanted {expected}, got {self.events(backend)}")
            self.event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.event.wait(), remaining)


def watcher_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "lspmux-watch"]


@pytest_asyncio.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[Watcher[str], Seen, Path]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    seen = Seen()
    watcher: Watcher[str] = Watcher(seen, [str(ws)], debounce_ms=100)
    await watcher.start()
    yield watcher, seen, ws
    await watcher.stop()
    assert watcher_threads() == []


def uri(p: Path) -> str:
    return p.as_uri()


_probes = itertools.count()


async def settle(watcher: Watcher[str], seen: Seen, folder: Path) -> None:
    """Wait until the watching thread has delivered everything written so far: write a probe
    file in `folder` (a glob only the `probe` backend asks for, for this long) until its event
    arrives. One thread reads the events in order and drops none once watching, so what was
    written before the probe has been delivered (or dropped) by then; the first probe seen also
    shows that a freshly (re)started thread is watching."""
    watcher.register("probe", "p", {"watchers": [{"globPattern": "**/*.probe"}]})
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while True:
            probe = folder / f"{next(_probes)}.probe"
            probe.write_text("x")
            with contextlib.suppress(AssertionError):
                await seen.until("probe", {(uri(probe), 1)}, timeout=0.2)
                return
            assert loop.time() < deadline, "the watcher never saw a probe file"
    finally:
        watcher.unregister("probe", "p")  # the same folders: the thread goes on


async def test_create_change_delete_reach_the_backend_that_asked(setup: Any) -> None:
    watcher, seen, ws = setup
    watcher.register("ruff", "1", {"watchers": [{"globPattern": "**/ruff.toml"}]})
    watcher.register("other", "1", {"watchers": [{"globPattern": "**/*.md"}]})
    await settle(watcher, seen, ws)
    cfg = ws / "sub" / "ruff.toml"
    cfg.parent.mkdir()
    cfg.write_text("a = 1\n")
    await seen.until("ruff", {(uri(cfg), 1)})
    await settle(watcher, seen, ws)  # the creation's last events are in: a write is a change
    cfg.write_text("a = 2\n")
    await seen.until("ruff", {(uri(cfg), 2)})
    await settle(watcher, seen, ws)
    cfg.unlink()
    await seen.until("ruff", {(uri(cfg), 3)})
    (ws / "unrelated.py").write_text("x")
    await settle(watcher, seen, ws)  # its event would have come by now
    assert all("unrelated" not in u for u, _ in seen.events("ruff"))
    assert seen.events("other") == set()


async def test_kinds_filter_events(setup: Any) -> None:
    watcher, seen, ws = setup
    watcher.register("b", "1", {"watchers": [{"globPattern": "**/*.txt", "kind": 4}]})
    watcher.register("b", "2", {"watchers": [{"globPattern": "**/*.log", "kind": 1}]})
    await settle(watcher, seen, ws)
    (ws / "a.txt").write_text("x")  # created, but only deletes of *.txt were asked for
    (ws / "a.log").write_text("x")
    await seen.until("b", {(uri(ws / "a.log"), 1)})
    await settle(watcher, seen, ws)
    (ws / "a.txt").unlink()
    (ws / "a.log").write_text("y")  # changed, but only creations of *.log were asked for
    await seen.until("b", {(uri(ws / "a.txt"), 3)})
    await settle(watcher, seen, ws)
    assert seen.events("b") == {(uri(ws / "a.log"), 1), (uri(ws / "a.txt"), 3)}


async def test_relative_pattern_outside_the_roots_is_watched(setup: Any, tmp_path: Path) -> None:
    watcher, seen, ws = setup
    outside = tmp_path / "outside"
    outside.mkdir()
    pattern = {"baseUri": outside.as_uri(), "pattern": "*.json"}
    watcher.register("clangd", "w", {"watchers": [{"globPattern": pattern}]})
    assert watcher.folders == sorted([str(ws), str(outside)])
    await settle(watcher, seen, ws)
    (outside / "deep").mkdir()
    (outside / "deep" / "x.json").write_text("{}")  # not directly under the base
    (outside / "compile_commands.json").write_text("[]")
    (ws / "compile_commands.json").write_text("[]")  # not under the base
    await seen.until("clangd", {(uri(outside / "compile_commands.json"), 1)})
    await settle(watcher, seen, ws)
    assert seen.events("clangd") == {(uri(outside / "compile_commands.json"), 1)}


async def test_unregister_stops_events_and_the_thread(setup: Any) -> None:
    watcher, seen, ws = setup
    assert watcher_threads() == []  # nothing registered: nothing watched
    watcher.register("ruff", "1", {"watchers": [{"globPattern": "**/*.toml"}]})
    assert len(watcher_threads()) == 1
    await settle(watcher, seen, ws)
    (ws / "a.toml").write_text("x")
    await seen.until("ruff", {(uri(ws / "a.toml"), 1)})
    assert watcher.unregister("ruff", "1")
    # told to stop at once; it ends within the watcher's poll step
    await eventually(lambda: not watcher_threads(), "the thread's end", timeout=2, step=0.02)
    before = len(seen.calls)
    (ws / "b.toml").write_text("x")  # no thread is left to see it
    await asyncio.sleep(0)
    assert len(seen.calls) == before


async def test_noise_is_dropped_unless_a_glob_names_it(setup: Any) -> None:
    watcher, seen, ws = setup
    watcher.register("all", "1", {"watchers": [{"globPattern": "**/*"}]})
    watcher.register("nm", "1", {"watchers": [{"globPattern": "**/node_modules/**/*.json"}]})
    for d in (".git/objects", "node_modules/pkg", "__pycache__"):
        (ws / d).mkdir(parents=True)
    await settle(watcher, seen, ws)
    (ws / ".git" / "objects" / "ab").write_text("x")
    (ws / ".git" / "index").write_text("x")
    (ws / "__pycache__" / "a.pyc").write_text("x")
    (ws / ".a.py.swp").write_text("x")
    (ws / "a.py~").write_text("x")
    (ws / "4913").write_text("x")
    (ws / "node_modules" / "pkg" / "package.json").write_text("{}")
    (ws / "real.py").write_text("x")
    await seen.until("all", {(uri(ws / "real.py"), 1)})
    await seen.until("nm", {(uri(ws / "node_modules" / "pkg" / "package.json"), 1)})
    await settle(watcher, seen, ws)
    # `**/*` does not spell node_modules, but another registration does: events there are kept
    # (and routed by glob, so "all" gets them too); .git, __pycache__ and swap files are not.
    noisy = {u for u, _ in seen.events("all") if "/.git/" in u or "__pycache__" in u}
    noisy |= {u for u, _ in seen.events("all") if u.endswith(("swp", "~", "4913"))}
    assert noisy == set()


async def test_a_failing_callback_does_not_stop_the_watcher(tmp_path: Path) -> None:
    calls: list[str] = []

    def flaky(backend: str, params: dict[str, Any]) -> None:
        calls.append(params["changes"][0]["uri"])
        if len(calls) == 1:
            raise RuntimeError("boom")

    watcher: Watcher[str] = Watcher(flaky, [str(tmp_path)], debounce_ms=50)
    await watcher.start()
    try:
        watcher.register("x", "1", {"watchers": [{"globPattern": "**/*.a"}]})
        for n in range(50):  # until the new thread watches: the first delivery raises
            (tmp_path / f"{n}.a").write_text("x")
            with contextlib.suppress(AssertionError):
                await eventually(lambda: calls, "a first delivery", timeout=0.2, step=0.01)
                break
        assert calls, "the watcher never delivered"
        after = tmp_path / "after.a"
        after.write_text("x")
        await eventually(lambda: uri(after) in calls, "a delivery after the failing one")
        assert len(calls) >= 2
    finally:
        await watcher.stop()
    await watcher.stop()  # idempotent
    assert watcher_threads() == []


async def test_ready_says_when_a_write_is_seen(setup: Any) -> None:
    watcher, seen, ws = setup
    assert await watcher.ready()  # nothing to watch: ready at once
    watcher.register("ruff", "1", {"watchers": [{"globPattern": "**/ruff.toml"}]})
    assert await asyncio.wait_for(watcher.ready(), 10)
    assert not watcher.polling
    (ws / "ruff.toml").write_text("x")  # no probe first: ready() is enough
    await seen.until("ruff", {(uri(ws / "ruff.toml"), 1)})


def user_namespace() -> list[str]:
    """The command prefix that runs a program as root of a new user namespace, whose inotify
    limits (/proc/sys/user/max_inotify_*) it may lower for itself alone."""
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify and user namespaces are Linux's")
    prefix = ["unshare", "--user", "--map-root-user"]
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not on PATH")
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a user namespace here: {probe.stderr.strip()}")
    return prefix


@pytest.mark.parametrize(
    ("limit", "errno_name"),
    [("max_inotify_instances", "EMFILE"), ("max_inotify_watches", "ENOSPC")],
)
def test_a_refused_watch_is_logged_and_polled(tmp_path: Path, limit: str, errno_name: str) -> None:
    """The OS refuses inotify (its per-user limit set to 0 in a user namespace of its own: the
    rest of the machine keeps its limits): the watcher says so and polls, instead of reporting
    ready while watching nothing (what `ignore_permission_denied` did for the watch limit)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [*user_namespace(), sys.executable, "-m", "tests.unit.workspace.refused_watch"]
    done = subprocess.run(
        [*argv, limit, str(tmp_path)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["refused"] == errno_name  # the OS really refused
    assert out["ready"] and out["polling"]
    assert out["seen"] == [{"changes": [{"uri": uri(tmp_path / "ruff.toml"), "type": 1}]}]
    warnings = [line for line in out["log"] if line.startswith("WARNING")]
    assert len(warnings) == 1 and "fs.inotify.max_user_" in warnings[0], out["log"]


def test_an_unreadable_folder_is_skipped_not_polled(tmp_path: Path) -> None:
    """A folder the watcher may not read refuses its watch too: the rest is still watched by
    inotify (not polled), and the log names it."""
    if not sys.platform.startswith("linux"):
        pytest.skip("capabilities and inotify are Linux's")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "tests.unit.workspace.refused_watch", "unreadable"]
    done = subprocess.run(
        [*argv, str(tmp_path)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["refused"] == "EACCES"
    assert out["ready"] and not out["polling"]
    assert out["seen"] == [{"changes": [{"uri": uri(tmp_path / "ruff.toml"), "type": 1}]}]
    warnings = [line for line in out["log"] if line.startswith("WARNING")]
    assert len(warnings) == 1 and "unreadable folders" in warnings[0], out["log"]


@pytest.mark.parametrize(
    ("path", "noise"),
    [
        (".git/index", True),
        ("sub/.git/HEAD", True),
        (".gitignore", False),
        ("node_modules/a/b.json", True),
        ("src/.a.py.swp", True),
        ("src/.a.py.swx", True),
        ("src/a.py~", True),
        ("4913", True),
        (".#a.py", True),
        ("#a.py#", True),
        ("src/a.py", False),
        ("src/swp.py", False),
    ],
)
def test_is_noise(path: str, noise: bool) -> None:
    assert is_noise(path) is noise


def test_is_noise_spares_named_folders() -> None:
    assert not is_noise("node_modules/a/b.json", lambda d: d == "node_modules")
    assert is_noise(".git/index", lambda d: d == "node_modules")


def test_watched_folders_drop_nested_and_missing(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "ab").mkdir()
    got = watched_folders(
        [str(tmp_path / "a"), str(tmp_path / "ab")],
        [str(tmp_path / "a" / "b"), str(tmp_path / "gone")],
    )
    assert got == [str(tmp_path / "a"), str(tmp_path / "ab")]


def test_coalesce_judges_mixed_kinds_by_the_disk(tmp_path: Path) -> None:
    there = tmp_path / "there"
    there.write_text("x")
    gone = str(tmp_path / "gone")
    got = dict(coalesce([(str(there), 1), (str(there), 2), (gone, 1), (gone, 3), ("/x", 2)]))
    assert got == {str(there): 1, gone: 3, "/x": 2}


def test_contents_of_a_created_folder_are_created(tmp_path: Path) -> None:
    (tmp_path / "new" / "deep").mkdir(parents=True)
    (tmp_path / "new" / "deep" / "ruff.toml").write_text("x")
    (tmp_path / "new" / "node_modules").mkdir()
    (tmp_path / "new" / "node_modules" / "x.json").write_text("x")
    toml = str(tmp_path / "new" / "deep" / "ruff.toml")
    got = dict(with_contents([(str(tmp_path / "new"), 1), (toml, 2)]))
    new = str(tmp_path / "new")
    assert got == {new: 1, str(tmp_path / "new" / "deep"): 1, toml: 1}  # not node_modules
    assert dict(with_contents([(toml, 2)])) == {toml: 2}  # no folder created: as it was
