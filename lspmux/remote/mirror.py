"""Local copies of far files outside every mapped root (a crate under ~/.cargo/registry, the
far Python's stubs), so that an editor can open what a definition names.

Each far file is read once per relay through the transport (`ssh … cat -- PATH`, or the
`--remote-exec` command with `cat`) into `$XDG_CACHE_HOME/lspmux/remote/<target>/<far path>`,
read-only; an answer naming such files reaches the editor once their copies exist (or failed,
which is logged: the answer still arrives).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from lspmux.remote.mapping import PathMap
from lspmux.remote.target import Target

log = logging.getLogger("lspmux.remote")


def mirror_root(target: Target, environ: Any = os.environ) -> str:
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "lspmux" / "remote" / target.mirror_name())


class Mirror:
    def __init__(self, target: Target) -> None:
        self.target = target
        self.copies: dict[str, asyncio.Future[None]] = {}  # far path -> its copy, made once

    async def ensure(self, pmap: PathMap, paths: list[str]) -> None:
        """Copies of the far `paths` (each made once; a failure is logged)."""
        tasks = []
        for path in paths:
            if path not in self.copies:
                self.copies[path] = asyncio.ensure_future(self._copy(pmap, path))
            tasks.append(self.copies[path])
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, Exception):
                log.warning("copy from %s failed: %s", self.target.label, outcome)

    async def _copy(self, pmap: PathMap, remote: str) -> None:
        local = pmap.local_path(remote, mirror=True)
        if local is None or pmap.fallback is None or not local.startswith(pmap.fallback + "/"):
            return  # (a normalized far path always lands inside the mirror)
        proc = await asyncio.create_subprocess_exec(
            *self.target.read_command(remote),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        data, err = await proc.communicate()
        if proc.returncode != 0:
            log.warning("cannot copy %s from %s: %s", remote, self.target.label, err.decode())
            return
        path = Path(local)
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            path.chmod(0o600)
        path.write_bytes(data)
        path.chmod(0o444)  # a copy: edits belong on the far side
