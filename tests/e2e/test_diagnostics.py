"""Linters inside the proxy and the one merged diagnostics stream, with real tools: Biome's CLI,
ShellCheck, basedpyright and ruff; push and pull clients; code actions per source; and the
`lspmux diagnostics` command."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as t

from tests.e2e.conftest import Proxy, proxy_env, sources
from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    DaemonUnderTest,
    daemon_fixture,
)

ROOT = Path(__file__).resolve().parents[2]

#: Biome's CLI as a linter on .js files; the JS servers off (fast, and Biome's own LSP would
#: report the same findings).
BIOME_CLI = """
[linters.biome]
disabled = false

[servers.biome]
disabled = true

[servers.typescript-language-server]
disabled = true
"""

SHELLCHECK_ONLY = """
[servers.bash-language-server]
disabled = true
"""


def _codes(diags: list[t.Diagnostic], source: str | None = None) -> set[str]:
    return {str(d.code) for d in diags if source is None or (d.source or "").lower() == source}


def _log_messages(proxy: Proxy) -> list[str]:
    return [m.message for m in proxy.client.log_messages]


async def test_biome_cli_diagnostics_follow_the_unsaved_buffer(proxy_factory: Any) -> None:
    proxy: Proxy = await proxy_factory(config=BIOME_CLI)
    uri = proxy.open("test.js", "javascript")
    diags = await proxy.diagnostics_where(
        uri, lambda ds: "lint/suspicious/noDebugger" in _codes(ds, "biome")
    )
    assert sources(diags) == {"biome"}
    debugger = next(d for d in diags if str(d.code) == "lint/suspicious/noDebugger")
    assert (debugger.range.start.line, debugger.range.start.character) == (2, 2)
    assert (debugger.range.end.line, debugger.range.end.character) == (2, 11)
    assert debugger.severity == t.DiagnosticSeverity.Error
    assert "lint/suspicious/noDoubleEquals" in _codes(diags)
    # Delete the `debugger;` line in the buffer only: the file on disk keeps it.
    proxy.change(
        uri,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(2, 0), t.Position(3, 0)), text=""
            )
        ],
    )
    diags = await proxy.diagnostics_where(
        uri,
        lambda ds: (
            "lint/suspicious/noDebugger" not in _codes(ds)
            and "lint/suspicious/noDoubleEquals" in _codes(ds)
        ),
    )
    assert "debugger;" in (proxy.workspace / "test.js").read_text()
    # No temporary copy is left beside the file.
    assert not [p.name for p in proxy.workspace.iterdir() if p.name.startswith("lspmux-")]


async def test_shellcheck_reports_sc2086_at_its_exact_position(proxy_factory: Any) -> None:
    proxy: Proxy = await proxy_factory(config=SHELLCHECK_ONLY)
    text = '#!/bin/sh\nname="a b"\necho "😀" $name\n'
    (proxy.workspace / "run.sh").write_text(text)
    uri = proxy.open("run.sh", "shellscript")
    diags = await proxy.diagnostics_where(uri, lambda ds: "SC2086" in _codes(ds))
    sc = next(d for d in diags if str(d.code) == "SC2086")
    assert sc.source == "shellcheck"
    # `$name` after the emoji: ShellCheck's column 10 (1-based code points) is UTF-16
    # character 10, 0-based (the emoji is two units); the end is exclusive.
    assert (sc.range.start.line, sc.range.start.character) == (2, 10)
    assert (sc.range.end.line, sc.range.end.character) == (2, 15)
    assert sc.code_description is not None
    assert sc.code_description.href == "https://www.shellcheck.net/wiki/SC2086"
    # Quoting it in the buffer clears the finding.
    proxy.change(
        uri,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(2, 10), t.Position(2, 15)), text='"$name"'
            )
        ],
    )
    await proxy.diagnostics_where(uri, lambda ds: "SC2086" not in _codes(ds))


async def test_missing_linter_is_reported_once_and_others_still_publish(
    proxy_factory: Any,
) -> None:
    config = (
        SHELLCHECK_ONLY
        + """
[linters.ghostlint]
command = ["lspmux-no-such-linter-xyz", "${file}"]
format = "regex"
regex = '^(?P<line>\\d+): (?P<message>.+)$'
file_types = [".sh"]
"""
    )
    proxy: Proxy = await proxy_factory(config=config)
    (proxy.workspace / "run.sh").write_text("#!/bin/sh\necho $1\n")
    uri = proxy.open("run.sh", "shellscript")
    await proxy.diagnostics_where(uri, lambda ds: "SC2086" in _codes(ds))
    for n in range(3):  # more runs: still one message
        proxy.change(
            uri,
            [
                t.TextDocumentContentChangePartial(
                    range=t.Range(t.Position(2, 0), t.Position(2, 0)), text=f"# {n}\n"
                )
            ],
        )
        await asyncio.sleep(0.5)
    await _wait_for(lambda: any("ghostlint" in m for m in _log_messages(proxy)))
    about = [m for m in _log_messages(proxy) if "ghostlint" in m]
    assert len(about) == 1, about
    assert "lspmux-no-such-linter-xyz" in about[0] and "not found" in about[0]
    assert "disabled = true" in about[0]  # says what to do
    assert "run.sh" in about[0]  # names the file
    diags = list(proxy.client.diagnostics.get(uri, []))
    assert "SC2086" in _codes(diags)


async def test_hanging_linter_is_killed_after_its_timeout_and_reported(
    proxy_factory: Any,
) -> None:
    config = (
        SHELLCHECK_ONLY
        + f"""
[linters.sleepy]
command = [{json.dumps(sys.executable)}, "-c", "import time; time.sleep(60)"]
input = "stdin"
format = "regex"
regex = '^(?P<line>\\d+): (?P<message>.+)$'
file_types = [".sh"]
timeout = 1
"""
    )
    proxy: Proxy = await proxy_factory(config=config)
    (proxy.workspace / "run.sh").write_text("#!/bin/sh\necho $1\n")
    uri = proxy.open("run.sh", "shellscript")
    await proxy.diagnostics_where(uri, lambda ds: "SC2086" in _codes(ds))
    await _wait_for(lambda: any("sleepy" in m for m in _log_messages(proxy)), timeout=10)
    about = [m for m in _log_messages(proxy) if "sleepy" in m]
    assert len(about) == 1 and "timed out after 1s" in about[0], about
    # Its process is gone (the harness also checks that nothing survives the proxy).
    await _wait_for(
        lambda: not any("time.sleep(60)" in " ".join(p.cmdline()) for p in proxy.descendants()),
        timeout=5,
    )


async def _wait_for(predicate: Any, timeout: float = 30) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition never became true")
        await asyncio.sleep(0.05)


def _has_both(diags: list[t.Diagnostic]) -> bool:
    return {"basedpyright", "ruff"} <= sources(diags)


def _key(d: t.Diagnostic) -> tuple[Any, ...]:
    r = d.range
    return (r.start.line, r.start.character, r.end.line, r.end.character, d.message, str(d.code))


async def test_pull_and_push_clients_get_the_same_union(proxy_factory: Any) -> None:
    pusher: Proxy = await proxy_factory(capabilities="neovim@v0.9.1")  # no pull support
    puller: Proxy = await proxy_factory(capabilities="neovim@v0.11.0")  # pull support
    assert pusher.client.capabilities is not None
    uri = pusher.open("app.py", "python")
    pushed = await pusher.diagnostics_where(uri, _has_both)
    # ruff only pulls; basedpyright is pulled or pushes: the push client sees both anyway.
    assert "F401" in _codes(pushed, "ruff")
    assert "reportUndefinedVariable" in _codes(pushed, "basedpyright")

    uri2 = puller.open("app.py", "python")
    # Asked right after didOpen: lspmux waits for the sources in flight before answering.
    report = await _pull(puller, uri2)
    assert report.kind == "full"
    print("FIRST PULL", sources(report.items))
    if not {"ruff", "basedpyright"} <= sources(report.items):
        await puller.diagnostics_where(uri2, _has_both)  # slow start: ask again once settled
        report = await _pull(puller, uri2)
    assert {"ruff", "basedpyright"} <= sources(report.items)
    pulled_keys = {_key(d) for d in report.items}
    pushed_now = await pusher.diagnostics_where(
        uri, lambda ds: {_key(d) for d in ds} == pulled_keys
    )
    assert len(pushed_now) == len(report.items)
    # Unchanged since: the same resultId comes back as `unchanged`.
    again = await _pull(puller, uri2, report.result_id)
    assert again.kind == "unchanged" and again.result_id == report.result_id


async def _pull(proxy: Proxy, uri: str, previous: str | None = None) -> Any:
    return await asyncio.wait_for(
        proxy.client.text_document_diagnostic_async(
            t.DocumentDiagnosticParams(
                text_document=t.TextDocumentIdentifier(uri), previous_result_id=previous
            )
        ),
        60,
    )


async def test_code_actions_reach_each_server_with_its_own_diagnostics(
    proxy: Proxy, tmp_path: Path
) -> None:
    uri = proxy.open("app.py", "python")
    diags = await proxy.diagnostics_where(uri, _has_both)
    whole = t.Range(
        t.Position(0, 0),
        t.Position(len(proxy.workspace.joinpath("app.py").read_text().splitlines()), 0),
    )
    actions = await proxy.client.text_document_code_action_async(
        t.CodeActionParams(
            t.TextDocumentIdentifier(uri),
            whole,
            t.CodeActionContext(diagnostics=diags, only=[t.CodeActionKind.QuickFix]),
        )
    )
    assert actions
    titles = [a.title for a in actions]
    ruff_fix = next(
        (a for a in actions if isinstance(a, t.CodeAction) and "Remove unused import" in a.title),
        None,
    )
    assert ruff_fix is not None, titles
    assert any("pyright: ignore[reportUndefinedVariable]" in title for title in titles), titles
    if ruff_fix.edit is None:
        ruff_fix = await proxy.client.code_action_resolve_async(ruff_fix)
    assert ruff_fix.edit is not None
    log = (tmp_path / "lspmux.log").read_text()
    lines = re.findall(
        r"(\S+): codeAction for \S+ gets (\d+) of (\d+) diagnostics \(codes (.*)\)", log
    )
    by_server = {name: (int(n), int(total), codes) for name, n, total, codes in lines}
    assert set(by_server) >= {"ruff", "basedpyright"}, lines
    ruff_n, total, ruff_codes = by_server["ruff"]
    assert ruff_n == len(
        [d for d in diags if (d.source or "") == "Ruff" or (d.source or "").lower() == "ruff"]
    )
    assert "F401" in ruff_codes and "reportUndefinedVariable" not in ruff_codes
    assert "F401" not in by_server["basedpyright"][2]
    assert ruff_n < total


async def test_editing_an_imported_module_updates_the_importers_diagnostics(proxy: Proxy) -> None:
    """basedpyright re-checks dependents: in pull mode it sends workspace/diagnostic/refresh,
    which lspmux honours by pulling again; either way the client sees the new set."""
    (proxy.workspace / "lib.py").write_text("def helper() -> int:\n    return 1\n")
    (proxy.workspace / "use.py").write_text("from lib import helper\n\nhelper()\n")
    use = proxy.open("use.py", "python")
    lib = proxy.open("lib.py", "python")
    await proxy.diagnostics_where(
        use,
        lambda ds: (
            "basedpyright" not in sources(ds)
            or not [d for d in ds if str(d.code) == "reportAttributeAccessIssue"]
        ),
    )
    await asyncio.sleep(2)  # both analysed
    assert not [d for d in proxy.client.diagnostics.get(use, []) if d.severity == 1]
    # Rename the function in the (unsaved) buffer of lib.py: use.py now imports a missing name.
    proxy.change(
        lib,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(0, 4), t.Position(0, 10)), text="helped"
            )
        ],
    )
    diags = await proxy.diagnostics_where(
        use, lambda ds: any("helper" in d.message and d.severity == 1 for d in ds)
    )
    assert "basedpyright" in sources([d for d in diags if "helper" in d.message])


def _lspmux(
    args: list[str], cwd: Path, tmp_path: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lspmux", *args],
        cwd=cwd,
        env=proxy_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_diagnostics_command_prints_both_servers_and_fails_on_errors(
    workspace: Path, tmp_path: Path
) -> None:
    proc = _lspmux(["diagnostics", "app.py"], workspace, tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    pattern = re.compile(r"^app\.py:(\d+):(\d+) (error|warning|information|hint) (\S+) (\S+) (.+)$")
    found = [m.groups() for m in map(pattern.match, lines) if m]
    assert {g[3].lower() for g in found} >= {"ruff", "basedpyright"}, proc.stdout
    # 1-based positions: `import os` is line 1, column 8; F401 comes from ruff.
    assert ("1", "8", "warning", "Ruff", "F401") in {g[:5] for g in found}
    assert any(g[2] == "error" and g[4] == "reportUndefinedVariable" for g in found)
    # Sorted by severity (errors first), then position.
    order = [("error", "warning", "information", "hint").index(g[2]) for g in found]
    assert order == sorted(order)
    assert re.search(r"^\d+ errors?, \d+ warnings? in 1 file$", lines[-1]), lines[-1]

    proc = _lspmux(
        ["diagnostics", "--json", "--min-severity", "error", "*.py"], workspace, tmp_path
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    rows = data["diagnostics"]
    assert rows and all(r["severity"] == "error" for r in rows)
    assert {r["source"].lower() for r in rows} >= {"ruff", "basedpyright"}
    assert {r["path"] for r in rows} == {"app.py"}


def test_diagnostics_command_exits_0_when_clean_and_names_missing_linters(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "ok.sh").write_text('#!/bin/sh\necho "hello"\n')
    config = tmp_path / "extra.toml"
    config.write_text(
        SHELLCHECK_ONLY
        + """
[linters.ghostlint]
command = ["lspmux-no-such-linter-xyz", "${file}"]
format = "regex"
regex = '^(?P<line>\\\\d+): (?P<message>.+)$'
file_types = [".sh"]
"""
    )
    proc = _lspmux(["diagnostics", "--config", str(config), "ok.sh"], workspace, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("no problems in 1 file")
    assert "ghostlint" in proc.stderr and "not found" in proc.stderr

    proc = _lspmux(["doctor", "--config", str(config)], workspace, tmp_path)
    assert proc.returncode == 1, proc.stderr  # a needed linter is missing
    ghost = next(line for line in proc.stdout.splitlines() if "ghostlint" in line)
    assert "MISSING" in ghost and "lspmux-no-such-linter-xyz" in ghost
    shellcheck = next(line for line in proc.stdout.splitlines() if " shellcheck " in line)
    assert shellcheck.split()[0] == "ok" and shutil.which("shellcheck") in shellcheck
    assert "0." in shellcheck  # its version, from the smoke check


async def test_a_changed_ruff_configuration_updates_the_diagnostics(proxy: Proxy) -> None:
    """ruff reloads its settings on didChangeWatchedFiles and then re-publishes, or (to a
    pull client) sends workspace/diagnostic/refresh, which lspmux honours by pulling again."""
    uri = proxy.open("app.py", "python")
    await proxy.diagnostics_where(uri, lambda ds: "F401" in _codes(ds))
    pyproject = proxy.workspace / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.ruff.lint]\nignore = ["F401"]\n')
    proxy.client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(
            [t.FileEvent(uri=pyproject.as_uri(), type=t.FileChangeType.Changed)]
        )
    )
    diags = await proxy.diagnostics_where(uri, lambda ds: "F401" not in _codes(ds), timeout=30)
    assert "F821" in _codes(diags)  # ruff's other findings stay


async def test_a_linter_that_runs_on_save_only_waits_for_the_save(proxy_factory: Any) -> None:
    config = SHELLCHECK_ONLY + '\n[linters.shellcheck]\nrun_on = ["open", "save"]\n'
    proxy: Proxy = await proxy_factory(config=config)
    (proxy.workspace / "run.sh").write_text('#!/bin/sh\necho "$1"\n')
    uri = proxy.open("run.sh", "shellscript")
    await asyncio.sleep(1.5)  # the open run: nothing to report
    assert "SC2086" not in _codes(list(proxy.client.diagnostics.get(uri, [])))
    proxy.change(
        uri,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(1, 5), t.Position(1, 9)), text="$1"
            )
        ],
    )
    await asyncio.sleep(1.0)  # well past the debounce: no run on change
    assert "SC2086" not in _codes(list(proxy.client.diagnostics.get(uri, [])))
    proxy.client.text_document_did_save(t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri)))
    await proxy.diagnostics_where(uri, lambda ds: "SC2086" in _codes(ds), timeout=20)


async def test_diagnostics_command_goes_through_a_running_daemon(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "lspmux", "diagnostics", "--json", "app.py"],
        cwd=workspace,
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    rows = json.loads(proc.stdout)["diagnostics"]
    assert {r["source"].lower() for r in rows} >= {"ruff", "basedpyright"}
    # The daemon ran the servers (and keeps them for the next client), and answered the
    # command's status requests.
    assert daemon.backends("basedpyright") and daemon.backends("ruff")
    assert "lspmux/diagnosticStatus" in daemon.log.read_text()
