"""Running a command-line linter once on the buffer's current text.

`run_linter` runs one tool once: argv without a shell, placeholders substituted, the text fed
on stdin or through a temporary file beside the original (always deleted), stdout and stderr
read concurrently, a timeout that kills the whole process group, and every way of failing
turned into a `LinterFailure` whose message says what to do. When to run is
`scheduler.LinterScheduler`'s job; parsing the output is `generic.parse_output`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from pathlib import Path
from typing import Any, Literal

import attrs

from lspmux.config.model import LinterConfig
from lspmux.config.resolve import PROJECT_BIN_DIRS
from lspmux.diagnostics.linters import LinterFailure, LinterOutputError, excerpt
from lspmux.install.prefix import install_hint
from lspmux.text import Encoding

log = logging.getLogger(__name__)

Event = Literal["open", "save", "change"]

TEMP_PREFIX = "lspmux-"

__all__ = ["LinterFailure", "LinterRun", "run_linter", "temp_name"]


@attrs.frozen
class LinterRun:
    """The outcome of one run: diagnostics, or the failure that replaced them."""

    linter: str
    uri: str
    diagnostics: list[dict[str, Any]] | None
    error: LinterFailure | None
    #: Seconds from start to result.
    duration: float

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    async def execute(
        cls,
        config: LinterConfig,
        *,
        uri: str,
        path: str,
        text: str,
        root: Path,
        encoding: Encoding = "utf-16",
    ) -> LinterRun:
        """Run the linter; a failure is recorded, not raised (cancellation still propagates)."""
        started = time.monotonic()
        try:
            diagnostics = await run_linter(
                config, path=path, text=text, root=root, encoding=encoding
            )
        except LinterFailure as err:
            return cls(config.name, uri, None, err, time.monotonic() - started)
        except Exception as err:  # a bug must not take the session down: log it, report it
            log.exception("linter %s failed unexpectedly on %s", config.name, path)
            failure = LinterFailure(f"{config.name}: internal error on {path}: {err!r}", "internal")
            return cls(config.name, uri, None, failure, time.monotonic() - started)
        return cls(config.name, uri, diagnostics, None, time.monotonic() - started)


def temp_name(original: str) -> str:
    """The name of the temporary copy of `original`: `lspmux-<random>-<name>`.

    It sits beside the original (so the tool finds the project's configuration) and keeps the
    whole original name at its end (so `*.test.js` or `*.d.ts` patterns still match). It is not
    a dotfile: tools and configurations that skip hidden files (Biome with `!**/.*`, ESLint's
    old defaults) would otherwise lint nothing and report no problems.
    """
    return f"{TEMP_PREFIX}{os.urandom(4).hex()}-{original}"  # secrets.token_hex, without its import


async def run_linter(
    config: LinterConfig,
    *,
    path: str,
    text: str,
    root: Path,
    encoding: Encoding = "utf-16",
) -> list[dict[str, Any]]:
    """Lint `text` (the buffer of `path`) with `config`'s command; raises LinterFailure."""
    root = Path(root)
    original = Path(os.path.abspath(Path(path) if os.path.isabs(path) else root / path))
    argv = config.resolve_command(root)
    if argv is None:
        raise LinterFailure(_not_found(config, root), "missing")
    temp: Path | None = None
    if config.input == "stdin":
        target, data = original, text.encode("utf-8")
    else:
        temp = original.with_name(temp_name(original.name))
        try:
            with open(temp, "xb") as fh:
                fh.write(text.encode("utf-8"))
        except OSError as err:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise LinterFailure(
                f"{config.name}: cannot write the temporary copy of {original.name} beside it "
                f"({err.strerror or err}); use input = 'stdin' if the tool can read stdin",
                "io",
            ) from None
        target, data = temp, None
    try:
        argv = substitute(
            argv,
            file=str(target),
            root=str(root),
            filename=original.name,
            append_file=temp is not None,
        )
        rc, stdout, stderr = await _execute(config, argv, data, root, original.name)
    finally:
        if temp is not None:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
    diagnostics = _interpret(config, rc, stdout, stderr, str(target), text, original.name, encoding)
    if temp is not None:
        for diag in diagnostics:
            diag["message"] = (
                diag["message"].replace(str(temp), str(original)).replace(temp.name, original.name)
            )
    return diagnostics


def substitute(
    argv: list[str],
    *,
    file: str,
    root: str,
    filename: str | None = None,
    append_file: bool = False,
) -> list[str]:
    """Replace ${file}, ${root} and ${filename} in every argument after the executable.

    `file` is the path the tool reads (the temporary copy when input = "file"); `filename` is
    the original file's name (default: `file`'s). A ${filename} that is a whole argument and
    starts with "-" becomes "./-name", so the tool cannot take it for an option. With
    `append_file`, the file is appended when no argument mentions ${file}.
    """
    name = filename if filename is not None else os.path.basename(file)
    out = [argv[0]]
    used = False
    for arg in argv[1:]:
        if "${file}" in arg:
            used = True
        if arg == "${filename}" and name.startswith("-"):
            out.append("./" + name)
            continue
        out.append(
            arg.replace("${file}", file).replace("${root}", root).replace("${filename}", name)
        )
    if append_file and not used:
        out.append(file)
    return out


async def _execute(
    config: LinterConfig, argv: list[str], data: bytes | None, root: Path, shown: str
) -> tuple[int, str, str]:
    env = {**os.environ, **config.env} if config.env else None
    log.debug("linter %s: running %s in %s", config.name, argv, root)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if data is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=root,
            env=env,
            start_new_session=True,  # its own process group, killed as a whole
        )
    except OSError as exc:
        raise LinterFailure(
            f"{config.name}: cannot start {argv[0]} in {root}: {exc}", "missing"
        ) from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), timeout=config.timeout)
    except TimeoutError:
        await _kill(proc)
        raise LinterFailure(
            f"{config.name} timed out after {config.timeout:g}s on {shown} (killed); "
            "raise its `timeout` or check that it does not wait for input",
            "timeout",
        ) from None
    except BaseException:  # cancelled: a newer run, didClose, shutdown
        await _kill(proc)
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """Kill the process, its process group, and any descendant that left the group."""
    import psutil  # here, not at start: only a linter that must be killed needs it

    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for child in descendants:
        with contextlib.suppress(psutil.Error):
            child.kill()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), timeout=5)


def _interpret(
    config: LinterConfig,
    rc: int,
    stdout: str,
    stderr: str,
    target: str,
    text: str,
    shown: str,
    encoding: Encoding,
) -> list[dict[str, Any]]:
    name = config.name
    ok = rc in config.ok_exit_codes
    if rc < 0:
        raise LinterFailure(
            f"{name} was killed by signal {-rc} on {shown}{_stderr_head(stderr)}", "crash"
        )
    if not stdout.strip():
        if rc == 0 and config.format in ("json", "regex"):
            return []
        raise LinterFailure(
            f"{name} exited with code {rc} on {shown} and printed nothing on stdout"
            f"{_stderr_head(stderr)}",
            "crash",
        )
    from lspmux.diagnostics.linters.generic import parse_output  # the adapters: at first run

    try:
        diagnostics = parse_output(config, stdout, path=target, text=text, encoding=encoding)
    except LinterOutputError as err:
        status = "" if ok else f" (exit code {rc})"
        raise LinterFailure(
            f"{name}: cannot read its output on {shown}{status}: {err.detail}{_stderr_head(stderr)}",
            "output",
        ) from None
    if config.format == "regex" and not diagnostics and rc != 0:
        raise LinterFailure(
            f"{name} exited with code {rc} on {shown} but no line of its output matched the "
            f"regex: {excerpt(stdout)!r}{_stderr_head(stderr)}",
            "output",
        )
    return diagnostics


def _stderr_head(stderr: str, lines: int = 5) -> str:
    head = [line.rstrip()[:200] for line in stderr.strip().splitlines() if line.strip()][:lines]
    return "; stderr: " + " | ".join(head) if head else ""


def _not_found(config: LinterConfig, root: Path) -> str:
    exe = config.command[0] if config.command else "(empty command)"
    # `lspmux install NAME`, or the `install` field of the table (config/defaults.toml)
    hint = install_hint(config.name, config.package, config.install)
    where = ", ".join(str(root / d) for d in PROJECT_BIN_DIRS)
    install = f"install it ({hint})" if hint else "install it"
    return (
        f"{config.name}: command {exe!r} not found on PATH or in {where}; {install}, "
        f"or turn the linter off with `disabled = true` under [linters.{config.name}]"
    )
