"""The real rust-analyzer's markdown hover, shared by an editor that takes markdown and a raw
client that declared nothing: the raw client gets the plain text `adapt` makes of the editor's
answer, and that answer is one the C speedups fit in place (`fit_hover_markdown`: code
blocks, a rule, plain lines), as the daemon's answer lane does — what servers really send is in
the extension's domain, not only the unit tests' generated hovers."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import orjson

from lspmux import speedups
from lspmux.routing import adapt
from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    DaemonUnderTest,
    daemon_fixture,
)
from tests.e2e.test_passthrough_rust import (
    cargo_workspace,
    initialize_params,
    reap,
    shim,
    shut_down,
    until_answered,
)


def documented(workspace: Path) -> Path:
    """`util::double` with a doc comment: its hover is a signature, a rule and the text."""
    lib = workspace / "util" / "src" / "lib.rs"
    lib.write_text("/// Twice the number.\n///\n/// Returns it doubled.\n" + lib.read_text())
    return lib


async def test_a_raw_client_gets_rust_analyzers_hover_fitted_as_the_python_fits_it(
    daemon: DaemonUnderTest, tmp_path: Path
) -> None:
    assert shutil.which("rust-analyzer"), "rust-analyzer is not installed (scripts/setup-tests)"
    assert speedups.native is not None, f"lspmux's C speedups: {speedups.status}"
    workspace = cargo_workspace(tmp_path / "ws")
    documented(workspace)
    await daemon.start()
    procs = []
    try:
        editor, proc = await shim(daemon, workspace)
        procs.append(proc)
        raw, proc = await shim(daemon, workspace)
        procs.append(proc)
        await editor.request(1, "initialize", initialize_params(workspace), 120)
        bare = {**initialize_params(workspace), "capabilities": {}}
        await raw.request(1, "initialize", bare, 120)
        main = workspace / "app" / "src" / "main.rs"
        uri, text = main.as_uri(), main.read_text()
        for client in (editor, raw):
            client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            doc = {"uri": uri, "languageId": "rust", "version": 1, "text": text}
            client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                         "params": {"textDocument": doc}})  # fmt: skip
        at = {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 19}}
        marked: Any = None
        for attempt in range(100):  # until the workspace is loaded and the hover has its docs
            answer = await until_answered(editor, 10 + attempt * 2000, "textDocument/hover", at)
            marked = answer.get("result")
            if marked and "doubled" in marked["contents"]["value"]:
                break
            await asyncio.sleep(0.2)  # a retry cadence, not a wait for an event
        assert marked and marked["contents"]["kind"] == "markdown", marked
        assert "---" in marked["contents"]["value"], marked  # signature, rule, documentation
        plain = (await until_answered(raw, 5, "textDocument/hover", at))["result"]
        assert plain == adapt.adapt(adapt.HOVER, marked, {})
        assert plain["contents"]["kind"] == "plaintext" and "doubled" in plain["contents"]["value"]
        # the editor's answer is rust-analyzer's own: the C fits it, to the same bytes
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": marked})
        fitted = speedups.native.fit_hover_markdown(body)
        assert fitted is not None, marked["contents"]["value"]
        assert orjson.loads(fitted)["result"] == plain
        await shut_down([editor, raw])
    finally:
        await reap(procs)
