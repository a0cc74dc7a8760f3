"""The common Neovim setup for a shared server, `cmd = vim.lsp.rpc.connect("127.0.0.1", PORT)`,
against `lspmux server --listen 127.0.0.1:PORT` with no token: the real Neovim 0.11, headless,
connects as the daemon's own user (no token: its uid is read from /proc/net/tcp), is served,
and gets clangd's hover through the daemon."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    DaemonUnderTest,
    daemon_fixture,
    free_port,
    tcp_listening,
    wait_until,
)
from tests.e2e.editors.harness import doc_snippet

HEADING = "Neovim over TCP to a running daemon"
C_SOURCE = "int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n"

#: What the test does with the configuration of docs/editors.md: open the file, wait for the
#: client to be initialized, ask for hover where `add` is called.
DRIVER = """
local out = { hover = vim.NIL }
vim.cmd.edit(vim.env.LSPMUX_FILE)
local function client()
  return vim.lsp.get_clients({ bufnr = 0, name = 'lspmux' })[1]
end
out.attached = vim.wait(30000, function()
  return client() ~= nil and client().initialized
end, 50)
if out.attached then
  out.server = client().server_info
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(0) },
    position = { line = 1, character = 24 },
  }
  for _ = 1, 50 do -- clangd answers null until it parsed the file
    local answers = vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 10000) or {}
    for _, answer in pairs(answers) do
      if answer.result and answer.result.contents then
        out.hover = answer.result.contents.value or vim.json.encode(answer.result.contents)
      elseif answer.err then
        out.error = vim.inspect(answer.err)
      end
    end
    if out.hover ~= vim.NIL then break end
    vim.wait(100)
  end
end
vim.fn.writefile({ vim.json.encode(out) }, vim.env.LSPMUX_OUT)
vim.cmd('qa!')
"""


async def test_neovim_connects_over_tcp_without_a_token(
    daemon: DaemonUnderTest, tmp_path: Path
) -> None:
    nvim = shutil.which("nvim")
    assert nvim, "nvim is not installed (scripts/setup-tests installs Neovim 0.11)"
    assert shutil.which("clangd"), "clangd is not installed (scripts/setup-tests)"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".git").mkdir()
    source = workspace / "main.c"
    source.write_text(C_SOURCE)
    port = free_port()
    await daemon.start(
        "--listen",
        f"127.0.0.1:{port}",  # no token file, no LSPMUX_TOKEN
        wait_for=Path(f"{daemon.runtime}/lspmux/tcp-127.0.0.1-{port}.pid"),
    )
    await wait_until(lambda: tcp_listening(port), what="the TCP listener")
    init = tmp_path / "init.lua"  # the snippet of docs/editors.md, on this test's port
    snippet = doc_snippet(HEADING, "lua")
    assert "vim.lsp.rpc.connect('127.0.0.1', 27631)" in snippet, snippet
    init.write_text(snippet.replace("27631", str(port)))
    driver = tmp_path / "driver.lua"
    driver.write_text(DRIVER)
    out = tmp_path / "out.json"
    env = {
        **daemon.env,
        "HOME": str(tmp_path / "home"),
        "LSPMUX_FILE": str(source),
        "LSPMUX_OUT": str(out),
    }
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-u", str(init), "-c", f"luafile {driver}"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = daemon.log.read_text(errors="replace") if daemon.log.exists() else ""
    assert out.exists(), f"Neovim wrote nothing:\n{run.stdout}\n{run.stderr}\n{log[-3000:]}"
    seen = json.loads(out.read_text())
    assert seen["attached"], f"{seen}\n{log[-3000:]}"
    assert seen["server"]["name"] == "lspmux"  # routing by file type: lspmux answers
    assert "int add(int a, int b)" in str(seen["hover"]), f"{seen}\n{log[-3000:]}"
    assert "refused" not in log
