"""Neovim 0.11 headless with `lspmux client --remote ssh://127.0.0.1:PORT/…` as its language
server: a real sshd, the far daemon with basedpyright and ruff on a remote copy of the project
at another path. Hover, a definition into another file, references, a rename applied to the
local buffers, merged diagnostics; then the ssh process is killed mid-session, the buffer is
edited while the link is down, and after the reconnect the remote text equals the buffer."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from lspmux.daemon.address import default_address
from lspmux.daemon.dial import request
from tests.e2e import remote_harness
from tests.e2e.agent_harness import REPO
from tests.e2e.remote_harness import RemoteSetup
from tests.polling import eventually
from tests.tools import require_tool

pytestmark = pytest.mark.e2e
remote_setup = remote_harness.remote_setup

INIT = """
vim.lsp.config('lspmux', {
  cmd = vim.json.decode(vim.env.LSPMUX_CMD),
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml' },
})
vim.lsp.enable('lspmux')
"""

#: The driver records what it sees in LSPMUX_OUT; it hands over to the test (which kills ssh)
#: through two marker files.
DRIVER = r"""
local out = { messages = {} }
local function save() vim.fn.writefile({ vim.json.encode(out) }, vim.env.LSPMUX_OUT) end
local function finish() save(); vim.cmd('qa!') end
vim.lsp.handlers['window/showMessage'] = function(_, params)
  table.insert(out.messages, params.message)
end
vim.cmd.edit(vim.env.LSPMUX_DIR .. '/use.py')
local use = vim.api.nvim_get_current_buf()
local function client()
  return vim.lsp.get_clients({ bufnr = use, name = 'lspmux' })[1]
end
out.attached = vim.wait(60000, function() return client() ~= nil and client().initialized end, 50)
if not out.attached then return finish() end
local function ask(buf, method, params)
  local answers = vim.lsp.buf_request_sync(buf, method, params, 60000) or {}
  for _, a in pairs(answers) do
    if a.err then return { err = a.err.message } end
    return a.result
  end
end
local function at(buf, line, character)
  return { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = line, character = character } }
end
out.hover = ask(use, 'textDocument/hover', at(use, 4, 12))
local defn = ask(use, 'textDocument/definition', at(use, 0, 17))
out.definition = defn
-- jump there as the user would: the buffer opened is the local file
local loc = defn[1] or defn
vim.lsp.util.show_document(loc, 'utf-16', { focus = true })
local app = vim.api.nvim_get_current_buf()
out.jumped_to = vim.api.nvim_buf_get_name(app)
vim.wait(60000, function() return vim.lsp.get_clients({ bufnr = app, name = 'lspmux' })[1] ~= nil end, 50)
out.diagnostics_ok = vim.wait(90000, function()
  local sources = {}
  for _, d in ipairs(vim.diagnostic.get(app)) do
    if d.message:find('undefined_name') then sources[d.source or '?'] = true end
  end
  return vim.tbl_count(sources) >= 2
end, 100)
out.diagnostics = vim.tbl_map(function(d) return { source = d.source, message = d.message, lnum = d.lnum } end, vim.diagnostic.get(app))
local refs = ask(app, 'textDocument/references', vim.tbl_extend('force', at(app, 3, 7), { context = { includeDeclaration = true } }))
out.references = vim.tbl_map(function(r) return r.uri end, refs)
local edit = ask(app, 'textDocument/rename', vim.tbl_extend('force', at(app, 3, 7), { newName = 'Welcomer' }))
out.rename = edit
vim.lsp.util.apply_workspace_edit(edit, 'utf-16')
out.use_after_rename = table.concat(vim.api.nvim_buf_get_lines(use, 0, -1, false), '\n')
out.app_after_rename = table.concat(vim.api.nvim_buf_get_lines(app, 0, -1, false), '\n')

-- the link drops (the test kills ssh); edits go on meanwhile
vim.fn.writefile({ 'kill' }, vim.env.LSPMUX_DIR .. '/../kill-now')
out.lost = vim.wait(60000, function()
  for _, m in ipairs(out.messages) do if m:find('lost the connection') then return true end end
  return false
end, 50)
vim.api.nvim_buf_set_lines(app, 14, 14, false, { 'def added_offline() -> int:', '    return 1', '', '' })
vim.api.nvim_buf_set_text(app, 0, 0, 0, 9, { 'import sys' })
out.while_down = ask(app, 'textDocument/hover', at(app, 3, 7))
out.back = vim.wait(60000, function()
  for _, m in ipairs(out.messages) do if m:find('reconnected') then return true end end
  return false
end, 50)
local symbols = ask(app, 'textDocument/documentSymbol', { textDocument = { uri = vim.uri_from_bufnr(app) } })
out.symbols = vim.tbl_map(function(s) return s.name end, symbols or {})
out.app_text = table.concat(vim.api.nvim_buf_get_lines(app, 0, -1, false), '\n') .. '\n'
save()
-- the test compares the remote daemon's text with this buffer while the session is open
vim.fn.writefile({ 'check' }, vim.env.LSPMUX_DIR .. '/../check-now')
vim.wait(60000, function() return vim.fn.filereadable(vim.env.LSPMUX_DIR .. '/../checked') == 1 end, 50)
finish()
"""


def remote_documents(setup: RemoteSetup, text: str) -> dict[str, Any]:
    """What the remote daemon says of app.py once the remote file holds `text`."""
    (setup.remote / "app.py").write_text(text)
    return request(  # type: ignore[no-any-return]
        default_address(setup.remote_env), "lspmux/documents",
        {"uris": [(setup.remote / "app.py").as_uri()]}, token=None, timeout=10,
    )  # fmt: skip


def ssh_of(setup: RemoteSetup) -> list[psutil.Process]:
    config = str(setup.sshd.client_config)
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        if proc.info["name"] == "ssh" and config in (proc.info["cmdline"] or []):
            found.append(proc)
    return found


async def test_neovim_through_ssh(remote_setup: RemoteSetup, tmp_path: Path) -> None:
    nvim = require_tool("nvim")
    require_tool("basedpyright-langserver")
    require_tool("ruff")
    setup = remote_setup
    (tmp_path / "init.lua").write_text(INIT)
    (tmp_path / "driver.lua").write_text(DRIVER)
    out = tmp_path / "out.json"
    cmd = [sys.executable, "-m", "lspmux", "client", "--remote", setup.sshd.url(setup.remote),
           "--remote-lspmux", str(setup.lspmux)]  # fmt: skip
    env = {
        **setup.env,
        "HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(REPO),
        "LSPMUX_CMD": json.dumps(cmd),
        "LSPMUX_DIR": str(setup.local),
        "LSPMUX_OUT": str(out),
    }
    proc = await asyncio.create_subprocess_exec(
        nvim, "--headless", "--clean", "-u", str(tmp_path / "init.lua"),
        "-c", f"luafile {tmp_path / 'driver.lua'}",
        cwd=setup.local, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        kill_now = setup.local.parent / "kill-now"
        done = asyncio.ensure_future(proc.wait())
        await eventually(lambda: kill_now.exists() or done.done(), "the driver asks", timeout=240)
        if kill_now.exists():
            (ssh,) = await eventually(lambda: ssh_of(setup), "the relay's ssh")
            ssh.kill()
        check_now = setup.local.parent / "check-now"
        await eventually(lambda: check_now.exists() or done.done(), "the driver", timeout=240)
        docs = None
        if check_now.exists():
            docs = remote_documents(setup, json.loads(out.read_text())["app_text"])
            (setup.local.parent / "checked").write_text("")
        await asyncio.wait_for(done, 240)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    stderr = (await proc.stderr.read()).decode() if proc.stderr else ""
    assert out.exists(), f"Neovim wrote nothing: {stderr}"
    seen = json.loads(out.read_text())
    assert seen["attached"], seen
    app_uri, use_uri = (setup.local / "app.py").as_uri(), (setup.local / "use.py").as_uri()
    assert "Greeter" in json.dumps(seen["hover"]), seen["hover"]
    assert seen["jumped_to"] == str(setup.local / "app.py"), seen["definition"]
    assert seen["diagnostics_ok"], seen["diagnostics"]
    assert set(seen["references"]) == {app_uri, use_uri}, seen["references"]
    assert str(setup.remote) not in json.dumps(seen["rename"])
    assert "Welcomer" in seen["use_after_rename"] and "class Welcomer" in seen["app_after_rename"]
    assert seen["lost"] and seen["back"], seen["messages"]
    assert "reconnect" in json.dumps(seen["while_down"]), seen["while_down"]
    assert "added_offline" in seen["symbols"], seen["symbols"]
    # no edit lost: the buffer's text written to the remote file equals the daemon's copy
    # (`lspmux/documents` compares the open document with the file, byte for byte)
    assert docs is not None and docs["documents"], docs
    assert not any(d["unsaved"] for d in docs["documents"]), docs
