"""Installing one server: its pinned packages into its own folder, its executables linked.

A server's folder, `servers/NAME` under lspmux's data folder, holds `venv/` (PyPI packages, a
venv made by the Python lspmux runs on) and/or `node_modules/` (npm packages, `npm install
--prefix`), and `installed.json`, written last: what was installed, when complete. The
executables the entry runs (`command`, `project_check`) are linked into `bin/`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from lspmux.config.model import LinterConfig, ServerConfig
from lspmux.install.prefix import Package, bin_dir, parse_recipe, server_dir

Entry = ServerConfig | LinterConfig
MANIFEST = "installed.json"
#: How many lines of a failed pip/npm run's output the error shows.
OUTPUT_TAIL = 15


class InstallError(Exception):
    """An install that failed, with what to do about it."""


@attrs.frozen
class Installed:
    name: str
    packages: tuple[str, ...]
    executables: tuple[str, ...]  # paths in bin_dir()


def packages(entry: Entry) -> list[Package]:
    return [parse_recipe(p) for p in entry.package]


def installed(name: str) -> Installed | None:
    """What `lspmux install` installed for `name` (None: nothing, or an unfinished install)."""
    try:
        data = json.loads((server_dir(name) / MANIFEST).read_text())
        return Installed(name, tuple(data["packages"]), tuple(data["executables"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def up_to_date(entry: Entry) -> bool:
    done = installed(entry.name)
    return done is not None and done.packages == tuple(str(p) for p in packages(entry))


def _executables(entry: Entry) -> list[str]:
    """The executable names an entry runs: its command's, and its project check's."""
    names = [entry.command[0]] if entry.command else []
    check = getattr(entry, "project_check", ())
    if check and check[0] not in names:
        names.append(check[0])
    return [n for n in names if os.sep not in n and not n.startswith("$")]


def _run(argv: Sequence[str], what: str, env: dict[str, str] | None = None) -> None:
    try:
        proc = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=env,
            check=False,
        )
    except OSError as exc:
        raise InstallError(f"{what}: cannot run {argv[0]}: {exc}") from None
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-OUTPUT_TAIL:]
        raise InstallError(
            f"{what} failed (`{' '.join(argv)}` exited with code {proc.returncode}):\n  "
            + "\n  ".join(tail)
        )


def _pypi(folder: Path, pkgs: list[Package]) -> Path:
    venv = folder / "venv"
    what = f"creating a Python environment in {venv}"
    try:
        _run([sys.executable, "-m", "venv", str(venv)], what)
    except InstallError as exc:
        raise InstallError(
            f"{exc}\nlspmux installs PyPI servers into a venv of the Python it runs on "
            f"({sys.executable}); on Debian/Ubuntu `venv` needs `apt install python3-venv`."
        ) from None
    python = venv / "bin" / "python"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    specs = [p.spec for p in pkgs]
    _run(
        [str(python), "-m", "pip", "install", "--quiet", *specs],
        f"pip install {' '.join(specs)}",
        env,
    )
    return venv / "bin"


def _npm(folder: Path, pkgs: list[Package]) -> Path:
    npm = shutil.which("npm")
    names = " ".join(p.spec for p in pkgs)
    if npm is None:
        raise InstallError(
            f"{names} comes from npm, and `npm` is not on PATH: install Node.js with npm "
            "(https://nodejs.org, or `apt install npm`, `brew install node`), then run "
            "this again."
        )
    _run(
        [npm, "install", "--prefix", str(folder), "--no-fund", "--no-audit", "--save-exact"]
        + [p.spec for p in pkgs],
        f"npm install {names}",
    )
    return folder / "node_modules" / ".bin"


def install(entry: Entry, say: Callable[[str], None] = print) -> Installed:
    """Install `entry`'s packages into its own folder (replacing an earlier install) and link
    its executables into `bin_dir()`."""
    pkgs = packages(entry)
    if not pkgs:
        hint = f"; install it yourself: {entry.install}" if entry.install else ""
        raise InstallError(f"{entry.name}: lspmux has no package to install for it{hint}")
    folder = server_dir(entry.name)
    say(f"installing {entry.name} ({', '.join(map(str, pkgs))}) into {folder}")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    try:
        bins = []
        if pypi := [p for p in pkgs if p.registry == "pypi"]:
            bins.append(_pypi(folder, pypi))
        if npm := [p for p in pkgs if p.registry == "npm"]:
            bins.append(_npm(folder, npm))
        links = _link(entry, bins)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    done = Installed(entry.name, tuple(map(str, pkgs)), tuple(links))
    manifest = {"packages": list(done.packages), "executables": list(done.executables)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return done


def _link(entry: Entry, bins: list[Path]) -> list[str]:
    target = bin_dir()
    target.mkdir(parents=True, exist_ok=True)
    links = []
    for exe in _executables(entry):
        found = next((b / exe for b in bins if os.access(b / exe, os.X_OK)), None)
        if found is None:
            if exe == entry.command[0]:
                raise InstallError(
                    f"{entry.name}: the packages installed, but none of them has the "
                    f"executable {exe!r} its command runs (looked in "
                    f"{', '.join(map(str, bins))}); the `package` field names the wrong package"
                )
            continue  # a project check from elsewhere (cargo, go)
        link = target / exe
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(found)
        links.append(str(link))
    return links


def uninstall(name: str) -> None:
    done = installed(name)
    for link in done.executables if done else ():
        Path(link).unlink(missing_ok=True)
    shutil.rmtree(server_dir(name), ignore_errors=True)
