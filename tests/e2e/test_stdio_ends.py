"""`lspmux proxy` on stdin/stdout that are not pipes: `< /dev/null`, `> file`, a script of
requests in a file. It used to die with SIGABRT (uvloop refuses a character device for a pipe
transport); now it bridges such ends and answers everything it was asked before it exits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from lspmux.wire.framing import FrameParser, frame
from tests.e2e.conftest import proxy_env

pytestmark = pytest.mark.e2e


def framed(*messages: dict[str, object]) -> bytes:
    return b"".join(frame(orjson.dumps(msg)) for msg in messages)


def answers(data: bytes) -> list[dict[str, object]]:
    return [orjson.loads(body) for body in FrameParser().feed(data)]


def proxy(tmp_path: Path, stdin: object, stdout: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "lspmux", "proxy"],
        stdin=stdin,  # type: ignore[arg-type]
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        env=proxy_env(tmp_path),
        cwd=tmp_path,
        timeout=60,
    )


def test_stdin_at_dev_null_exits_cleanly(tmp_path: Path) -> None:
    with open("/dev/null", "rb") as null:
        run = proxy(tmp_path, null, subprocess.PIPE)
    assert run.returncode == 1, run.stderr  # the input ended without `exit`: 1, as LSP says
    assert b"Fatal Python error" not in run.stderr and b"Traceback" not in run.stderr


def test_an_empty_pipe_in_and_a_file_out_exit_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with out.open("wb") as sink:
        run = proxy(tmp_path, subprocess.DEVNULL, sink)
    assert run.returncode == 1, run.stderr
    assert b"Fatal Python error" not in run.stderr
    assert out.read_bytes() == b""


def test_a_script_of_requests_in_a_file_is_answered_into_a_file(tmp_path: Path) -> None:
    """initialize, shutdown and exit read in one go, then the end of the input: shutdown is
    still answered, and the exit code is exit's (0), not a disconnect's."""
    script = tmp_path / "requests.lsp"
    init = {"capabilities": {}, "rootUri": tmp_path.as_uri()}
    script.write_bytes(
        framed(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        )
    )
    out = tmp_path / "answers.lsp"
    with script.open("rb") as source, out.open("wb") as sink:
        run = proxy(tmp_path, source, sink)
    assert run.returncode == 0, run.stderr
    got = answers(out.read_bytes())
    assert [a.get("id") for a in got] == [1, 2], got
    assert "capabilities" in got[0]["result"]  # type: ignore[operator]
    assert got[1]["result"] is None
