"""`lspmux doctor`: which configured servers and linters a project needs, and whether they work.

Looks at the files of the project (a bounded walk that skips VCS, dependency and build
folders), finds the enabled servers and linters whose file types occur in it, and for each says
where its executable was found (PATH, then — in a trusted folder — the project's
node_modules/.bin, .venv/bin, …) or that it is missing, with how to install it, and whether the
project's own configuration and executables are trusted (`lspmux trust`). Linters get a smoke check: `--version` must run
within a few seconds. Nothing is changed; the report is for people.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import attrs

from lspmux.config.model import Config, LinterConfig, ServerConfig, project_executable

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", "target", "build"}
    | {"dist", ".tox", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tools", ".build"}
)
MAX_FILES = 20000
SMOKE_TIMEOUT = 5.0


@attrs.frozen
class Check:
    """The verdict on one server or linter."""

    kind: str  # "server" | "linter"
    name: str
    files: int  # files of the project it applies to
    path: str | None  # the executable found, or None
    problem: str | None = None  # what is wrong, for the user
    version: str | None = None

    @property
    def ok(self) -> bool:
        return self.path is not None and self.problem is None


def project_files(root: Path, limit: int = MAX_FILES) -> list[str]:
    """Up to `limit` file paths under `root`, skipping hidden, VCS, dependency and build
    folders."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            found.append(os.path.join(folder, name))
            if len(found) >= limit:
                return found
    return found


def _count(entry: ServerConfig | LinterConfig, samples: dict[str, tuple[str, int]]) -> int:
    return sum(n for path, n in samples.values() if entry.matches(path))


def diagnose(config: Config, root: Path, *, smoke: bool = True) -> list[Check]:
    """A Check for each enabled server and linter whose file types occur under `root`."""
    files = project_files(root)
    # One sample path per extension (or extension-less name), with how many files share it.
    kinds: Counter[str] = Counter()
    sample: dict[str, str] = {}
    for path in files:
        base = os.path.basename(path)
        key = os.path.splitext(base)[1] or base
        kinds[key] += 1
        sample.setdefault(key, path)
    samples = {key: (sample[key], n) for key, n in kinds.items()}
    checks: list[Check] = []
    for server in config.servers.values():
        if server.disabled:
            continue
        n = _count(server, samples)
        if n:
            checks.append(_check_server(server, root, n))
    for linter in config.linters.values():
        if linter.disabled:
            continue
        n = _count(linter, samples)
        if n:
            checks.append(_check_linter(linter, root, n, smoke=smoke))
    return checks


def _check_server(server: ServerConfig, root: Path, n: int) -> Check:
    argv = server.resolve_command(root)
    if argv is None:
        exe = server.command[0] if server.command else "(no command)"
        problem = _untrusted(server, root) or f"{exe!r} not found on PATH or in the project"
        return Check("server", server.name, n, None, problem)
    return Check("server", server.name, n, argv[0])


def _untrusted(entry: ServerConfig | LinterConfig, root: Path) -> str | None:
    """Why an executable shipped in the workspace is not used, when that is the reason."""
    if not entry.command or os.sep in entry.command[0]:
        return None
    local = project_executable(entry.command[0], root)
    if local is None:
        return None
    return f"{local} is not used: this folder is not trusted (run `lspmux trust {root}`)"


def _check_linter(linter: LinterConfig, root: Path, n: int, *, smoke: bool) -> Check:
    from lspmux.diagnostics.linters.runner import _not_found

    argv = linter.resolve_command(root)
    if argv is None:
        problem = _untrusted(linter, root) or _not_found(linter, root)
        return Check("linter", linter.name, n, None, problem)
    if not smoke:
        return Check("linter", linter.name, n, argv[0])
    try:
        proc = subprocess.run(
            [argv[0], "--version"],
            capture_output=True,
            text=True,
            timeout=SMOKE_TIMEOUT,
            cwd=root,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **linter.env},
        )
    except subprocess.TimeoutExpired:
        return Check(
            "linter",
            linter.name,
            n,
            argv[0],
            f"`{argv[0]} --version` did not finish in {SMOKE_TIMEOUT:g}s",
        )
    except OSError as exc:
        return Check("linter", linter.name, n, argv[0], f"cannot run {argv[0]}: {exc}")
    output = (proc.stdout or proc.stderr or "").strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    # The line with the version number (ShellCheck prints its name first).
    first = next(
        (line for line in lines if any(c.isdigit() for c in line)), lines[0] if lines else ""
    )
    if proc.returncode != 0 and not first:
        return Check(
            "linter",
            linter.name,
            n,
            argv[0],
            f"`{argv[0]} --version` exited with code {proc.returncode} and printed nothing",
        )
    return Check("linter", linter.name, n, argv[0], version=first[:80] or None)


def trust_lines(config: Config, root: Path) -> list[str]:
    """Whether the project's own configuration and executables are trusted (`lspmux trust`)."""
    from lspmux.config.trust import workspace_trusted

    lines = []
    fix = f"run `lspmux trust {root}` after reviewing it"
    if config.project_file is None:
        lines.append("project config: none")
    elif config.project_trusted:
        lines.append(f"project config: {config.project_file} (trusted)")
    elif config.untrusted_keys:
        ignored = ", ".join(config.untrusted_keys)
        lines.append(
            f"project config: {config.project_file} is NOT trusted: ignored {ignored}; {fix}"
        )
    else:
        lines.append(
            f"project config: {config.project_file} (not trusted; it names nothing to run)"
        )
    if workspace_trusted(root):
        lines.append("workspace executables (bin/, node_modules/.bin, .venv/bin): trusted")
    else:
        lines.append("workspace executables (bin/, node_modules/.bin, .venv/bin): not trusted")
        restricted = [
            n for n, s in config.servers.items() if s.untrusted and not s.untrusted.get("disabled")
        ]
        kept_off = [n for n, s in config.servers.items() if s.untrusted.get("disabled")]
        lines.append(
            "restricted mode (so that no server runs the workspace's code): "
            + (", ".join(restricted) or "none")
            + (f"; not started here: {', '.join(kept_off)}" if kept_off else "")
            + f" (`lspmux trust {root}` lifts it)"
        )
    return lines


def render(checks: list[Check], root: Path, config: Config) -> str:
    lines = [f"lspmux doctor: {root}", f"config: {', '.join(config.files) or 'built-in defaults'}"]
    lines += trust_lines(config, root)
    if not checks:
        lines.append("no configured server or linter handles the files in this folder")
        return "\n".join(lines)
    for kind in ("server", "linter"):
        group = [c for c in checks if c.kind == kind]
        if not group:
            continue
        lines.append("")
        lines.append(f"{kind}s:")
        width = max(len(c.name) for c in group)
        for c in group:
            files = f"{c.files} file{'s' if c.files != 1 else ''}"
            if c.ok:
                version = f" ({c.version})" if c.version else ""
                lines.append(f"  ok       {c.name:<{width}}  {c.path}{version}  [{files}]")
            else:
                lines.append(f"  WARNING  {c.name:<{width}}  {c.problem}  [{files}]")
    bad = [c for c in checks if not c.ok]
    lines.append("")
    if bad:
        lines.append(
            f"{len(bad)} of {len(checks)} needed servers/linters are missing or broken: "
            "install them, or set `disabled = true` for the ones you do not use "
            "(`lspmux config` shows where each entry comes from)"
        )
    else:
        lines.append(f"all {len(checks)} servers/linters this project needs were found")
    return "\n".join(lines)
