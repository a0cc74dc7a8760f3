"""A real OpenSSH server on 127.0.0.1 for the remote tests, everything in the test's temp dir.

`sshd -D -e -f CONFIG` on a free port with a generated host key; a generated user key (no
passphrase) is the only way in (`AuthorizedKeysFile` in the temp dir, `StrictModes no`); the
client side is an `ssh -F CONFIG` file whose `UserKnownHostsFile` (in the temp dir) already
holds the host key, so nothing asks and nothing outside the temp dir is read or written.

`remote_lspmux` writes the far side's `lspmux` command: sshd gives a login a fresh
environment, so a wrapper script sets what the test's daemon needs (this checkout on
PYTHONPATH, the venv's tools on PATH, private XDG folders) and runs the venv's Python.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SSHD = "/usr/sbin/sshd"


class Sshd:
    """The running sshd; `stop()` ends its listener (sessions it opened live on, as with a
    real sshd restart), `start()` listens again on the same port."""

    def __init__(self, port: int, base: Path, client_config: Path, config: Path) -> None:
        self.port = port
        self.dir = base
        self.client_config = client_config
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def ssh(self) -> str:
        """The ssh command for LSPMUX_SSH."""
        return f"ssh -F {shlex.quote(str(self.client_config))}"

    def url(self, path: Path | str) -> str:
        return f"ssh://127.0.0.1:{self.port}{path}"

    def start(self) -> None:
        log = self.dir / "sshd.log"
        with open(log, "ab") as err:
            self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.config)], stderr=err)
        deadline = time.monotonic() + 10
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"sshd exited: {log.read_text()}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1),
            ):
                return
            if time.monotonic() > deadline:
                raise AssertionError("sshd did not listen within 10 s")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


def require_sshd() -> str:
    """sshd's path; skips without it (under CI=true a skip fails: setup-tests installs it)."""
    if not os.access(SSHD, os.X_OK) or shutil.which("ssh") is None:
        pytest.skip("openssh-server is not installed (scripts/setup-tests installs it)")
    return SSHD


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "lspmux-test", "-f", str(path)],
        check=True,
    )
    return path.with_suffix(".pub").read_text().strip()


@contextlib.contextmanager
def running_sshd(base: Path) -> Iterator[Sshd]:
    require_sshd()
    base.mkdir(parents=True, exist_ok=True)
    host_pub = _keygen(base / "host_key")
    user_pub = _keygen(base / "user_key")
    (base / "authorized_keys").write_text(user_pub + "\n")
    port = _free_port()
    config = base / "sshd_config"
    config.write_text(
        f"""Port {port}
ListenAddress 127.0.0.1
HostKey {base / "host_key"}
PidFile {base / "sshd.pid"}
AuthorizedKeysFile {base / "authorized_keys"}
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
"""
    )
    host_type, host_key = host_pub.split()[:2]
    (base / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_type} {host_key}\n")
    client = base / "ssh_config"
    client.write_text(
        f"""Host *
  User {getpass.getuser()}
  IdentityFile {base / "user_key"}
  IdentitiesOnly yes
  UserKnownHostsFile {base / "known_hosts"}
  StrictHostKeyChecking yes
  BatchMode yes
  LogLevel ERROR
"""
    )
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege-separation folder
    server = Sshd(port, base, client, config)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def remote_lspmux(base: Path, env: Mapping[str, str]) -> Path:
    """The far side's `lspmux`: this checkout, the venv's Python and tools, `env`'s XDG
    folders (the remote daemon's runtime, config and cache)."""
    keep = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "PATH")
    lines = ["#!/bin/sh"]
    lines += [f"export {k}={shlex.quote(env[k])}" for k in keep if k in env]
    lines.append(f"export PYTHONPATH={shlex.quote(str(REPO))}")
    lines.append(f'exec {shlex.quote(sys.executable)} -m lspmux "$@"')
    script = base / "remote-lspmux"
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o755)
    return script
