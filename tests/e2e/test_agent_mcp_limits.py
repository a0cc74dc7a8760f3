"""`lspmux mcp` under a message larger than it reads (16 MiB): the message is answered with an
error, and the server goes on serving (one such line used to kill it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.agent_harness import REPO, WORKSPACE, copy_project
from tests.e2e.conftest import proxy_env

pytestmark = pytest.mark.e2e


def test_a_17_mib_line_is_refused_and_the_server_lives_on(tmp_path: Path) -> None:
    root = copy_project(WORKSPACE, tmp_path)
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
         "params": {"name": "hover", "arguments": {"at": "x" * (17 << 20)}}},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "lspmux", "mcp", "--private", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**proxy_env(tmp_path), "PYTHONPATH": str(REPO)},
        cwd=root,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[object, dict[str, object]] = {}
    try:
        for line in lines:
            proc.stdin.write(json.dumps(line).encode() + b"\n")
            proc.stdin.flush()
            if "id" in line:  # one at a time: each answer before the next question
                while line["id"] not in answers:
                    out = proc.stdout.readline()
                    assert out, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
                    msg = json.loads(out)
                    answers[msg.get("id")] = msg
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    error = answers[7]["error"]
    assert isinstance(error, dict) and error["code"] == -32600, answers[7]
    assert "MiB was refused" in error["message"]
    result = answers[8]["result"]
    assert isinstance(result, dict) and any(t["name"] == "hover" for t in result["tools"])
