"""`make demo`: lspmux proxy on the bundled sample project, as an editor would drive it.

Starts `lspmux proxy` on tests/data/workspace, opens app.py, asks for a hover, resolves a Locate
description, and prints the merged diagnostics of basedpyright and ruff once both reported.

`--install` first puts lspmux (editable, from this checkout), those two servers at the
versions the built-in table pins (their `package` field) and pip into this Python's venv, in
one resolver pass: with uv when it is on PATH or installs from PyPI (a wheel), else with pip.
The demo needs only Python. uv because it installs the same packages for a quarter of pip's CPU
time (docs/benchmarks.md, "Demo"), which is what the demo's time is made of on a busy machine;
for the same reason `make demo` makes the venv without pip, and pip runs from the wheel Python
bundles for ensurepip until uv installs it. A stamp in the venv remembers what was installed,
so a second `make demo` starts the demo at once.

Only the standard library is imported before the install: lspmux's own dependencies may not be
there yet. The demo proper runs in a fresh interpreter (exec) that sees what was installed.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lspmux.headless import HeadlessClient

ROOT = Path(__file__).resolve().parent.parent
WORKSPACE = ROOT / "tests" / "data" / "workspace"
SERVERS = ("basedpyright", "ruff")
BIN = Path(sys.executable).parent
STAMP = Path(sys.prefix) / "lspmux-demo.stamp"
#: How long the demo waits for an answer or for both servers' diagnostics (a cold start on a
#: loaded 2-core machine takes ~10 s).
TIMEOUT = 60.0
#: The proxy's log level comes from here (lspmux's own variable), else "warning".
LOG_ENV = "LSPMUX_LOG"
#: How much of a failed install's output is shown (pip's resolver can write pages).
ERROR_LINES = 12
#: pip's settings (`pip config list`, files and PIP_* variables) that uv reads elsewhere, so that
#: uv sees the index, certificate and constraints pip would use: uv's name, pip's separator.
PIP_TO_UV = {
    "index-url": ("UV_INDEX_URL", " "),
    "extra-index-url": ("UV_EXTRA_INDEX_URL", " "),
    "find-links": ("UV_FIND_LINKS", ","),
    "constraint": ("UV_CONSTRAINT", " "),
    "cert": ("SSL_CERT_FILE", " "),
}


# -- install ----------------------------------------------------------------------------------


def requirements() -> list[str]:
    """What `make demo` installs: this checkout (editable) and the servers at their pins."""
    table = tomllib.loads((ROOT / "config" / "defaults.toml").read_text())["servers"]
    pins = [table[name]["package"].removeprefix("pypi:") for name in SERVERS]
    return ["-e", str(ROOT), *pins]


def stamp_text(reqs: list[str]) -> str:
    """What the stamp holds: the requirements and the hash of pyproject.toml (its dependencies)."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return f"{' '.join(reqs)}\npyproject.toml sha256 {digest}\n"


def installed(reqs: list[str]) -> bool:
    """Whether the last install was of these requirements and each is still there."""
    try:
        if STAMP.read_text() != stamp_text(reqs):
            return False
        return all(
            metadata.version(name) == version
            for name, version in (pin.split("==") for pin in reqs[2:])
        ) and bool(metadata.version("lspmux"))
    except (OSError, metadata.PackageNotFoundError):
        return False


def pip() -> list[str]:
    """How to run pip here: the venv's own, else the pip wheel this Python bundles for
    ensurepip, run in place (what `python -m venv` would install: 3 s of CPU to install and
    compile, for a pip the demo runs once or twice); no wheel: `python -m ensurepip` first."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    import ensurepip
    import sysconfig

    folders = [
        sysconfig.get_config_var("WHEEL_PKG_DIR"),
        Path(ensurepip.__file__).parent / "_bundled",
    ]
    wheels = [wheel for folder in folders if folder for wheel in Path(folder).glob("pip-*.whl")]
    if wheels:
        newest = max(
            wheels, key=lambda w: [int(n) for n in re.findall(r"\d+", w.name.split("-")[1])]
        )
        return [sys.executable, str(newest / "pip")]
    subprocess.run([sys.executable, "-m", "ensurepip"], capture_output=True)
    return [sys.executable, "-m", "pip"]  # still none: it says so when run


def pip_install() -> list[str]:
    return [*pip(), "install", "--quiet", "--disable-pip-version-check", "--no-compile"]


def uv_env() -> dict[str, str]:
    """The environment for uv: ours, plus pip's settings where no UV_* variable says otherwise."""
    env = dict(os.environ)
    listed = subprocess.run([*pip(), "config", "list"], capture_output=True, text=True).stdout
    files: dict[str, str] = {}
    variables: dict[str, str] = {}  # PIP_* (listed as `:env:.cert=…`): they win, as in pip
    for line in listed.splitlines():  # `global.cert='/etc/ssl/…'`, the files in pip's order
        key, _, value = line.partition("=")
        scope, _, name = key.rpartition(".")
        if name in PIP_TO_UV:
            (variables if scope == ":env:" else files)[name] = value.strip("'\"")
    for name, value in {**files, **variables}.items():
        variable, separator = PIP_TO_UV[name]
        env.setdefault(variable, separator.join(value.split()))
    return env


def find_uv() -> str | None:
    """uv from PATH or this venv, else installed into this venv from PyPI (None: pip then)."""
    found = shutil.which("uv") or shutil.which("uv", path=str(BIN))
    if found:
        return found
    if subprocess.run([*pip_install(), "uv"], capture_output=True).returncode != 0:
        return None  # no uv wheel for this platform, or no network: pip will say which
    return shutil.which("uv", path=str(BIN))


def install(reqs: list[str]) -> None:
    """Install `reqs` and pip itself (the venv's own, for `make test`) in one pass, printing one
    line; on failure the installer's own error and what to do, then exit 1."""
    shown = ", ".join(["lspmux (editable)", *(p.replace("==", " ") for p in reqs[2:])])
    venv = Path(sys.prefix)
    where = venv.relative_to(ROOT) if venv.is_relative_to(ROOT) else venv
    print(f"make demo: installing {shown} into {where} … ", end="", flush=True)
    began = time.monotonic()
    everything = [*reqs, "pip"]
    note = ""
    uv = find_uv()
    if uv is not None:
        argv = [uv, "pip", "install", "--quiet", "--python", sys.executable, *everything]
        done = subprocess.run(argv, capture_output=True, text=True, env=uv_env())
        tool = "uv"
        if done.returncode != 0:  # pip reads its own settings: the second chance
            note = f"; uv failed: {last_line(done)}"
    if uv is None or done.returncode != 0:
        argv = [*pip_install(), *everything]
        done = subprocess.run(argv, capture_output=True, text=True)
        tool = "pip"
    if done.returncode != 0:
        print("failed")
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        print("\n".join(lines[:ERROR_LINES]))  # the cause comes first (a retry, a conflict)
        loud = [a for a in argv if a != "--quiet"]
        cut = f", its first {ERROR_LINES} of {len(lines)} lines" if len(lines) > ERROR_LINES else ""
        print(
            f"make demo: pip could not install them{note} (its error above{cut}; all of it: "
            f"{shlex.join(loud)}). A network or index problem: check `pip config list`; no "
            "pip at all: install your system's python3-venv (Debian, Ubuntu); a broken .venv: "
            "`rm -rf .venv`; then `make demo` again."
        )
        sys.exit(1)
    STAMP.write_text(stamp_text(reqs))
    print(f"done in {time.monotonic() - began:.1f} s ({tool}{note})", flush=True)


def last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[-1].strip() if lines else f"exit status {done.returncode}"


# -- the demo ---------------------------------------------------------------------------------


async def session() -> int:
    """The proxy session; 0 when the hover, the Locate answer and both servers' diagnostics
    came, else 1 with a line that says what did not."""
    from lspmux.headless import HeadlessClient, ReportError  # after the install

    began = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lspmux", "proxy", "--log-level", os.environ.get(LOG_ENV, "warning"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=WORKSPACE,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )  # fmt: skip
    client = HeadlessClient(proc)
    marks = {"proxy start": began}
    try:
        missing = await drive(client, marks)
    except ReportError as exc:
        missing = [str(exc)]
    finally:
        await client.close()
    if missing:
        print(f"make demo: {'; '.join(missing)}. The proxy's log: {LOG_ENV}=debug make demo")
        return 1
    steps = ", ".join(f"{name} {at - began:.1f}" for name, at in list(marks.items())[1:])
    print(
        f"demo done in {time.monotonic() - began:.1f} s (seconds after the proxy's start: {steps})"
    )
    return 0


async def drive(client: HeadlessClient, marks: dict[str, float]) -> list[str]:
    """Open app.py, print the hover, the Locate answer and the merged diagnostics; what did not
    come. `marks` gets when each answer came."""
    await client.request(
        "initialize",
        {"processId": os.getpid(), "rootUri": WORKSPACE.as_uri(), "capabilities": {}},
        timeout=TIMEOUT,
    )
    marks["initialized"] = time.monotonic()
    client.notify("initialized", {})
    uri = (WORKSPACE / "app.py").as_uri()
    text = (WORKSPACE / "app.py").read_text()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )
    missing = []
    hover = await client.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 15, "character": 6}},
        timeout=TIMEOUT,
    )
    marks["hover"] = time.monotonic()
    value = (hover or {}).get("contents", {}).get("value")
    print("hover at app.py:16:7 →", value)
    if not value:
        missing.append("the hover came back empty")
    spec = "app.py:Greeter.greet@return <|>message"
    located = await client.request("locate/resolve", {"locate": spec}, timeout=TIMEOUT) or {}
    marks["locate"] = time.monotonic()
    print(f"locate {spec!r} →", located.get("label"), located.get("position"))
    if not located.get("position"):
        missing.append("the Locate string resolved to no position")

    deadline = time.monotonic() + TIMEOUT
    while (sources := heard(client, uri)) < set(SERVERS) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)  # HeadlessClient keeps diagnostics; it has no event for them
    marks["both servers' diagnostics"] = time.monotonic()
    diagnostics = sorted(client.diagnostics.get(uri, []), key=lambda d: d["range"]["start"]["line"])
    print(f"merged diagnostics for app.py ({len(diagnostics)}, from {', '.join(sorted(sources))}):")
    for d in diagnostics:
        start = d["range"]["start"]
        print(
            f"  app.py:{start['line'] + 1}:{start['character'] + 1}  {d.get('source')}"
            f"  {d.get('code')}  {d['message'].splitlines()[0]}"
        )
    for name in sorted(set(SERVERS) - sources):
        missing.append(f"no diagnostics from {name} within {TIMEOUT:g} s")
    return missing


def heard(client: HeadlessClient, uri: str) -> set[str]:
    """The servers whose diagnostics for `uri` the client holds."""
    return {str(d.get("source", "")).lower() for d in client.diagnostics.get(uri, [])}


if __name__ == "__main__":
    if "--install" in sys.argv[1:]:
        reqs = requirements()
        if not installed(reqs):
            install(reqs)
            # a fresh interpreter: it imports what was just installed (the editable lspmux too)
            os.execv(sys.executable, [sys.executable, __file__])
    sys.exit(asyncio.run(session()))
