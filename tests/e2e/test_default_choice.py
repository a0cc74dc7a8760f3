"""One server per role and family, with the real basedpyright and pyright both installed: one
problem reaches the client once per role — from the type checker and from ruff (a linter, kept
beside it) — not once more from a second type checker (`lspmux.config.choice`).

The problem is the issue's: an unused import, which basedpyright, pyright and ruff each report
in their own words (identical diagnostics are merged anyway: diagnostics/store.py), so that with
both type checkers running it shows three times.

pyright lives off the tests' PATH (scripts/setup-tests puts it in .tools/pyright, or every
Python test would run two type checkers); each test here puts it on the proxy's PATH.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from lsprotocol import types as t

from tests.e2e.conftest import Proxy, sources

ROOT = Path(__file__).resolve().parents[2]
PYRIGHT_BIN = ROOT / ".tools" / "pyright" / "node_modules" / ".bin"
#: An unused import on line 0.
TEXT = "import os\n"


@pytest.fixture
def with_pyright(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyright-langserver on the PATH the proxy inherits (tests/e2e/conftest.py's proxy_env
    copies this process's environment)."""
    if not (PYRIGHT_BIN / "pyright-langserver").exists():
        pytest.skip(f"no pyright in {PYRIGHT_BIN} (scripts/setup-tests installs it)")
    monkeypatch.setenv("PATH", f"{PYRIGHT_BIN}{os.pathsep}{os.environ['PATH']}")


def on_line_0(diags: list[t.Diagnostic]) -> list[t.Diagnostic]:
    return [d for d in diags if d.range.start.line == 0]


def from_(*names: str) -> Callable[[list[t.Diagnostic]], bool]:
    return lambda diags: set(names) <= sources(on_line_0(diags))


def running_pyright(proxy: Proxy) -> list[str]:
    """The command lines of pyright's (not basedpyright's) processes under the proxy."""
    found = []
    for process in proxy.descendants():
        try:
            argv = process.cmdline()
        except psutil.Error:  # gone meanwhile
            continue
        if any("/pyright/" in part or part.endswith("/pyright-langserver") for part in argv):
            found.append(" ".join(argv))
    return found


def line_0_sources(diags: list[t.Diagnostic]) -> list[str]:
    return sorted((d.source or "").lower() for d in on_line_0(diags))


async def open_file(proxy: Proxy) -> str:
    (proxy.workspace / "unused.py").write_text(TEXT)
    uri = proxy.open("unused.py", "python")
    # A request after didOpen: once it is answered, the session has routed the open (and
    # started every server it routes the file to).
    await proxy.request(
        t.TEXT_DOCUMENT_HOVER,
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(line=0, character=1)),
    )
    return uri


async def test_with_both_installed_basedpyright_alone_reports_the_problem(
    with_pyright: None, proxy_factory: Callable[..., Any]
) -> None:
    proxy = await proxy_factory()
    uri = await open_file(proxy)
    diags = await proxy.diagnostics_where(uri, from_("basedpyright", "ruff"))
    assert line_0_sources(diags) == ["basedpyright", "ruff"], diags
    assert running_pyright(proxy) == []


async def test_pyright_turned_on_by_name_runs_beside_it(
    with_pyright: None, proxy_factory: Callable[..., Any]
) -> None:
    """The same set-up reports the problem twice once pyright runs too: what the choice
    prevents, and what a user who names pyright gets."""
    proxy = await proxy_factory(config="[servers.pyright]\ndisabled = false\n")
    uri = await open_file(proxy)
    diags = await proxy.diagnostics_where(uri, from_("basedpyright", "pyright", "ruff"))
    assert line_0_sources(diags) == ["basedpyright", "pyright", "ruff"], diags
    assert running_pyright(proxy)


async def test_pyright_alone_runs(
    with_pyright: None, proxy_factory: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only pyright (and node, in /usr/bin) on PATH: no basedpyright, no ruff.
    monkeypatch.setenv("PATH", f"{PYRIGHT_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin")
    proxy = await proxy_factory()
    uri = await open_file(proxy)
    diags = await proxy.diagnostics_where(uri, from_("pyright"))
    assert line_0_sources(diags) == ["pyright"], diags
