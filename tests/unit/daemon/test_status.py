"""`lspmux status`: its rendering (lspmux.daemon.status) and its JSON shape."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from lspmux.daemon.server import Daemon
from lspmux.daemon.status import (
    human_bytes,
    human_seconds,
    no_daemon,
    progress_text,
    render,
    render_proxies,
)


def test_units() -> None:
    assert human_bytes(512) == "512 B"
    assert human_bytes(3 * 1024 * 1024) == "3.0 MiB"
    assert human_bytes(None) == "-"
    assert human_seconds(59) == "59s"
    assert human_seconds(61) == "1m01s"
    assert human_seconds(7260) == "2h01m"


def test_render_lists_instances_and_clients() -> None:
    text = render(
        {
            "pid": 42,
            "version": "0.1.0",
            "address": "unix:/run/user/1/lspmux/lspmux.sock",
            "uptime": 65,
            "rss": 50 * 1024 * 1024,
            "instances": [
                {
                    "server": "clangd",
                    "root": "/src/proj",
                    "pid": 4242,
                    "state": "running",
                    "clients": ["client-1", "client-2"],
                    "open_documents": 3,
                    "rss": 100 * 1024 * 1024,
                    "uptime": 30,
                    "progress": {"title": "Indexing", "percentage": 40},
                }
            ],
            "clients": [
                {
                    "id": "client-1",
                    "server": None,
                    "roots": ["/src/proj"],
                    "open_documents": 2,
                    "connected": 12,
                    "state": "running",
                }
            ],
        }
    )
    lines = text.splitlines()
    assert "pid 42" in lines[0] and "50.0 MiB" in lines[0]
    header = next(line for line in lines if line.startswith("SERVER"))
    row = lines[lines.index(header) + 1]
    assert row.split() == [
        "clangd",
        "/src/proj",
        "4242",
        "2",
        "3",
        "100.0",
        "MiB",
        "30s",
        "running",
        "Indexing",
        "40%",
    ]
    assert any(line.startswith("client-1") and "(by file type)" in line for line in lines)


def test_render_an_idle_daemon() -> None:
    text = render({"pid": 1, "instances": [], "clients": []})
    assert "no instances" in text and "no clients" in text


def test_render_says_why_an_extra_instance_exists() -> None:
    first = {"server": "rust-analyzer", "root": "/p", "pid": 1, "clients": ["client-1"]}
    extra = {**first, "pid": 2, "clients": ["client-2"]}
    extra["why"] = "initializationOptions differ from client-1's"
    text = render({"instances": [{**first, "why": None}, extra], "clients": []})
    why = [line for line in text.splitlines() if "another instance" in line]
    assert why == [
        "  rust-analyzer (pid 2) is another instance: initializationOptions differ from client-1's"
    ]


def test_progress_cell() -> None:
    assert progress_text(None) == "-"
    assert progress_text({"title": "Indexing"}) == "Indexing"
    assert progress_text({"title": "Indexing", "message": "3/9 files", "percentage": 33.4}) == (
        "Indexing: 3/9 files 33%"
    )
    assert progress_text({"title": ""}) == "(untitled)"


def test_render_proxies_with_their_servers() -> None:
    answering = {
        "pid": 7,
        "cwd": "/src/p",
        "status": {
            "pid": 7,
            "rss": 30 * 1024 * 1024,
            "uptime": 5,
            "instances": [
                {"server": "ruff", "root": "/src/p", "pid": 8, "state": "running", "rss": 1024}
            ],
            "client": {"roots": ["/src/p"], "state": "running", "open_documents": 2},
        },
    }
    stuck = {"pid": 9, "cwd": "/src/q", "error": "timed out"}
    lines = render_proxies([answering, stuck]).splitlines()
    assert lines[0] == "lspmux proxies: 2"
    assert lines[3].split() == ["7", "/src/p", "1", "2", "30.0", "MiB", "5s", "running"]
    assert lines[4].split()[:2] == ["9", "/src/q"] and "not answering: timed out" in lines[4]
    server = next(line for line in lines if line.startswith("ruff"))
    assert server.split()[:4] == ["ruff", "7", "/src/p", "8"]
    assert render_proxies([]) == "no proxies"


async def test_status_json_has_one_shape_with_a_daemon_or_without(
    running: Daemon, tmp_path: Path
) -> None:
    """`lspmux status --json` prints the daemon's keys and `proxies` whether a daemon answers
    or not (then `pid` is null, and the exit status 1): a script reads one shape."""
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
        "XDG_RUNTIME_DIR": str(tmp_path),  # no proxies there
    }

    def status_json(address: str, *more: str) -> tuple[int, dict[str, Any]]:
        argv = [sys.executable, "-m", "lspmux", "status", "--json", "--connect", address, *more]
        out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
        return out.returncode, json.loads(out.stdout)

    up = await asyncio.to_thread(status_json, str(running.address))
    down = await asyncio.to_thread(status_json, f"unix:{tmp_path / 'none.sock'}")
    assert up[0] == 0 and up[1]["pid"] == os.getpid() and up[1]["proxies"] == []
    assert down == (1, {**no_daemon(f"unix:{tmp_path / 'none.sock'}"), "proxies": []})
    assert set(up[1]) == set(down[1]) == {*running.status(), "proxies"}
    verbose = await asyncio.to_thread(status_json, f"unix:{tmp_path / 'none.sock'}", "-v")
    assert verbose[1]["documents"] == [] and set(verbose[1]) == {*down[1], "documents"}
