"""`lspmux proxy` as a process, fed what no editor sends: lengths that are no lengths, messages
over the maximum size; and a repository whose lspmux.toml names its own server, before and
after `lspmux trust`."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import eventually
from tests.e2e.daemon_harness import SCRIPTED, frame, read_message, received
from tests.e2e.test_faults import hover, open_scripted

ROOT = Path(__file__).resolve().parents[2]


def env_for(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg-config")
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")  # the trust database
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")
    env["PYTHONPATH"] = str(ROOT)
    return env


class RawProxy:
    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log

    @classmethod
    async def start(cls, tmp_path: Path, cwd: Path, *extra: str) -> RawProxy:
        log = tmp_path / "proxy.log"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lspmux",
            "proxy",
            "--log-file",
            str(log),
            *extra,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env_for(tmp_path),
            cwd=cwd,
        )
        return cls(proc, log)

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    async def request(self, msg_id: int, method: str, params: Any) -> dict[str, Any]:
        self.send_bytes(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        assert self.proc.stdout is not None
        while True:
            msg = await read_message(self.proc.stdout, 30)
            if msg.get("id") == msg_id and "method" not in msg:
                return msg
            if msg.get("method") == "window/showMessage":
                SHOWN.append(msg["params"]["message"])

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


#: window/showMessage texts the raw proxies showed their client.
SHOWN: list[str] = []


async def test_a_length_of_4301_digits_is_logged_and_the_proxy_lives_on(tmp_path: Path) -> None:
    proxy = await RawProxy.start(tmp_path, tmp_path)
    try:
        proxy.send_bytes(b"Content-Length: " + b"7" * 4301 + b"\r\n\r\n")
        reply = await proxy.request(1, "initialize", {"capabilities": {}, "processId": None})
        assert "capabilities" in reply["result"]
        assert proxy.proc.returncode is None
        assert "bad frame: Content-Length has 4301 digits" in proxy.log.read_text()
    finally:
        await proxy.stop()


@pytest.mark.parametrize("length", [b"1000000000000", b"9223372036854775808"])
async def test_a_length_over_the_maximum_gets_an_error_and_the_proxy_ends(
    tmp_path: Path, length: bytes
) -> None:
    proxy = await RawProxy.start(tmp_path, tmp_path)
    try:
        await proxy.request(1, "initialize", {"capabilities": {}, "processId": None})
        before = psutil.Process(proxy.proc.pid).memory_info().rss
        proxy.send_bytes(b"Content-Length: " + length + b"\r\n\r\n")
        with_chunk = b"x" * (1024 * 1024)
        assert proxy.proc.stdout is not None
        reply = await read_message(proxy.proc.stdout, 30)
        assert reply["id"] is None and "maximum message size" in reply["error"]["message"]
        grown = 0
        try:  # streaming on does not grow it (1:1 before): it reads nothing more
            for _ in range(32):
                proxy.send_bytes(with_chunk)
                await asyncio.wait_for(proxy.proc.stdin.drain(), 1)  # type: ignore[union-attr]
                if proxy.proc.returncode is None:
                    rss = psutil.Process(proxy.proc.pid).memory_info().rss
                    grown = max(grown, rss - before)
        except (ConnectionError, TimeoutError, psutil.NoSuchProcess):
            pass
        assert grown < 16 * 1024 * 1024
        code = await asyncio.wait_for(proxy.proc.wait(), 30)  # never waits forever
        assert code is not None
        assert "exceeds the maximum message size" in proxy.log.read_text()
    finally:
        await proxy.stop()


async def test_max_message_size_is_configurable(tmp_path: Path) -> None:
    config = tmp_path / "limits.toml"
    config.write_text("max_message_size = 4096\n")
    proxy = await RawProxy.start(tmp_path, tmp_path, "--config", str(config))
    try:
        await proxy.request(1, "initialize", {"capabilities": {}, "processId": None})
        big = {"jsonrpc": "2.0", "method": "x/y", "params": {"blob": "x" * 5000}}
        proxy.send_bytes(frame(big))
        assert proxy.proc.stdout is not None
        reply = await read_message(proxy.proc.stdout, 30)
        assert "4096" in reply["error"]["message"]
        await asyncio.wait_for(proxy.proc.wait(), 30)
    finally:
        await proxy.stop()


# -- trust ------------------------------------------------------------------------------------


async def _hover_reaches_the_scripted_server(tmp_path: Path, repo: Path, log: Path) -> bool:
    proxy = await RawProxy.start(tmp_path, repo)
    try:
        reply = await proxy.request(
            1, "initialize", {"capabilities": {}, "processId": None, "rootUri": repo.as_uri()}
        )
        assert "capabilities" in reply["result"], reply
        proxy.send_bytes(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        uri = (repo / "a.fault").as_uri()
        proxy.send_bytes(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {
                        "textDocument": {"uri": uri, "languageId": "x", "version": 1, "text": "x"}
                    },
                }
            )
        )
        await proxy.request(
            2,
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        )
        # the hover is answered after the server's answer (an error, in "fail" mode) when the
        # server runs, at once when it does not
        return bool(received(log))
    finally:
        await proxy.stop()


async def test_a_repository_runs_its_own_server_only_after_lspmux_trust(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    log = tmp_path / "scripted.jsonl"
    (repo / "lspmux.toml").write_text(
        f"""
[servers.repo-server]
command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "fail"]
file_types = [".fault"]
env = {{ SCRIPTED_LOG = {json.dumps(str(log))} }}
"""
    )
    SHOWN.clear()
    assert not await _hover_reaches_the_scripted_server(tmp_path, repo, log)
    text = (tmp_path / "proxy.log").read_text()
    assert "is not trusted" in text and "lspmux trust" in text
    # The editor is told too (a window/showMessage before the initialize answer).
    assert any("lspmux trust" in m for m in SHOWN), SHOWN

    env = env_for(tmp_path)
    doctor = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "doctor",
        env=env,
        cwd=repo,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await doctor.communicate()
    assert b"is NOT trusted" in out and b"servers.repo-server" in out

    trust = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "trust",
        str(repo),
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await trust.communicate()
    assert trust.returncode == 0 and str(repo / "lspmux.toml").encode() in out
    assert await _hover_reaches_the_scripted_server(tmp_path, repo, log)

    # One changed byte: untrusted again.
    log.unlink()
    with (repo / "lspmux.toml").open("a") as fh:
        fh.write("\n")
    assert not await _hover_reaches_the_scripted_server(tmp_path, repo, log)


async def test_a_server_answer_over_the_maximum_fails_fast_and_the_server_restarts(
    proxy_factory: Any, tmp_path: Path
) -> None:
    proxy, uri, log = await open_scripted(proxy_factory, tmp_path, "huge", timeout=120)
    started = asyncio.get_running_loop().time()
    with pytest.raises(JsonRpcException) as info:
        await hover(proxy, uri, timeout=60)
    assert asyncio.get_running_loop().time() - started < 30  # not the 120 s request timeout
    assert "scripted" in str(info.value)
    text = (tmp_path / "lspmux.log").read_text()
    assert "exceeds the maximum message size" in text
    opens = await eventually(  # restarted, and given the open document again
        lambda: [m for m in received(log) if m.get("method") == "textDocument/didOpen"][1:],
        "the document replayed to the restarted server",
    )
    assert opens[-1]["params"]["textDocument"]["text"] == "hello\n"


async def test_a_client_that_does_not_read_while_a_server_floods_its_log_costs_little(
    tmp_path: Path,
) -> None:
    """A server sends 100 MiB of window/logMessage while the client reads nothing: the proxy
    keeps what the client must get (the hover's answer) and drops the flood past 1 MiB queued;
    it used to queue all of it (296 MiB after 20 s, never given back)."""
    log = tmp_path / "scripted.log"
    config = tmp_path / "flood.toml"
    config.write_text(
        "[servers.scripted]\n"
        f'command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "flood"]\n'
        'file_types = [".fault"]\n'
        f"env = {{ SCRIPTED_LOG = {json.dumps(str(log))} }}\n"
    )
    (tmp_path / "a.fault").write_text("hello\n")
    proxy = await RawProxy.start(tmp_path, tmp_path, "--config", str(config))
    try:
        caps = {"window": {"workDoneProgress": True}}
        await proxy.request(1, "initialize", {"capabilities": caps, "rootUri": tmp_path.as_uri()})
        uri = (tmp_path / "a.fault").as_uri()
        doc = {"uri": uri, "languageId": "fault", "version": 1, "text": "hello\n"}
        proxy.send_bytes(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        proxy.send_bytes(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": doc},
                }
            )
        )
        before = psutil.Process(proxy.proc.pid).memory_info().rss
        where = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}}
        # The hover, and then nothing is read until the server has flooded and answered.
        proxy.send_bytes(
            frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": where})
        )
        await eventually(
            lambda: any("flooded" in m for m in received(log)), "the flood sent", timeout=120
        )
        grown = psutil.Process(proxy.proc.pid).memory_info().rss - before
        assert grown < 32 * 1024 * 1024, f"the proxy grew by {grown >> 20} MiB"
        # Reading again, the client gets its answer: nothing it must get was dropped.
        reply = await proxy.request(3, "textDocument/hover", where)
        assert reply["result"]["contents"]["value"] == "scripted hover"
    finally:
        await proxy.stop()
