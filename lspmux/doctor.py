"""`lspmux doctor`: which configured servers and linters a project needs, and whether they work.

Looks at the files of the project (a bounded walk that skips VCS, dependency and build
folders), finds the enabled servers and linters whose file types occur in it, and for each says
where its executable was found (lspmux's own prefix, PATH, then — in a trusted folder — the
project's node_modules/.bin, .venv/bin, …) or that it is missing, with the command that
installs it, and whether the project's own configuration and executables are trusted (`lspmux
trust`). Each server found is started (initialize, then shutdown: `lspmux.probe`) and shows its
version or why it did not run (its stderr); linters get a smoke check, `--version` within a few
seconds. A missing server whose files another server of the same role serves is not needed
(pylsp beside basedpyright). An installed server the default choice left out for another of its
role and family (pyright where basedpyright is installed: `lspmux.config.choice`) is shown as
not used, with why; one not installed is not shown (`lspmux config` lists them all). A server
or linter whose only files here configure other tools — another entry's root marker
(`pyproject.toml`, `package.json`) or a hidden file (`.pre-commit-config.yaml`) — or that are
the project's standing notes (`README.md`, `CHANGELOG.md`: marksman) is optional: shown with how
to install it, but not needed. Nothing is changed; the report is for people,
and the exit status says whether everything needed runs.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import attrs

from lspmux import speedups
from lspmux.config.model import Config, LinterConfig, ServerConfig
from lspmux.config.needs import OWN_FILES, SKIP_DIRS
from lspmux.config.resolve import project_executable
from lspmux.install.prefix import install_hint
from lspmux.workspace.kinds import NOTES, Kinds, kinds_of

MAX_FILES = 20000
SMOKE_TIMEOUT = 5.0
#: How many servers doctor starts at the same time.
PROBES_AT_ONCE = max(2, min(4, os.cpu_count() or 2))


@attrs.frozen
class Check:
    """The verdict on one server or linter."""

    kind: str  # "server" | "linter"
    name: str
    files: int  # files of the project it applies to
    path: str | None  # the executable found, or None
    problem: str | None = None  # what is wrong, for the user
    version: str | None = None
    install: str | None = None  # the command that installs it, when it is missing
    #: A server of the same role, found and running, that serves every file this one would.
    covered_by: str | None = None
    #: Why the default choice left this server out (`Choice.why`): another one takes its role.
    not_used: str | None = None
    #: Its files here, when every one of them configures another tool (`pyproject.toml` for
    #: taplo): then it is optional, not needed.
    optional: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.path is not None and self.problem is None and self.not_used is None

    @property
    def needed(self) -> bool:
        return self.covered_by is None and self.not_used is None and not self.optional

    @property
    def failed(self) -> bool:
        """Needed and missing, or found and not running."""
        return not self.ok and self.needed

    @property
    def missing(self) -> bool:
        """Needed and not found: what `lspmux install --missing` installs."""
        return self.path is None and self.needed


def project_files(root: Path, limit: int = MAX_FILES) -> list[str]:
    """Up to `limit` file paths under `root`, skipping hidden, VCS, dependency and build
    folders, and lspmux's own files."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            if name in OWN_FILES:
                continue
            found.append(os.path.join(folder, name))
            if len(found) >= limit:
                return found
    return found


def diagnose(config: Config, root: Path, *, smoke: bool = True, probe: bool = True) -> list[Check]:
    """A Check for each enabled server and linter whose file types occur under `root`;
    `probe`: start each server found (initialize, shutdown), `smoke`: run each linter's
    `--version`."""
    entries = (*config.servers.values(), *config.linters.values())
    kinds = kinds_of(project_files(root), {m for e in entries for m in e.root_markers})
    samples = kinds.samples
    checks: list[Check] = []
    servers: list[tuple[ServerConfig, str]] = []
    for server in config.servers.values():
        n = kinds.count(server.matches)
        choice = config.not_chosen.get(server.name)
        if n and choice is not None and (found := server.resolve_command(root)):
            # installed, and left out for another (one not installed is not shown)
            checks.append(Check("server", server.name, n, found[0], not_used=choice.why))
        if server.disabled or not n:
            continue
        first = next(p for p, _ in samples.values() if server.matches(p))
        servers.append((server, first))
        check = _check_server(server, root, n)
        checks.append(_optional(check, server, kinds))
    if probe:
        checks = _probed(checks, servers, root)
    checks = _covered(checks, config, samples)
    for linter in config.linters.values():
        if linter.disabled:
            continue
        n = kinds.count(linter.matches)
        if n:
            check = _check_linter(linter, root, n, smoke=smoke)
            checks.append(_optional(check, linter, kinds))
    return checks


def _optional(check: Check, entry: ServerConfig | LinterConfig, kinds: Kinds) -> Check:
    """`check`, optional when every file of `entry` here configures another tool."""
    return attrs.evolve(check, optional=kinds.only_tool_files(entry.matches, entry.root_markers))


def _optional_why(names: tuple[str, ...]) -> str:
    """What an optional entry's only files here are (`names`: `Check.optional`)."""
    notes = sum(os.path.splitext(n)[0].upper() in NOTES for n in names)
    if notes == len(names):
        return "are the project's notes"
    return "configure other tools" + (" or are the project's notes" if notes else "")


def _check_server(server: ServerConfig, root: Path, n: int) -> Check:
    argv = server.resolve_command(root)
    if argv is None:
        exe = server.command[0] if server.command else "(no command)"
        problem = _untrusted(server, root) or f"{exe!r} not found (lspmux's prefix, PATH, project)"
        hint = install_hint(server.name, server.package, server.install)
        return Check("server", server.name, n, None, problem, install=hint)
    return Check("server", server.name, n, argv[0])


def _probed(
    checks: list[Check], servers: list[tuple[ServerConfig, str]], root: Path
) -> list[Check]:
    """`checks` with each server found started once (`PROBES_AT_ONCE` at a time)."""
    from lspmux.config.restricted import for_root
    from lspmux.probe import probe

    # A few at a time: sixteen servers starting at once on two cores miss their timeout.
    running = asyncio.Semaphore(PROBES_AT_ONCE)

    async def one(check: Check, server: ServerConfig, sample: str) -> Check:
        if check.path is None:
            return check
        async with running:
            return await start(check, server, sample)

    async def start(check: Check, server: ServerConfig, sample: str) -> Check:
        server_root = server.find_root(sample)
        runs = for_root(server, server_root)
        if runs is None:
            return attrs.evolve(check, version="not started here: the folder is not trusted")
        argv = runs.resolve_command(server_root) or [str(check.path)]
        result = await probe(
            argv,
            server_root,
            env=runs.env,
            initialization_options=runs.initialization_options,
            settings=runs.settings,
        )
        return attrs.evolve(check, version=result.version, problem=result.problem)

    async def every() -> list[Check]:
        by_name = {s.name: (s, f) for s, f in servers}
        return list(
            await asyncio.gather(
                *(one(c, *by_name[c.name]) if c.name in by_name else _same(c) for c in checks)
            )
        )

    return asyncio.run(every())


async def _same(check: Check) -> Check:
    return check


def _covered(
    checks: list[Check], config: Config, samples: dict[str, tuple[str, int]]
) -> list[Check]:
    """A missing server whose every file a running server of the same role serves is not
    needed (pyright beside basedpyright): say which serves them instead. Of missing servers
    that could stand for each other, only the first in the table is needed."""
    running = [config.servers[c.name] for c in checks if c.ok]
    needed: list[ServerConfig] = []  # missing, and standing for the ones after them
    result = []
    for check in checks:
        server = config.servers[check.name]
        if check.path is None and check.not_used is None:
            paths = [p for p, _ in samples.values() if server.matches(p)]

            def stands_in(
                other: ServerConfig, paths: list[str] = paths, role: str = server.role
            ) -> bool:
                return other.role == role and all(other.matches(p) for p in paths)

            other = next((r.name for r in running if stands_in(r)), None)
            if other is None:
                first = next((r.name for r in needed if stands_in(r)), None)
                other = f"{first} (once installed)" if first else None
            if other is None:
                needed.append(server)
            check = attrs.evolve(check, covered_by=other)
        result.append(check)
    return result


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
        hint = install_hint(linter.name, linter.package, linter.install)
        return Check("linter", linter.name, n, None, problem, install=hint)
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
    lines = [
        f"lspmux doctor: {root}",
        f"config: {', '.join(config.files) or 'built-in defaults'}",
        f"C speedups: {speedups.status}",
    ]
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
            if c.not_used:
                lines.append(f"  not used {c.name:<{width}}  {c.not_used}  [{files}]")
            elif c.ok:
                version = f" ({c.version})" if c.version else ""
                lines.append(f"  ok       {c.name:<{width}}  {c.path}{version}  [{files}]")
            elif c.covered_by:
                lines.append(
                    f"  skipped  {c.name:<{width}}  not installed; {c.covered_by} serves "
                    f"these files  [{files}]"
                )
            elif c.path is None and c.optional:
                lines.append(
                    f"  optional {c.name:<{width}}  not installed; its only files here "
                    f"{_optional_why(c.optional)} ({', '.join(c.optional)})  [{files}]"
                )
                if c.install:
                    lines.append(f"  {'':<7}  {'':<{width}}  install: {c.install}")
            elif c.path is None:
                lines.append(f"  MISSING  {c.name:<{width}}  {c.problem}  [{files}]")
                if c.install:
                    lines.append(f"  {'':<7}  {'':<{width}}  install: {c.install}")
            else:
                lines.append(f"  FAILS    {c.name:<{width}}  {c.path}: {c.problem}  [{files}]")
    bad = [c for c in checks if c.failed]
    needed = [c for c in checks if c.needed]
    lines.append("")
    if bad:
        names = [
            c.name
            for c in bad
            if c.path is None and c.install and c.install.startswith("lspmux install ")
        ]
        lines.append(
            f"{len(bad)} of {len(needed)} needed servers/linters are missing or fail: "
            "install or fix them, or set `disabled = true` for the ones you do not use "
            "(`lspmux config` shows where each entry comes from)"
        )
        if names:
            lines.append(
                f"install them: lspmux install {' '.join(names)}  (or: lspmux install --missing)"
            )
    else:
        lines.append(f"all {len(needed)} servers/linters this project needs were found and run")
    return "\n".join(lines)
