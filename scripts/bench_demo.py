"""`make demo` timed as a newcomer meets it: a fresh clone, Python only, empty caches.

Each round clones this checkout's HEAD (and, with `--before REV`, that revision too, the two in
alternating order) into a temporary folder and runs `make demo` there, then once more in the
same clone (a newcomer's second run), with:

- PATH: a folder of links to what /usr/bin and /bin hold, less node, nodejs, npm, npx,
  corepack, uv and uvx: the machine's Python 3, make and git, nothing from npm;
- HOME: an empty folder: no pip or uv cache, no lspmux configuration;
- the user `nobody` when run as root (setpriv): no root rights.

PIP_* and SSL_CERT_FILE pass through (the machine's index settings), nothing else. For each run:
wall time, CPU time of the processes it waited for (getrusage), the lines it printed, its exit
status and the load average before it. `--write` puts the table into docs/benchmarks.md
between `<!-- bench:demo -->` and `<!-- /bench:demo -->`.

Usage: .venv/bin/python scripts/bench_demo.py [--rounds N] [--before REV] [--write]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench import write_section

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:demo -->", "<!-- /bench:demo -->"
LEFT_OUT = {"node", "nodejs", "npm", "npx", "corepack", "uv", "uvx"}
TIMEOUT = 600
NOBODY = 65534


def python_only_path(folder: Path) -> str:
    """A folder of links to /usr/bin and /bin less npm's and uv's commands; its path."""
    folder.mkdir()
    for source in (Path("/usr/bin"), Path("/bin")):
        for entry in sorted(source.iterdir()):
            link = folder / entry.name
            if entry.name not in LEFT_OUT and not link.exists() and not link.is_symlink():
                link.symlink_to(entry)
    return str(folder)


@dataclass
class Run:
    """One `make demo`: wall and CPU seconds, lines printed, exit status, load before it."""

    wall: float
    cpu: float
    lines: int
    rc: int
    load: float
    out: str


def run_demo(clone: Path, home: Path, path: str) -> Run:
    """`make demo` in `clone`; what it cost and what it printed."""
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}
    env |= {k: v for k, v in os.environ.items() if k.startswith("PIP_") or k == "SSL_CERT_FILE"}
    argv = ["make", "-s", "demo"]
    if os.geteuid() == 0:
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run(
        argv, cwd=clone, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    out = done.stdout + done.stderr
    return Run(wall, cpu, len(out.splitlines()), done.returncode, load, out)


def one_round(rev: str, tmp: Path, path: str) -> tuple[Run, Run]:
    """A fresh clone of `rev` with an empty HOME: `make demo`, then `make demo` again."""
    work = Path(tempfile.mkdtemp(prefix="demo-", dir=tmp))
    clone, home = work / "lspmux", work / "home"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", rev], check=True)
    home.mkdir()
    if os.geteuid() == 0:
        for folder in (work, clone, home):
            for dirpath, _, files in os.walk(folder):
                os.chown(dirpath, NOBODY, NOBODY)
                for name in files:
                    os.lchown(os.path.join(dirpath, name), NOBODY, NOBODY)
    first = run_demo(clone, home, path)
    second = run_demo(clone, home, path)
    shutil.rmtree(work, ignore_errors=True)
    return first, second


def table(results: dict[str, list[tuple[Run, Run]]]) -> list[str]:
    rows = [
        "| revision | run | wall, s (each round) | median | CPU, s (median) | lines | exit | "
        "load before (1 min) |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for label, rounds in results.items():
        for index, run in ((0, "first (fresh clone)"), (1, "second")):
            runs = [r[index] for r in rounds]
            walls = ", ".join(f"{r.wall:.1f}" for r in runs)
            loads = ", ".join(f"{r.load:.1f}" for r in runs)
            rows.append(
                f"| {label} | {run} | {walls} | {statistics.median(r.wall for r in runs):.1f} | "
                f"{statistics.median(r.cpu for r in runs):.1f} | {max(r.lines for r in runs)} | "
                f"{', '.join(str(r.rc) for r in runs)} | {loads} |"
            )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="a revision to time in the same rounds, alternating")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    revs = {f"{head} (this)": head}
    if args.before:
        revs[f"{args.before} (before)"] = args.before
    results: dict[str, list[tuple[Run, Run]]] = {k: [] for k in revs}
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp_name:
        tmp = Path(tmp_name)
        os.chmod(tmp, 0o755)
        path = python_only_path(tmp / "bin")
        python = subprocess.run(
            ["python3", "--version"], env={"PATH": path}, capture_output=True, text=True
        ).stdout.split()[-1]
        for n in range(args.rounds):
            order = list(revs.items()) if n % 2 == 0 else list(reversed(revs.items()))
            for label, rev in order:
                first, second = one_round(rev, tmp, path)
                results[label].append((first, second))
                print(
                    f"round {n + 1} {label}: {first.wall:.1f} s (cpu {first.cpu:.1f} s, "
                    f"{first.lines} lines, exit {first.rc}, load {first.load:.1f}), "
                    f"again {second.wall:.1f} s",
                    flush=True,
                )
                if first.rc != 0:
                    print(first.out, file=sys.stderr)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    rows = table(results)
    print("\n".join(rows))
    if args.write:
        section = "\n".join(
            [
                BEGIN,
                "## Demo",
                "",
                "<!-- Generated by scripts/bench_demo.py; edits between the markers are lost. -->",
                "",
                f"Measured {when} on {os.cpu_count()} CPUs, {args.rounds} rounds. Each run: "
                "`make demo` in a fresh clone, with an empty HOME (no pip or uv cache), as "
                f"`nobody`, PATH without node, npm or uv (the system's Python {python}, make "
                "and git); *second* is `make demo` again in "
                "the same clone. CPU: of every process the run waited for.",
                "",
                *rows,
                "",
                "Reproduce: `.venv/bin/python scripts/bench_demo.py --rounds 3 --before REV --write`.",
                END,
            ]
        )
        write_section(DOC, section, BEGIN, END)
    return 0 if all(r[0].rc == 0 for rounds in results.values() for r in rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
