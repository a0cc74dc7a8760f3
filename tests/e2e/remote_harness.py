"""Shared setup of the remote tests: one project held at two different paths (the local copy
the editor sees, the remote copy the servers read), a real sshd, and the far `lspmux`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import proxy_env
from tests.sshd import Sshd, remote_lspmux, running_sshd

WORKSPACE = Path(__file__).resolve().parent.parent / "data" / "workspace"
USE_PY = """\
from app import Greeter


def hello() -> str:
    return Greeter("you").greet()
"""


@dataclass
class RemoteSetup:
    local: Path  # the project as the editor sees it
    remote: Path  # the same project where the servers run
    sshd: Sshd
    lspmux: Path  # the far side's lspmux command
    env: dict[str, str]  # the local side's environment (LSPMUX_SSH set)
    remote_env: dict[str, str]

    def client_argv(self, *extra: str) -> list[str]:
        import sys

        return [
            sys.executable, "-m", "lspmux", "client", "--remote", self.sshd.url(self.remote),
            "--remote-lspmux", str(self.lspmux), *extra,
        ]  # fmt: skip


@pytest.fixture
def remote_setup(tmp_path: Path) -> Iterator[RemoteSetup]:
    local = tmp_path / "laptop" / "src" / "project"
    remote = tmp_path / "box" / "srv" / "work" / "sample"
    for root in (local, remote):
        shutil.copytree(WORKSPACE, root)
        (root / "use.py").write_text(USE_PY)
    env = proxy_env(tmp_path / "local-xdg")
    remote_env = proxy_env(tmp_path / "remote-xdg")
    with running_sshd(tmp_path / "sshd") as sshd:
        env["LSPMUX_SSH"] = sshd.ssh
        yield RemoteSetup(
            local.resolve(), remote.resolve(), sshd,
            remote_lspmux(tmp_path / "sshd", remote_env), env, remote_env,
        )  # fmt: skip
        _stop_remote_daemon(remote_env)


def _stop_remote_daemon(remote_env: dict[str, str]) -> None:
    """The far daemon (started by the far `lspmux client`) stops with the test."""
    import psutil

    runtime = remote_env["XDG_RUNTIME_DIR"]
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "server" in cmd and any(runtime in word for word in cmd):
            proc.terminate()
            try:
                proc.wait(10)
            except psutil.TimeoutExpired:
                proc.kill()
