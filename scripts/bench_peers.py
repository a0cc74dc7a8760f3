"""The other LSP proxies `scripts/bench.py --peers` measures beside lspmux, in their own venv.

They are a benchmark's comparison, not a dependency: lsp-devtools pulls pygls 2 and textual,
so they live in `.bench-peers/` at the repo root (git-ignored), made with `python -m venv` and
pip of the pinned versions, reused while those versions are installed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".bench-peers"
#: PyPI distribution → pinned version.
PINS = {"rassumfrassum": "0.3.5", "lsp-devtools": "0.4.0"}


class PeerInstallError(Exception):
    """The peers' venv could not be made; the message says which step and what to run."""


def _python() -> Path:
    return VENV / "bin" / "python"


def installed() -> dict[str, str]:
    """Version of each pinned distribution in the venv ('' when missing)."""
    if not _python().exists():
        return {name: "" for name in PINS}
    code = (
        "import importlib.metadata as m, sys\n"
        "for n in sys.argv[1:]:\n"
        "    try: print(m.version(n))\n"
        "    except m.PackageNotFoundError: print('')\n"
    )
    out = subprocess.run(
        [str(_python()), "-c", code, *PINS], capture_output=True, text=True, timeout=60
    )
    return dict(zip(PINS, out.stdout.splitlines(), strict=False))


def ensure() -> dict[str, str]:
    """Make or reuse `.bench-peers/` with the pinned versions; return them."""
    if installed() == PINS:
        return dict(PINS)
    specs = [f"{name}=={version}" for name, version in PINS.items()]
    steps = [
        [sys.executable, "-m", "venv", str(VENV)],
        [str(_python()), "-m", "pip", "install", "--quiet", *specs],
    ]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PeerInstallError(f"{' '.join(step)} failed: {exc}") from exc
        if done.returncode != 0:
            raise PeerInstallError(
                f"installing the peers failed at `{' '.join(step)}` (exit {done.returncode}):\n"
                f"{done.stderr.strip()[-2000:]}\nRun it by hand to see why, or drop --peers."
            )
    got = installed()
    if got != PINS:
        raise PeerInstallError(f"{VENV} holds {got}, expected {PINS}; remove it and rerun")
    return dict(PINS)


def commands(server: list[str]) -> dict[str, list[str]]:
    """The argv of each peer wrapping `server`, quiet on stderr."""
    bin_ = VENV / "bin"
    return {
        # rass logs every message at its default level 'event': silence it.
        "rass": [str(bin_ / "rass"), "--log-level", "silent", "--", *server],
        # The agent connects to an inspector on localhost:8765 and retries in the background
        # when none listens; the messages still flow (see docs/benchmarks.md's note).
        "agent": [str(bin_ / "lsp-devtools"), "agent", "--", *server],
    }
