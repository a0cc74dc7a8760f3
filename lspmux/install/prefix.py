"""Where `lspmux install` puts servers, and the parsed form of a `package` recipe.

Stdlib only: `installed_executable` runs for every command lspmux resolves.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from lspmux import dirs

REGISTRIES = ("pypi", "npm")
#: `pypi:NAME==VERSION` or `npm:NAME@VERSION` (an npm name may be scoped: `@biomejs/biome`).
_RECIPE = re.compile(
    r"^(?:pypi:(?P<pypi>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<pypi_version>[A-Za-z0-9.+!_-]+)"
    r"|npm:(?P<npm>(?:@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*)@(?P<npm_version>[A-Za-z0-9.+_-]+))$"
)
RECIPE_EXAMPLE = '"pypi:ruff==0.17.6" or "npm:pyright@1.1.414"'


class Package(NamedTuple):
    """One pinned package of a recipe."""

    registry: str  # "pypi" | "npm"
    name: str
    version: str

    @property
    def spec(self) -> str:
        """What pip or npm is given: `ruff==0.17.6`, `pyright@1.1.414`."""
        sep = "==" if self.registry == "pypi" else "@"
        return f"{self.name}{sep}{self.version}"

    def __str__(self) -> str:
        return f"{self.registry}:{self.spec}"


def parse_recipe(text: str) -> Package:
    """A `package` value as a Package; ValueError saying what a recipe looks like."""
    match = _RECIPE.match(text.strip())
    if match is None:
        raise ValueError(
            f"{text!r} is not a pinned package: expected {RECIPE_EXAMPLE} "
            "(the registry, the package's name, and one exact version)"
        )
    if match["pypi"]:
        return Package("pypi", match["pypi"], match["pypi_version"])
    return Package("npm", match["npm"], match["npm_version"])


def data_dir() -> Path:
    """`$XDG_DATA_HOME/lspmux`, or `~/.local/share/lspmux` (lspmux.dirs)."""
    return dirs.data_dir()


def bin_dir() -> Path:
    """The folder of the installed servers' executables, searched before PATH."""
    return data_dir() / "bin"


def server_dir(name: str) -> Path:
    return data_dir() / "servers" / name


def installed_executable(exe: str) -> str | None:
    """`exe` as `lspmux install` put it in `bin_dir()`, if it is there and runs."""
    candidate = os.path.join(bin_dir(), exe)
    return candidate if os.access(candidate, os.X_OK) else None


def install_hint(name: str, package: Sequence[str], install: str | None) -> str | None:
    """The command that installs a server or linter: `lspmux install NAME` when the table has
    a recipe for it, else the `install` text (by hand), else None."""
    if package:
        return f"lspmux install {name}"
    return install
