"""The real-editor harness: Neovim and Emacs, headless, talking to this tree's `lspmux proxy`
through the setups of docs/editors.md.

Each test starts one editor (Neovim or Emacs) in private XDG/HOME folders, on a fresh copy of
tests/data/workspace, with the editor's configuration snippet taken verbatim from
docs/editors.md. `lspmux` on the editor's PATH is a two-line script running this tree's
`python -m lspmux` (PYTHONPATH points at the tree) with a log file added, so the snippet's
`lspmux proxy` is the code under test. A driver script (Lua or Elisp, beside this file) does what
a user would and writes what the editor shows to a JSON file; the tests read it. When a test
fails, `EditorRun.explain()` puts the driver's trace, the editor's log and the tail of lspmux's
log in the message.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DOC = ROOT / "docs" / "editors.md"
SAMPLE = ROOT / "tests" / "data" / "workspace"

# The sample's known problems, and an unsaved edit that fixes two of them (the unused `os`
# import and the undefined name on the last line) while adding one (an unused `sys` import).
SOURCES = ["basedpyright", "Ruff"]
EDITS = [
    {"start": 17, "end": 18, "lines": []},  # `    undefined_name`
    {"start": 0, "end": 1, "lines": ["import sys"]},  # `import os`
]
STALE = ['"os"', "`os`", "undefined_name"]
EXPECT_AFTER = [["basedpyright", '"sys"'], ["Ruff", "`sys`"]]
ACTION_TITLE = "Remove unused import"
QUIET = 2.0  # seconds without a diagnostic change before the driver calls them settled
DEADLINE = 15.0  # seconds any one wait may take


def fenced_block(markdown: str, heading: str, lang: str) -> str:
    """The first ```lang block after the heading line starting with `heading`."""
    lines = markdown.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if line.startswith("#") and heading in line), None
    )
    if start is None:
        raise LookupError(f"docs/editors.md has no heading containing {heading!r}")
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("#"):
            break
        if lines[i].strip() == f"```{lang}":
            end = lines.index("```", i + 1)
            return "\n".join(lines[i + 1 : end]) + "\n"
    raise LookupError(f"docs/editors.md: no ```{lang} block under {heading!r}")


def doc_snippet(heading: str, lang: str) -> str:
    return fenced_block(DOC.read_text(), heading, lang)


def key(d: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two shown diagnostics the same one, whatever namespace shows it."""
    return (
        (d.get("source") or "").lower(),
        d.get("code"),
        d["lnum"],
        d["col"],
        d.get("end_lnum"),
        d.get("end_col"),
        d["message"],
    )


def duplicates(diags: list[dict[str, Any]]) -> list[dict[str, Any]]:
    counts = Counter(key(d) for d in diags)
    return [d for d in diags if counts[key(d)] > 1]


def by_source(diags: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for d in diags:
        out.setdefault((d.get("source") or "").lower(), []).append(d)
    return out


def log_time(line: str) -> float | None:
    """The time of one lspmux log line (`2026-11-22 10:25:46,123 DEBUG …`), as epoch seconds."""
    m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ", line)
    if not m:
        return None
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp() + int(m.group(2)) / 1000


def last_publish_before(log: str, sources: list[str], since: float, until: float) -> float | None:
    """When the last of `sources` reported diagnostics to lspmux (a publish or a pull answer
    with items) between `since` and `until` (epoch seconds), per lspmux's debug log."""
    last: float | None = None
    names = [s.lower() for s in sources]
    for line in log.splitlines():
        when = log_time(line)
        if when is None or not since <= when <= until:
            continue
        lowered = line.lower()
        if ("publishdiagnostics" in lowered or '"kind":"full"' in lowered) and any(
            f" {n} " in lowered or f" {n}:" in lowered or f" {n}[" in lowered for n in names
        ):
            last = when
    return last


@dataclass
class EditorRun:
    """One editor run: what the driver wrote, and the logs to explain a failure with."""

    name: str
    data: dict[str, Any]
    tmp: Path
    output: str = ""
    logs: dict[str, Path] = field(default_factory=dict)

    def log(self, which: str) -> str:
        path = self.logs.get(which)
        return path.read_text(errors="replace") if path and path.exists() else ""

    def explain(self, tail: int = 4000) -> str:
        """What the driver saw, the editor's output and log, and lspmux's log: all tails."""
        parts = [f"--- {self.name}: what the driver saw ---"]
        for name, value in self.data.items():
            if name == "timeline":
                parts.append(f"timeline: {len(value)} changes; the last:")
                for change in value[-3:]:
                    parts.append(f"  at {change['t_ms']:.0f} ms:")
                    parts += [f"    {line}" for line in map(describe, change["diagnostics"])]
            elif (
                isinstance(value, list)
                and value
                and isinstance(value[0], dict)
                and "lnum" in value[0]
            ):
                parts.append(f"{name}:")
                parts += [f"  {describe(d)}" for d in value]
            elif isinstance(value, list):
                parts.append(f"{name}:")
                parts += [f"  {item}" for item in value]
            else:
                parts.append(f"{name}: {value!r}")
        parts += [f"--- {self.name} output ---", self.output[-tail:]]
        for which in self.logs:
            parts += [f"--- {which} (tail) ---", shorten(self.log(which))[-tail:]]
        return "\n".join(parts)


def describe(d: dict[str, Any]) -> str:
    """One shown diagnostic on one line: where it is shown, who said it, where, what."""
    message = d["message"].splitlines()[0] if d.get("message") else ""
    return (
        f"[{d.get('namespace')}] {d.get('source')} {d.get('code')} "
        f"{d['lnum']}:{d['col']}-{d.get('end_lnum')}:{d.get('end_col')} {message}"
    )


def shorten(text: str, width: int = 300) -> str:
    """Long log lines (whole messages, Neovim's client tables) cut to `width` characters."""
    return "\n".join(
        line if len(line) <= width else line[:width] + f" …[{len(line)} chars]"
        for line in text.splitlines()
    )


def marker_processes(marker: str) -> list[psutil.Process]:
    """Processes started for one run: they inherit LSPMUX_EDITOR_RUN=<marker>."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and proc.environ().get("LSPMUX_EDITOR_RUN") == marker:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


@dataclass
class EditorHarness:
    """Starts one editor run at a time in `tmp`, on a copy of the sample workspace."""

    tmp: Path
    workspace: Path
    env: dict[str, str]
    lspmux_log: Path

    def plan(self, scenario: str, **extra: Any) -> dict[str, Any]:
        return {
            "scenario": scenario,
            "file": str(self.workspace / "app.py"),
            "out": str(self.tmp / f"{scenario}.json"),
            "sources": SOURCES,
            "quiet": QUIET,
            "deadline": DEADLINE,
            **extra,
        }

    def run(
        self, name: str, argv: list[str], plan: dict[str, Any], logs: dict[str, Path]
    ) -> EditorRun:
        plan_file = self.tmp / f"{plan['scenario']}-plan.json"
        plan_file.write_text(json.dumps(plan))
        env = dict(self.env, LSPMUX_EDITOR_PLAN=str(plan_file))
        marker = env["LSPMUX_EDITOR_RUN"]
        logs = {**logs, "lspmux log": self.lspmux_log}
        proc = subprocess.Popen(
            argv,
            cwd=self.workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=6 * DEADLINE + 30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            output += b"\n[the editor did not finish in time and was killed]"
        # Whatever the editor left behind (lspmux, its servers) gets a grace period to stop, then
        # is ours to kill: found by the marker in its environment.
        _gone, alive = psutil.wait_procs(marker_processes(marker), timeout=10)
        leftovers = []
        for p in alive:
            try:
                leftovers.append(" ".join(p.cmdline()[:3]))
                p.kill()
            except psutil.Error:
                continue
        out = Path(plan["out"])
        data = json.loads(out.read_text()) if out.exists() else {"error": "no output written"}
        if leftovers:
            data.setdefault("leftovers", leftovers)
        return EditorRun(name, data, self.tmp, output.decode(errors="replace"), logs)


def prepare(tmp_path: Path) -> EditorHarness:
    """A fresh workspace copy, a `lspmux` on PATH running this tree, private XDG folders."""
    workspace = tmp_path / "workspace"
    shutil.copytree(SAMPLE, workspace)
    (workspace / ".git").mkdir()  # a root marker, as a real project has
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lspmux_log = tmp_path / "lspmux.log"
    shim = bin_dir / "lspmux"
    shim.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m lspmux "$@" --log-file "{lspmux_log}"\n'
    )
    shim.chmod(0o755)
    env = dict(os.environ)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env[var] = str(tmp_path / var.lower())
    # Short: Unix socket paths in the cache and runtime folders must stay under 108 bytes.
    env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="lspmux-ed-cache-")
    env["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="lspmux-ed-rt-")
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    env["PATH"] = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["LSPMUX_LOG"] = "debug"
    env["LSPMUX_EDITOR_RUN"] = uuid.uuid4().hex
    env.pop("LSPMUX_ADDRESS", None)
    return EditorHarness(tmp_path, workspace, env, lspmux_log)


def cleanup(harness: EditorHarness) -> None:
    shutil.rmtree(harness.env["XDG_CACHE_HOME"], ignore_errors=True)
    shutil.rmtree(harness.env["XDG_RUNTIME_DIR"], ignore_errors=True)


def check_once(run: EditorRun, diags: list[dict[str, Any]]) -> None:
    """Each diagnostic of the sample shown once, from each of basedpyright and ruff."""
    found = by_source(diags)
    for source in SOURCES:
        assert found.get(source.lower()), f"no diagnostic from {source}\n{run.explain()}"
    dups = duplicates(diags)
    assert not dups, (
        f"{len(dups)} diagnostics shown more than once (namespace/backend of each copy):\n"
        + "\n".join(f"  {describe(d)}" for d in dups)
        + f"\n{run.explain()}"
    )


def check_not_stale(run: EditorRun) -> float:
    """The edited text's diagnostics only, within a few seconds; returns seconds to clean."""
    data = run.data
    assert data.get("clean_ms") is not None, (
        f"after an unsaved edit fixing two problems, stale diagnostics stayed "
        f"{DEADLINE:g}s:\n"
        + "\n".join(f"  {describe(d)}" for d in data.get("after", []))
        + f"\n{run.explain()}"
    )
    after = data["after"]
    stale = [d for d in after if any(s in d["message"] for s in STALE)]
    assert not stale, f"stale diagnostics came back after the edit: {stale}\n{run.explain()}"
    check_once(run, after)
    return float(data["clean_ms"]) / 1000


def edited_text_only(diags: list[dict[str, Any]]) -> bool:
    """True when the diagnostics are those of the edited sample: none stale, each expected one."""
    if any(stale in d["message"] for d in diags for stale in STALE):
        return False
    return all(
        any(
            (d.get("source") or "").lower() == source.lower() and text in d["message"]
            for d in diags
        )
        for source, text in EXPECT_AFTER
    )


def publish_to_shown(run: EditorRun) -> float | None:
    """Seconds from the last source reporting for the edited text (lspmux's debug log) to the
    editor first showing exactly the edited text's diagnostics (the driver's timeline)."""
    data = run.data
    shown = next(
        (
            change["wall"]
            for change in data.get("timeline", [])
            if change["t_ms"] >= data.get("edited_ms", 0)
            and edited_text_only(change["diagnostics"])
        ),
        None,
    )
    if shown is None:
        return None
    last = last_publish_before(run.log("lspmux log"), SOURCES, data["edited_wall"], shown)
    return None if last is None else round(shown - last, 3)


def report(run: EditorRun, **numbers: Any) -> None:
    """Print what the editor showed (visible with `pytest -s`; kept for the resolution note)."""
    print(f"\n[{run.name}] " + ", ".join(f"{k}={v}" for k, v in numbers.items()))
