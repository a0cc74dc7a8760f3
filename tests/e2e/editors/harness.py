"""The real-editor harness: Neovim and Emacs, headless, talking to this tree's `lspmux proxy`
through the setups of docs/editors.md.

Each test starts one editor (Neovim or Emacs) in private XDG/HOME folders, on a fresh copy of
tests/data/workspace, with the editor's configuration snippet taken verbatim from
docs/editors.md. `lspmux` on the editor's PATH is a two-line script running this tree's
`python -m lspmux` (PYTHONPATH points at the tree) with a log file added, so the snippet's
`lspmux proxy` is the code under test. A driver script (Lua or Elisp, beside this file) does what
a user would and writes what the editor shows to a JSON file; checks.py judges it. When a
test fails, `EditorRun.explain()` puts the driver's trace, the editor's log and the tail of
lspmux's log in the message.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
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

# The sections of docs/editors.md whose snippet is the editor's whole configuration in the tests.
NEOVIM_HEADING = "Neovim 0.11+ (`vim.lsp.config`)"
EGLOT_HEADING = "Emacs (eglot)"


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
        run = EditorRun(name, data, self.tmp, output.decode(errors="replace"), logs)
        assert "error" not in data, f"the {name} driver failed\n{run.explain()}"
        assert not leftovers, f"processes outlived {name}: {leftovers}\n{run.explain()}"
        return run


def prepare(tmp_path: Path) -> EditorHarness:
    """A fresh workspace copy, a `lspmux` on PATH running this tree, private XDG folders."""
    workspace = tmp_path / "workspace"
    shutil.copytree(SAMPLE, workspace)
    # A real repository, as a user has (eglot asks git for the project's files to watch).
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
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
