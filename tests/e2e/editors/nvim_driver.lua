-- Drives a headless Neovim (0.11+) for tests/e2e/editors/test_neovim.py.
--
-- Run as `nvim --headless --clean -u <init.lua> -c 'luafile nvim_driver.lua'`, where init.lua is
-- the `vim.lsp.config` snippet of docs/editors.md, verbatim. The plan (a JSON file named by
-- $LSPMUX_EDITOR_PLAN) says which file to open, what to do, and where to write what the editor
-- shows: the diagnostics of every namespace, the code actions offered, the semantic-token
-- highlighter's version, the buffer text. The pytest test judges; this script only observes.
-- Every wait is a poll (vim.wait) with a deadline; a wait that times out is recorded, not fatal.

local plan = vim.json.decode(table.concat(vim.fn.readfile(vim.env.LSPMUX_EDITOR_PLAN), '\n'))
local out = { scenario = plan.scenario, trace = {}, timeouts = {} }
local t0 = vim.uv.hrtime()

local function now_ms()
  return (vim.uv.hrtime() - t0) / 1e6
end

local function wall()
  local sec, usec = vim.uv.gettimeofday()
  return sec + usec / 1e6
end

local function trace(what)
  table.insert(out.trace, string.format('%8.0f ms  %s', now_ms(), what))
end

--- Poll `cond` every 20 ms until it is true or `seconds` pass; record a timeout under `what`.
local function wait_for(what, seconds, cond)
  local ok = vim.wait(seconds * 1000, cond, 20)
  trace((ok and 'seen: ' or 'TIMEOUT: ') .. what)
  if not ok then
    table.insert(out.timeouts, what)
  end
  return ok
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n'
end

--- Every diagnostic of the buffer, in every namespace (Neovim keeps push and pull apart).
local function snapshot(bufnr)
  local names = {}
  for id, ns in pairs(vim.diagnostic.get_namespaces()) do
    names[id] = ns.name
  end
  local diags = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(diags, {
      namespace = names[d.namespace] or tostring(d.namespace),
      source = d.source or vim.NIL,
      code = d.code and tostring(d.code) or vim.NIL,
      message = d.message,
      severity = d.severity,
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
    })
  end
  table.sort(diags, function(a, b)
    return vim.json.encode(a) < vim.json.encode(b)
  end)
  return diags
end

local function has_source(diags, source)
  for _, d in ipairs(diags) do
    if type(d.source) == 'string' and d.source:lower() == source:lower() then
      return true
    end
  end
  return false
end

local function all_sources(diags)
  for _, source in ipairs(plan.sources) do
    if not has_source(diags, source) then
      return false
    end
  end
  return true
end

-- A timeline of what the editor shows: one entry per change of the buffer's diagnostics.
local timeline = {}
local last_change = vim.uv.hrtime()
local function watch(bufnr)
  local last = ''
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    buffer = bufnr,
    callback = function()
      local diags = snapshot(bufnr)
      local key = vim.json.encode(diags)
      if key ~= last then
        last = key
        last_change = vim.uv.hrtime()
        table.insert(timeline, { t_ms = now_ms(), wall = wall(), diagnostics = diags })
      end
    end,
  })
end

local function quiet_for(seconds)
  return (vim.uv.hrtime() - last_change) / 1e9 >= seconds
end

--- Wait until every expected source has shown diagnostics and nothing changed for `quiet` s.
local function settle(bufnr, what)
  wait_for(what .. ': a diagnostic from each of ' .. table.concat(plan.sources, ', '), plan.deadline, function()
    return all_sources(snapshot(bufnr))
  end)
  wait_for(what .. ': no change for ' .. plan.quiet .. ' s', plan.deadline, function()
    return quiet_for(plan.quiet)
  end)
  return snapshot(bufnr)
end

--- Apply the plan's edits (0-based, end-exclusive line ranges), bottom first, unsaved.
local function apply_edits(bufnr)
  for _, e in ipairs(plan.edits) do
    vim.api.nvim_buf_set_lines(bufnr, e.start, e['end'], true, e.lines)
  end
end

local function lspmux_client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'lspmux' })[1]
end

--- lspmux's client once initialized (nil when that does not happen within the deadline).
local function initialized_client(bufnr)
  local client
  wait_for('lspmux initialized', plan.deadline, function()
    client = lspmux_client(bufnr)
    return client ~= nil and client.initialized
  end)
  return client
end

-- Every `$/progress` the editor receives, as Neovim's progress UI sees it: the value, and what
-- vim.lsp.status() (a statusline's source) says right after. Watched from the start, before the
-- file is opened, so that no begin is missed.
local progress = {}
if plan.scenario == 'progress' then
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(ev)
      local params = ev.data.params
      table.insert(progress, { token = params.token, value = params.value, status = vim.lsp.status() })
    end,
  })
end

local scenarios = {}

--- Progress begun and ended: the diagnostics settled, and every token that began has ended.
function scenarios.progress(bufnr)
  out.diagnostics = settle(bufnr, 'initial diagnostics')
  wait_for('every progress begun has ended', plan.deadline, function()
    local open = {}
    for _, p in ipairs(progress) do
      if type(p.value) == 'table' and p.value.kind == 'begin' then
        open[vim.json.encode(p.token)] = true
      elseif type(p.value) == 'table' and p.value.kind == 'end' then
        open[vim.json.encode(p.token)] = nil
      end
    end
    return #progress > 0 and next(open) == nil
  end)
  out.progress = progress
end

function scenarios.diagnostics(bufnr)
  out.diagnostics = settle(bufnr, 'initial diagnostics')
end

function scenarios.stale(bufnr)
  out.before = settle(bufnr, 'initial diagnostics')
  apply_edits(bufnr)
  local edited_ms, edited_wall = now_ms(), wall()
  out.edited_ms, out.edited_wall = edited_ms, edited_wall
  trace('edited (unsaved)')
  local function clean()
    local diags = snapshot(bufnr)
    for _, d in ipairs(diags) do
      for _, stale in ipairs(plan.stale) do
        if d.message:find(stale, 1, true) then
          return false
        end
      end
    end
    for _, want in ipairs(plan.expect_after) do
      local found = false
      for _, d in ipairs(diags) do
        if type(d.source) == 'string' and d.source:lower() == want[1]:lower() and d.message:find(want[2], 1, true) then
          found = true
        end
      end
      if not found then
        return false
      end
    end
    return true
  end
  if wait_for('diagnostics of the edited text only', plan.deadline, clean) then
    out.clean_ms, out.clean_wall = now_ms() - edited_ms, wall()
  end
  -- Keep watching a little: a late stale publish must not bring old diagnostics back.
  wait_for('no change for ' .. plan.quiet .. ' s after the edit', plan.deadline, function()
    return quiet_for(plan.quiet)
  end)
  out.after = snapshot(bufnr)
  out.text = buffer_text(bufnr)
end

function scenarios.watch(bufnr)
  out.before = settle(bufnr, 'initial diagnostics')
  -- Another program (git, an agent) rewrites a configuration file on disk.
  vim.fn.writefile(vim.split(plan.disk_text, '\n', { plain = true }), plan.disk_file, 'b')
  local written_ms = now_ms()
  trace('wrote ' .. plan.disk_file)
  local function gone()
    for _, d in ipairs(snapshot(bufnr)) do
      if type(d.source) == 'string' and d.source:lower() == plan.gone[1]:lower() and d.code == plan.gone[2] then
        return false
      end
    end
    return true
  end
  if wait_for(plan.gone[1] .. ' ' .. plan.gone[2] .. ' gone after the disk change', plan.deadline, gone) then
    out.gone_ms = now_ms() - written_ms
  end
  out.after = snapshot(bufnr)
end

--- Go to the definition of the name at `at` ({line, byte column}) as a user would
--- (vim.lsp.buf.definition, asked again while the server answers nothing), and record where the
--- cursor lands: the line's text before it and the word under it.
local function jump(bufnr, at)
  local landed = false
  local deadline = vim.uv.hrtime() + plan.deadline * 1e9
  while not landed and vim.uv.hrtime() < deadline do
    vim.api.nvim_win_set_cursor(0, { at[1] + 1, at[2] })
    vim.lsp.buf.definition()
    landed = vim.wait(1000, function()
      return vim.api.nvim_win_get_cursor(0)[1] - 1 ~= at[1]
    end, 20)
  end
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, true)[1]
  trace((landed and 'jumped to ' or 'TIMEOUT: no jump, at ') .. (row - 1) .. ':' .. col)
  return { line = row - 1, before = line:sub(1, col), word = vim.fn.expand('<cword>') }
end

--- Byte column of `name` in line `row` of the buffer.
local function column_of(bufnr, row, name)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, true)[1]
  return line:find(name, 1, true) - 1
end

function scenarios.definition(bufnr)
  local client = initialized_client(bufnr)
  out.offset_encoding = client and client.offset_encoding or vim.NIL
  local row = plan.usage_line
  out.jumps = { jump(bufnr, { row, column_of(bufnr, row, plan.name) }) }
  -- Incremental edits with non-BMP text before the names, on both lines.
  for _, e in ipairs(plan.inserts) do -- { line, after this text, insert this }
    local col = column_of(bufnr, e[1], e[2]) + #e[2]
    vim.api.nvim_buf_set_text(bufnr, e[1], col, e[1], col, { e[3] })
  end
  trace('edited (unsaved)')
  table.insert(out.jumps, jump(bufnr, { row, column_of(bufnr, row, plan.name) }))
  out.text = buffer_text(bufnr)
end

function scenarios.code_action(bufnr)
  out.before = settle(bufnr, 'initial diagnostics')
  local before = buffer_text(bufnr)
  vim.api.nvim_win_set_cursor(0, { plan.cursor[1] + 1, plan.cursor[2] })
  out.offered, out.matching, out.menu = {}, {}, vim.NIL
  vim.ui.select = function(items, _, on_choice) -- a menu opened instead of applying: record, pick none
    out.menu = {}
    for _, item in ipairs(items) do
      table.insert(out.menu, item.action.title)
    end
    on_choice(nil)
  end
  local answered = false
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      answered = true
      table.insert(out.offered, action.title)
      local match = action.title:find(plan.action_title, 1, true) ~= nil
      if match then
        table.insert(out.matching, action.title)
      end
      return match
    end,
  })
  wait_for('code actions answered', plan.deadline, function()
    return answered
  end)
  wait_for('the chosen action changed the buffer', plan.apply_deadline, function()
    return buffer_text(bufnr) ~= before
  end)
  out.text = buffer_text(bufnr)
end

function scenarios.semantic(bufnr)
  local client = initialized_client(bufnr)
  if not client then
    return
  end
  out.semantic_provider = client.server_capabilities.semanticTokensProvider or vim.NIL
  if out.semantic_provider == vim.NIL then
    return -- Neovim will never ask for tokens: nothing to wait for
  end
  local st = vim.lsp.semantic_tokens.__STHighlighter
  local function highlighter_version()
    local hl = st.active[bufnr]
    local state = hl and hl.client_state[client.id]
    return state and state.current_result.version or nil
  end
  local function caught_up()
    return highlighter_version() == vim.lsp.util.buf_versions[bufnr]
  end
  wait_for('semantic tokens for the opened text', plan.deadline, caught_up)
  out.version_before = highlighter_version() or vim.NIL
  apply_edits(bufnr)
  trace('edited (unsaved)')
  out.buffer_version = vim.lsp.util.buf_versions[bufnr]
  wait_for('semantic tokens for the edited text', plan.deadline, caught_up)
  out.version_after = highlighter_version() or vim.NIL
  out.buffer_version_after = vim.lsp.util.buf_versions[bufnr]
  local tokens = vim.lsp.semantic_tokens.get_at_pos(bufnr, plan.token_at[1], plan.token_at[2]) or {}
  out.tokens_at = {}
  for _, tok in ipairs(tokens) do
    table.insert(out.tokens_at, { type = tok.type, modifiers = vim.tbl_keys(tok.modifiers or {}) })
  end
end

local function run()
  vim.lsp.log.set_level(plan.lsp_log_level or 'debug')
  out.nvim_version = tostring(vim.version())
  vim.cmd.edit(vim.fn.fnameescape(plan.file))
  local bufnr = vim.api.nvim_get_current_buf()
  watch(bufnr)
  out.filetype = vim.bo[bufnr].filetype
  wait_for('lspmux attached to ' .. plan.file, plan.deadline, function()
    return lspmux_client(bufnr) ~= nil
  end)
  scenarios[plan.scenario](bufnr)
  out.timeline = timeline
  out.lsp_log = vim.lsp.get_log_path()
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  out.error = err
end
out.timeline = timeline
-- Stop lspmux the way Neovim does on exit, and wait for it to be gone (it stops its servers).
local clients = vim.lsp.get_clients({ name = 'lspmux' })
for _, c in ipairs(clients) do
  c:stop()
end
wait_for('lspmux stopped', 10, function()
  for _, c in ipairs(clients) do
    if not c:is_stopped() then
      return false
    end
  end
  return true
end)
vim.fn.writefile({ vim.json.encode(out) }, plan.out)
vim.cmd('qall!')
