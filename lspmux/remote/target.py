"""Where the far side runs, and how a command gets there: OpenSSH or any `--remote-exec`.

Nothing here moves bytes itself: `ssh` (its keys, agent, ~/.ssh/config, jump hosts and
ControlMaster all apply) or the user's command (`docker exec -i C`, `kubectl exec -i POD --`)
gives stdio on the other side, and the relay talks LSP through it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

#: The ssh command (split like a shell would); tests point it at their own config file.
SSH_ENV = "LSPMUX_SSH"
#: Options that make ssh fit a stdio transport: no password prompt the editor cannot answer,
#: no terminal, a host that does not answer given up after 15 s, and a dead link noticed
#: within about 45 s.
SSH_OPTIONS = (
    "-T",
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=15",
    "-o",
    "ServerAliveInterval=15",
    "-o",
    "ServerAliveCountMax=3",
)


#: A shell function printing a far file's "SIZE MTIME INODE" (cheap: no bytes read), so that a
#: local copy can tell that the file changed.
_STAMP = (
    "stamp() { stat -L -c '%s %Y %i' -- \"$1\" 2>/dev/null || "
    "stat -L -f '%z %m %i' -- \"$1\" 2>/dev/null; }; "
)
_READ = _STAMP + (
    's=$(stamp "$1") || { echo "no such file: $1" >&2; exit 1; }; echo "$s"; exec cat -- "$1"'
)
_STAMPS = _STAMP + 'for f in "$@"; do stamp "$f" || echo -; done'


class TargetError(ValueError):
    """A `--remote` / `--remote-exec` that cannot be used, said so the user can fix it."""


@dataclass(frozen=True)
class Target:
    """A way to run commands on the far side."""

    #: argv prefix (ssh … host, or the --remote-exec words)
    prefix: tuple[str, ...]
    #: for messages and the mirror directory: "user@host:port" or the exec command
    label: str
    #: the project's path there (from the ssh:// URL), when given
    remote_root: str | None = None
    #: whether the far command is one shell string (ssh) or argv words (exec)
    shell: bool = False
    lspmux: str = "lspmux"

    def command(self, words: Sequence[str], *, cwd: str | None = None) -> list[str]:
        """argv that runs `words` on the far side (in `cwd` there, when given)."""
        if self.shell:
            line = "exec " + shlex.join(words)
            if cwd:
                line = f"cd {shlex.quote(cwd)} && {line}"
            return [*self.prefix, line]
        return [*self.prefix, *words]

    def client_command(self, client_args: Sequence[str]) -> list[str]:
        """argv of the far `lspmux client` with the options the user gave it."""
        return self.command([self.lspmux, "client", *client_args], cwd=self.remote_root)

    def read_command(self, path: str) -> list[str]:
        """argv that prints the far file `path`'s stamp (`stamps_command`) on a line of its
        own, then its bytes; it fails (without output) when the file cannot be read."""
        return self.command(["sh", "-c", _READ, "sh", path])

    def stamps_command(self, paths: Sequence[str]) -> list[str]:
        """argv that prints one line per far path: "SIZE MTIME INODE", or "-" when there is no
        such file (GNU stat, else BSD's: a Linux box or a Mac)."""
        return self.command(["sh", "-c", _STAMPS, "sh", *paths])

    def mirror_name(self) -> str:
        """A directory name for this target's copies of far files."""
        return re.sub(r"[^A-Za-z0-9@._-]+", "_", self.label).strip("_")[:80] or "remote"


def parse_ssh_url(
    url: str, *, lspmux: str = "lspmux", environ: Mapping[str, str] = os.environ
) -> Target:
    """`ssh://[user@]host[:port][/path]` as a Target running ssh."""
    parts = urlsplit(url)
    if parts.scheme != "ssh" or not parts.hostname:
        raise TargetError(
            f"--remote {url!r}: expected ssh://[user@]host[:port]/path/to/project "
            "(or use --remote-exec 'COMMAND' for another transport)"
        )
    try:
        port = parts.port
    except ValueError as exc:
        raise TargetError(f"--remote {url!r}: the port is not a number") from exc
    host = parts.hostname
    login = f"{unquote(parts.username)}@{host}" if parts.username else host
    ssh = shlex.split(environ.get(SSH_ENV) or "ssh")
    prefix = [*ssh, *SSH_OPTIONS]
    if port is not None:
        prefix += ["-p", str(port)]
    prefix += [login, "--"]
    path = unquote(parts.path) or None
    if path is not None and path != "/":
        path = path.rstrip("/")
    label = login + (f":{port}" if port is not None else "")
    return Target(tuple(prefix), label, remote_root=path, shell=True, lspmux=lspmux)


def parse_exec(command: str, *, lspmux: str = "lspmux") -> Target:
    """`--remote-exec 'docker exec -i C'`: the words that run a command there, with stdio."""
    words = shlex.split(command)
    if not words:
        raise TargetError("--remote-exec is empty: give the command that runs a program there")
    return Target(tuple(words), "exec " + command, shell=False, lspmux=lspmux)
