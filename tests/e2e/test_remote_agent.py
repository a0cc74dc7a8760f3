"""`lspmux mcp --remote ssh://127.0.0.1:PORT/…` and the CLI verbs with `--remote`: an agent on
this side asks the daemon on the other (a real sshd), about a project held there at another
path; every path the agent gives and gets is its own."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.e2e import remote_harness
from tests.e2e.agent_harness import REPO, mcp_client
from tests.e2e.remote_harness import RemoteSetup
from tests.tools import require_tool

pytestmark = pytest.mark.e2e
remote_setup = remote_harness.remote_setup


def remote_args(setup: RemoteSetup) -> tuple[str, ...]:
    return ("--remote", setup.sshd.url(setup.remote), "--remote-lspmux", str(setup.lspmux))


async def test_agent_tools_through_ssh(remote_setup: RemoteSetup) -> None:
    require_tool("basedpyright-langserver")
    require_tool("ruff")
    setup = remote_setup
    app_before = (setup.local / "app.py").read_bytes()
    async with mcp_client(setup.local, setup.env, *remote_args(setup)) as mcp:
        text, _ = await mcp.call("hover", at="use.py:5:12")
        assert "Greeter" in text, text

        text, data = await mcp.call("definition", at="use.py:1:17")
        assert [loc["label"] for loc in data["locations"]] == ["app.py:4:7"], text
        assert "class Greeter:" in text  # the line read from the local copy

        text, data = await mcp.call("references", at="app.py:Greeter")
        assert {r["path"] for r in data["references"]} == {"app.py", "use.py"}, text

        text, data = await mcp.call("rename", at="app.py:Greeter", new_name="Welcomer")
        assert "+class Welcomer:" in text and "use.py" in text, text
        assert str(setup.remote) not in text

        text, data = await mcp.call("diagnostics", file="app.py")
        sources = {d["source"].lower() for d in data["diagnostics"]}
        assert {"ruff", "basedpyright"} <= sources, text
        assert any(d["label"] == "app.py:18:5" for d in data["diagnostics"]), text

        text, _ = await mcp.call("locate", at="app.py:Greeter.greet@return <|>message")
        assert text.startswith("app.py:12:16"), text

        text, data = await mcp.call(
            "check_edit", at="app.py:main@<|>greeter = ", new_text="value = undefined_thing\n    "
        )
        introduced = [r for r in data["introduced"] if "undefined_thing" in r["message"]]
        assert {r["label"] for r in introduced} == {"app.py:16:13"}, text
        assert data["written"] is False

        # outside the mapped root: a local copy the agent can read
        text, data = await mcp.call("definition", at="app.py:1:8")
        where = Path(data["locations"][0]["path"])
        assert where.is_file() and str(where).startswith(setup.env["XDG_CACHE_HOME"]), text
    assert (setup.local / "app.py").read_bytes() == app_before


async def test_cli_verb_through_ssh(remote_setup: RemoteSetup) -> None:
    require_tool("basedpyright-langserver")
    setup = remote_setup
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lspmux", "definition", "use.py:1:17", "--json",
        *remote_args(setup),
        cwd=setup.local, env={**setup.env, "PYTHONPATH": str(REPO)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    assert '"label": "app.py:4:7"' in out.decode(), out.decode()

    # `lspmux status --remote` is the far daemon's status: basedpyright on the remote root
    status = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lspmux", "status", "--json",
        "--remote", setup.sshd.url(setup.remote), "--remote-lspmux", str(setup.lspmux),
        env={**setup.env, "PYTHONPATH": str(REPO)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(status.communicate(), 120)
    assert status.returncode == 0, err.decode()
    assert "basedpyright" in out.decode() and str(setup.remote) in out.decode(), out.decode()
