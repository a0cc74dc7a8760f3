"""The whole workspace at once (`lspmux diagnostics "*"`, the `diagnostics` tool's `"*"`).

Two parts, both free of any session:
- `workspace_files`: the files of the workspace some server or linter applies to (`git
  ls-files` in a Git work tree — tracked and untracked, not ignored — else a walk that skips
  hidden, vendored and build folders).
- project checks: a server whose table entry has `project_check` (basedpyright's and pyright's
  `--outputjson`, `ruff check --output-format json`, `cargo check --message-format=json`, `tsc
  --noEmit`, `go vet`) checks every file of its root in one run; `parse` turns the output
  (`project_check_format`) into LSP diagnostics per absolute path, so they print in the same
  `path:line:col` form as what the servers publish. A file every source of which has a project
  check is checked that way; the others are opened in lspmux like any named file.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

#: Folders a walk outside Git never enters.
SKIPPED_DIRS = frozenset(
    {"node_modules", "target", "build", "dist", "__pycache__", "venv", "site-packages"}
)
#: Lines of a failed check's stderr (or stdout) kept for the report.
TAIL = 10

Diagnostics = dict[Path, list[dict[str, Any]]]


def is_workspace_pattern(pattern: str) -> bool:
    """`*` and `**` (also `./*`, `**/*`) name the whole workspace, not the root's files."""
    return pattern.strip().removeprefix("./") in ("*", "**", "**/*")


def workspace_files(root: Path, wanted: Callable[[Path], bool]) -> list[Path]:
    """Every file under `root` for which `wanted` is true, sorted."""
    found: Iterable[Path] | None = None
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, timeout=60, check=True,
        )  # fmt: skip
        found = (root / name for name in out.stdout.decode("utf-8", "replace").split("\0") if name)
    except (OSError, subprocess.SubprocessError):
        found = None
    if found is None:
        found = _walk(root)
    return sorted({p for p in found if p.is_file() and wanted(p)})


def _walk(root: Path) -> Iterable[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        for name in names:
            yield Path(folder) / name


# -- which files a project check covers, and running the checks ------------------------------

Checks = dict[tuple[str, Path], list[Path]]
Sources = dict[Path, list[dict[str, Any]] | None]


def plan(root: Path, config: Any) -> tuple[Checks, list[Path]]:
    """The workspace's files split in two: per (server, its root) the files its project check
    covers — those every source of which has a project check — and the files to open."""

    def sources_of(path: Path) -> tuple[list[Any], list[Any]]:
        servers = [s for s in config.servers_for(str(path)) if s.feature_enabled("diagnostics")]
        return servers, config.linters_for(str(path))

    checks: Checks = {}
    to_open: list[Path] = []
    for path in workspace_files(root, lambda p: any(sources_of(p))):
        servers, linters = sources_of(path)
        if servers and not linters and all(s.project_check for s in servers):
            for s in servers:
                found = Path(s.find_root(path))
                check_root = found if found.is_relative_to(root) else root
                checks.setdefault((s.name, check_root), []).append(path)
        else:
            to_open.append(path)
    return checks, to_open


async def run_checks(
    config: Any, checks: Checks, *, timeout: float
) -> tuple[dict[Path, list[dict[str, Any]]], Sources]:
    """Run every planned check at once: diagnostics per file, and per file a source row for
    each server (`reported`, `failed` with its output's last lines, or `missing`)."""
    from lspmux.config.resolve import resolve_command
    from lspmux.install.prefix import install_hint

    results: dict[Path, list[dict[str, Any]]] = {}
    sources: Sources = {}

    async def one(name: str, check_root: Path, paths: list[Path]) -> None:
        server = config.servers[name]
        row: dict[str, Any] = {"name": name, "role": server.role}
        found: Diagnostics = {}
        argv = resolve_command(tuple(server.project_check), check_root)
        if argv is None:
            exe = server.project_check[0]
            row.update(state="missing", detail=f"{exe!r} is not installed (not found on PATH)",
                       install=install_hint(name, server.package, server.install))  # fmt: skip
        else:
            outcome = await run_check(argv, server.project_check_format, check_root,
                                      source=name, timeout=timeout)  # fmt: skip
            if outcome.diagnostics is None:
                row.update(state="failed", detail=outcome.failure, stderr=outcome.stderr)
            else:
                row["state"] = "reported"
                found = outcome.diagnostics
        for path in paths:
            results.setdefault(path, []).extend(found.get(path, []))
            rows = sources.setdefault(path, [])
            assert rows is not None
            rows.append(row)

    await asyncio.gather(*(one(name, r, paths) for (name, r), paths in checks.items()))
    return results, sources


def not_opened(limit: int) -> dict[str, Any]:
    """The source row of a file left out because too many had to be opened."""
    return {"name": "lspmux", "role": "server", "state": "skipped",
            "detail": f"more than {limit} files to open; name them"}  # fmt: skip


class CheckResult:
    """One project check's outcome: diagnostics per file, or why it failed."""

    __slots__ = ("diagnostics", "failure", "stderr")

    def __init__(
        self, diagnostics: Diagnostics | None, failure: str | None = None, stderr: Any = ()
    ) -> None:
        self.diagnostics = diagnostics
        self.failure = failure
        self.stderr: list[str] = list(stderr)


async def run_check(
    argv: list[str], fmt: str, root: Path, *, source: str, timeout: float
) -> CheckResult:
    """Run a project check in `root` and parse what it printed."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=root, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
    except OSError as exc:
        return CheckResult(None, f"cannot start {argv[0]}: {exc}")
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return CheckResult(None, f"`{' '.join(argv)}` took more than {timeout:g}s")
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    tail = [line for line in (stderr or stdout).splitlines() if line.strip()][-TAIL:]
    try:
        found = parse(fmt, stdout, stderr, root, source)
    except (ValueError, KeyError, TypeError) as exc:
        why = f"`{' '.join(argv)}` exited with {proc.returncode}; its output did not parse ({exc})"
        return CheckResult(None, why, tail)
    if found is None or (not found and proc.returncode != 0):
        return CheckResult(None, f"`{' '.join(argv)}` exited with {proc.returncode}", tail)
    return CheckResult(found)


# -- parsers: output → {absolute path: [LSP diagnostic]} --------------------------------------


def parse(fmt: str, stdout: str, stderr: str, root: Path, source: str) -> Diagnostics | None:
    """Diagnostics per file from a check's output; None when it printed nothing usable."""
    return _PARSERS[fmt](stdout, stderr, root, source)


def _diag(
    line: int, col: int, message: str, source: str, severity: int = 1, code: Any = None,
    end: tuple[int, int] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """An LSP diagnostic from 0-based line and column."""
    start = {"line": max(0, line), "character": max(0, col)}
    stop = {"line": end[0], "character": end[1]} if end else start
    d: dict[str, Any] = {"range": {"start": start, "end": stop}, "severity": severity,
                         "source": source, "message": message}  # fmt: skip
    if code not in (None, ""):
        d["code"] = code
    return d


def _path(root: Path, name: str) -> Path:
    return Path(os.path.normpath(root / name))


def _pyright(stdout: str, _stderr: str, root: Path, source: str) -> Diagnostics | None:
    data = json.loads(stdout) if stdout.strip() else None
    if not isinstance(data, dict) or "generalDiagnostics" not in data:
        return None
    levels = {"error": 1, "warning": 2, "information": 3}
    out: Diagnostics = {}
    for d in data["generalDiagnostics"]:
        rng = d.get("range") or {"start": {"line": 0, "character": 0}}
        start, end = rng["start"], rng.get("end") or rng["start"]
        out.setdefault(_path(root, d["file"]), []).append(
            _diag(int(start["line"]), int(start["character"]), str(d.get("message", "")),
                  source, levels.get(d.get("severity", "error"), 1), d.get("rule"),
                  (int(end["line"]), int(end["character"])))
        )  # fmt: skip
    return out


def _ruff(stdout: str, _stderr: str, root: Path, source: str) -> Diagnostics | None:
    data = json.loads(stdout) if stdout.strip() else None
    if not isinstance(data, list):
        return None
    out: Diagnostics = {}
    for d in data:
        loc, end = d.get("location") or {}, d.get("end_location") or d.get("location") or {}
        out.setdefault(_path(root, d["filename"]), []).append(
            _diag(int(loc.get("row", 1)) - 1, int(loc.get("column", 1)) - 1,
                  str(d.get("message", "")), source, _ruff_severity(d.get("code")),
                  d.get("code"), (int(end.get("row", 1)) - 1, int(end.get("column", 1)) - 1))
        )  # fmt: skip
    return out


def _ruff_severity(code: Any) -> int:
    """What ruff's server says: syntax errors and the rules that find certain runtime errors
    (E9, F63, F7, F82) are errors, the other rules warnings."""
    if not code:
        return 1
    return 1 if str(code).startswith(("E9", "F63", "F7", "F82")) else 2


def _cargo(stdout: str, _stderr: str, root: Path, source: str) -> Diagnostics | None:
    out: Diagnostics = {}
    finished = False
    levels = {"error": 1, "warning": 2, "note": 3, "help": 4}
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        if msg.get("reason") == "build-finished":
            finished = True
        if msg.get("reason") != "compiler-message":
            continue
        inner = msg.get("message") or {}
        spans = [s for s in inner.get("spans") or [] if s.get("is_primary")]
        if not spans:
            continue
        s = spans[0]
        base = Path(msg.get("manifest_path") or root / "Cargo.toml").parent
        code = (inner.get("code") or {}).get("code")
        d = _diag(int(s["line_start"]) - 1, int(s["column_start"]) - 1, str(inner["message"]),
                  source, levels.get(inner.get("level", "error"), 1), code,
                  (int(s["line_end"]) - 1, int(s["column_end"]) - 1))  # fmt: skip
        found = out.setdefault(_path(base, s["file_name"]), [])
        if d not in found:  # --all-targets: the library and its tests report it twice
            found.append(d)
    return out if finished else None


_TSC = re.compile(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<level>error|warning) "
                  r"(?P<code>TS\d+): (?P<message>.*)$")  # fmt: skip
_GNU = re.compile(r"^(?:vet: )?(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? ?"
                  r"(?:(?P<level>error|warning|note):)? ?(?P<message>.+)$")  # fmt: skip


def _lines(pattern: re.Pattern[str]) -> Callable[[str, str, Path, str], Diagnostics | None]:
    def parse_lines(stdout: str, stderr: str, root: Path, source: str) -> Diagnostics | None:
        out: Diagnostics = {}
        for line in (stdout + "\n" + stderr).splitlines():
            m = pattern.match(line.strip())
            if m is None or m["file"].startswith("#"):
                continue
            level = {"warning": 2, "note": 3}.get(m["level"] or "", 1)
            code = m.groupdict().get("code")
            out.setdefault(_path(root, m["file"]), []).append(
                _diag(int(m["line"]) - 1, int(m["col"] or 1) - 1, m["message"].strip(),
                      source, level, code)
            )  # fmt: skip
        return out

    return parse_lines


_PARSERS: dict[str, Callable[[str, str, Path, str], Diagnostics | None]] = {
    "pyright": _pyright,
    "ruff": _ruff,
    "cargo": _cargo,
    "tsc": _lines(_TSC),
    "gnu": _lines(_GNU),
}
