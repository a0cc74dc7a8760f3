"""run_linter and LinterScheduler with real processes: missing tools, hangs, garbage, odd file
names, temporary files, debounce and cancellation.

The "linters" here are small Python programs (sys.executable -c ...) that misbehave on purpose
(hang, print garbage, record their pid); real linters are tested in test_linters_biome.py and
test_linters_generic.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from lspmux.config.model import LinterConfig
from lspmux.diagnostics.linters import LinterFailure
from lspmux.diagnostics.linters.runner import (
    LinterRun,
    run_linter,
    substitute,
    temp_name,
)
from lspmux.diagnostics.linters.scheduler import LinterScheduler

PY = sys.executable

#: Prints one finding whose message is the text it got on stdin.
ECHO_STDIN = (
    "import json, sys; t = sys.stdin.read(); "
    "print(json.dumps([{'line': 1, 'column': 1, 'message': t.strip(), 'code': 'E'}]))"
)
#: Appends its pid to argv[1], sleeps as many seconds as stdin says, then echoes stdin.
SLOW = (
    "import json, os, sys, time; t = sys.stdin.read(); "
    "open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); time.sleep(float(t.split()[0])); "
    "print(json.dumps([{'line': 1, 'message': t.strip()}]))"
)


def linter(code: str, *args: str, **kwargs: Any) -> LinterConfig:
    kwargs.setdefault("input", "stdin")
    kwargs.setdefault("format", "json")
    return LinterConfig(name=kwargs.pop("name", "fake"), command=[PY, "-c", code, *args], **kwargs)


def gone(pid: int) -> bool:
    """True when the process no longer runs (a zombie nobody reaped yet counts as gone)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def pids(pidfile: Path) -> list[int]:
    return [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []


# -- run_linter failure modes -----------------------------------------------------------------


async def test_missing_executable_says_what_and_how(tmp_path: Path) -> None:
    config = LinterConfig(name="mylint", command=["no-such-linter-4a1f", "${file}"])
    with pytest.raises(LinterFailure) as info:
        await run_linter(config, path=str(tmp_path / "a.txt"), text="", root=tmp_path)
    message = str(info.value)
    assert "'no-such-linter-4a1f' not found on PATH" in message
    assert str(tmp_path / "node_modules/.bin") in message
    assert "disabled = true" in message and "[linters.mylint]" in message


async def test_missing_tool_gets_its_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test setup may have installed the real SwiftLint: hide it, this test needs it missing.
    path = [
        p for p in os.environ["PATH"].split(os.pathsep) if not shutil.which("swiftlint", path=p)
    ]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    assert shutil.which("swiftlint") is None
    from lspmux.config.loader import load_config

    shipped = load_config(tmp_path, []).linters["swiftlint"].install  # the table's hint
    assert shipped == "brew install swiftlint"
    config = LinterConfig(name="swiftlint", command=["swiftlint", "lint"], format="swiftlint",
                          install=shipped)  # fmt: skip
    with pytest.raises(LinterFailure, match=r"install it \(brew install swiftlint"):
        await run_linter(config, path=str(tmp_path / "A.swift"), text="", root=tmp_path)


async def test_hanging_linter_is_killed_with_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    code = (
        "import os, subprocess, sys, time; child = subprocess.Popen(['sleep', '60']); "
        "open(sys.argv[1], 'w').write(f'{os.getpid()} {child.pid}'); time.sleep(60)"
    )
    config = linter(code, str(pidfile), "${file}", input="file", timeout=1.0, name="hang")
    source = tmp_path / "work" / "a.py"
    source.parent.mkdir()
    started = time.monotonic()
    with pytest.raises(LinterFailure, match=r"^hang timed out after 1s on a\.py"):
        await run_linter(config, path=str(source), text="x = 1\n", root=tmp_path)
    assert time.monotonic() - started < 5
    parent, child = pids(pidfile)
    await wait_until(lambda: gone(parent) and gone(child), timeout=5)
    assert list(source.parent.iterdir()) == []  # the temporary copy is deleted


@pytest.mark.parametrize(
    ("code", "kwargs", "match"),
    [
        ("print('Traceback: something broke')", {}, r"fake: cannot read its output on a\.py: "
         r"stdout is not JSON \(output began: 'Traceback: something broke'\)"),
        ("import sys; print('oops', file=sys.stderr); sys.exit(3)", {},
         r"fake exited with code 3 on a\.py and printed nothing on stdout; stderr: oops"),
        ("import sys; print('{bad'); print('line 1\\nline 2', file=sys.stderr); sys.exit(4)", {},
         r"\(exit code 4\).*stderr: line 1 \| line 2"),
        ("import sys; print('nothing matches'); sys.exit(1)",
         {"format": "regex", "regex": r"^(?P<line>\d+): (?P<message>.*)$"},
         r"exited with code 1 on a\.py but no line of its output matched the regex"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", {},
         r"fake was killed by signal 15"),
    ],
)  # fmt: skip
async def test_unusable_output_is_a_failure(
    tmp_path: Path, code: str, kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(LinterFailure, match=match):
        await run_linter(
            linter(code, **kwargs), path=str(tmp_path / "a.py"), text="", root=tmp_path
        )


async def test_quiet_success_is_no_problems(tmp_path: Path) -> None:
    assert (
        await run_linter(linter("pass"), path=str(tmp_path / "a.py"), text="", root=tmp_path) == []
    )
    regex = linter("print('all good')", format="regex", regex=r"^(?P<line>\d+): (?P<message>.*)$")
    assert await run_linter(regex, path=str(tmp_path / "a.py"), text="", root=tmp_path) == []


async def test_stdin_gets_the_buffer_and_cwd_is_the_root(tmp_path: Path) -> None:
    code = (
        "import json, os, sys; t = sys.stdin.read(); "
        "print(json.dumps([{'line': 1, 'message': os.getcwd() + '|' + sys.argv[1] + '|' + t}]))"
    )
    source = tmp_path / "pkg" / "m.py"
    config = linter(code, "${file}")
    [diag] = await run_linter(config, path="pkg/m.py", text="unsaved é", root=tmp_path)
    assert diag["message"] == f"{tmp_path}|{source}|unsaved é"


async def test_temporary_file_beside_the_original(tmp_path: Path) -> None:
    """The tool gets a copy of the buffer in the original's folder, named after it; its path in
    messages is mapped back to the original; the copy is gone afterwards."""
    record = tmp_path / "record.json"
    code = (
        "import json, os, sys; p = sys.argv[1]; "
        "json.dump({'argv': sys.argv[1:], 'content': open(p).read()}, open(sys.argv[2], 'w')); "
        "print(json.dumps([{'line': 1, 'message': 'problem in ' + p + ' (' + "
        "os.path.basename(p) + ')'}]))"
    )
    folder = tmp_path / "src"
    folder.mkdir()
    original = folder / "app.test.js"
    original.write_text("on disk\n")
    config = linter(code, "${file}", str(record), input="file")
    [diag] = await run_linter(config, path=str(original), text="in the buffer\n", root=tmp_path)
    seen = json.loads(record.read_text())
    temp = Path(seen["argv"][0])
    assert temp.parent == folder
    assert temp.name.startswith("lspmux-") and temp.name.endswith("-app.test.js")
    assert seen["content"] == "in the buffer\n"
    assert diag["message"] == f"problem in {original} (app.test.js)"
    assert sorted(p.name for p in folder.iterdir()) == ["app.test.js"]


async def test_cancelled_run_kills_the_tool_and_deletes_the_copy(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    code = "import os, sys, time; open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); time.sleep(60)"
    config = linter(code, str(pidfile), "${file}", input="file")
    folder = tmp_path / "src"
    folder.mkdir()
    task = asyncio.create_task(
        run_linter(config, path=str(folder / "a.py"), text="", root=tmp_path)
    )
    await wait_until(lambda: len(pids(pidfile)) == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [pid] = pids(pidfile)
    await wait_until(lambda: gone(pid), timeout=5)
    assert list(folder.iterdir()) == []


def test_substitute() -> None:
    argv = ["/bin/tool", "--stdin-filename=${file}", "${filename}", "--root", "${root}"]
    assert substitute(argv, file="/w/-rf.sh", root="/w") == [
        "/bin/tool",
        "--stdin-filename=/w/-rf.sh",
        "./-rf.sh",  # a whole-argument name starting with "-" cannot pass for an option
        "--root",
        "/w",
    ]
    assert substitute(["/bin/t", "-q"], file="/w/a.sh", root="/w", append_file=True) == [
        "/bin/t",
        "-q",
        "/w/a.sh",
    ]
    assert substitute(["/bin/t", "${file}"], file="/w/a", root="/w", append_file=True) == [
        "/bin/t",
        "/w/a",
    ]
    # ${filename} is the original's name, also when ${file} is the temporary copy.
    assert substitute(
        ["/bin/t", "--stdin-filename", "${filename}", "${file}"],
        file="/w/lspmux-1a2b3c4d-a.sh",
        root="/w",
        filename="a.sh",
    ) == ["/bin/t", "--stdin-filename", "a.sh", "/w/lspmux-1a2b3c4d-a.sh"]
    name = temp_name("-rf.sh")
    assert name.startswith("lspmux-") and name.endswith("--rf.sh") and name != temp_name("-rf.sh")


async def test_linter_run_records_failure_and_duration(tmp_path: Path) -> None:
    run = await LinterRun.execute(
        linter("print('x')"), uri="file:///a", path=str(tmp_path / "a"), text="", root=tmp_path
    )
    assert not run.ok and run.diagnostics is None and isinstance(run.error, LinterFailure)
    assert run.duration > 0
    run = await LinterRun.execute(
        linter("print('[]')"), uri="file:///a", path=str(tmp_path / "a"), text="", root=tmp_path
    )
    assert run.ok and run.diagnostics == []


# -- the scheduler ----------------------------------------------------------------------------

Result = tuple[str, str, "list[dict[str, Any]] | None", "str | None"]


class Recorder:
    def __init__(self) -> None:
        self.results: list[Result] = []

    def __call__(
        self, uri: str, name: str, diagnostics: list[dict[str, Any]] | None, error: str | None
    ) -> None:
        self.results.append((uri, name, diagnostics, error))

    def messages(self) -> list[str | None]:
        return [
            r[3] if r[2] is None else ",".join(d["message"] for d in r[2]) for r in self.results
        ]


URI = "file:///w/a.py"


async def test_debounce_coalesces_changes_into_one_run(tmp_path: Path) -> None:
    record = Recorder()
    scheduler = LinterScheduler(record)
    config = linter(ECHO_STDIN, debounce=0.5)
    text = {"now": ""}
    for n in range(1, 6):
        text["now"] = f"v{n}"
        scheduler.schedule(
            config, uri=URI, path="/w/a.py", text_provider=lambda: text["now"],
            root=tmp_path, event="change",
        )  # fmt: skip
        await asyncio.sleep(0.03)
    assert scheduler.started == 0  # still waiting
    await wait_until(lambda: len(record.results) == 1)
    await asyncio.sleep(0.3)
    assert record.messages() == ["v5"]  # one run, on the latest text
    assert scheduler.started == 1
    assert record.results[0][:2] == (URI, "fake")
    await scheduler.aclose()


async def test_save_runs_at_once_and_drops_the_pending_change(tmp_path: Path) -> None:
    record = Recorder()
    scheduler = LinterScheduler(record)
    config = linter(ECHO_STDIN, debounce=0.3)
    args: dict[str, Any] = {"uri": URI, "path": "/w/a.py", "root": tmp_path}
    scheduler.schedule(config, text_provider=lambda: "changed", event="change", **args)
    scheduler.schedule(config, text_provider=lambda: "saved", event="save", **args)
    await wait_until(lambda: len(record.results) == 1)
    await asyncio.sleep(0.5)
    assert record.messages() == ["saved"]
    assert scheduler.started == 1
    # Events not in run_on do nothing.
    save_only = linter(ECHO_STDIN, run_on=("save",), name="save-only")
    scheduler.schedule(save_only, text_provider=lambda: "typed", event="change", **args)
    scheduler.schedule(save_only, text_provider=lambda: "opened", event="open", **args)
    await asyncio.sleep(0.5)
    assert scheduler.started == 1 and len(record.results) == 1
    await scheduler.aclose()


async def test_a_newer_run_kills_the_older(tmp_path: Path) -> None:
    record = Recorder()
    scheduler = LinterScheduler(record)
    pidfile = tmp_path / "pids"
    config = linter(SLOW, str(pidfile))
    args: dict[str, Any] = {"uri": URI, "path": "/w/a.py", "root": tmp_path}
    scheduler.schedule(config, text_provider=lambda: "30 old", event="open", **args)
    await wait_until(lambda: len(pids(pidfile)) == 1)
    scheduler.schedule(config, text_provider=lambda: "0 new", event="save", **args)
    await wait_until(lambda: len(record.results) == 1)
    old, _new = pids(pidfile)
    await wait_until(lambda: gone(old), timeout=5)
    assert record.messages() == ["0 new"]  # the killed run reported nothing
    assert scheduler.last_run(URI, "fake") is not None
    await scheduler.aclose()


async def test_failures_are_reported_with_a_message(tmp_path: Path) -> None:
    record = Recorder()
    scheduler = LinterScheduler(record)
    config = LinterConfig(name="ghost", command=["no-such-linter-4a1f"])
    scheduler.schedule(
        config, uri=URI, path="/w/a.py", text_provider=lambda: "", root=tmp_path, event="open"
    )
    await wait_until(lambda: len(record.results) == 1)
    uri, name, diagnostics, error = record.results[0]
    assert (uri, name, diagnostics) == (URI, "ghost", None)
    assert error is not None and "'no-such-linter-4a1f' not found" in error
    await scheduler.aclose()


async def test_cancel_and_aclose_kill_running_and_drop_pending(tmp_path: Path) -> None:
    record = Recorder()
    scheduler = LinterScheduler(record)
    pidfile = tmp_path / "pids"
    config = linter(SLOW, str(pidfile), debounce=0.2)
    other = "file:///w/b.py"
    scheduler.schedule(
        config, uri=URI, path="/w/a.py", text_provider=lambda: "30", root=tmp_path, event="open"
    )
    scheduler.schedule(
        config, uri=other, path="/w/b.py", text_provider=lambda: "30", root=tmp_path, event="open"
    )
    await wait_until(lambda: len(pids(pidfile)) == 2)
    assert scheduler.running() == 2
    scheduler.schedule(
        config, uri=URI, path="/w/a.py", text_provider=lambda: "0", root=tmp_path, event="change"
    )
    scheduler.cancel(URI)  # didClose: kill the running one, drop the pending change
    await wait_until(lambda: scheduler.running(URI) == 0)
    await asyncio.sleep(0.4)  # past the debounce: the dropped change must not run
    assert len(pids(pidfile)) == 2
    assert scheduler.running(other) == 1
    await scheduler.aclose()
    assert scheduler.running() == 0
    for pid in pids(pidfile):
        await wait_until(lambda pid=pid: gone(pid), timeout=5)
    assert record.results == []


async def test_a_closed_document_is_not_linted(tmp_path: Path) -> None:
    record = Recorder()
    scheduler = LinterScheduler(record)
    scheduler.schedule(
        linter(ECHO_STDIN), uri=URI, path="/w/a.py", text_provider=lambda: None,
        root=tmp_path, event="open",
    )  # fmt: skip
    await asyncio.sleep(0.3)
    assert scheduler.started == 0 and record.results == []
    await scheduler.aclose()
