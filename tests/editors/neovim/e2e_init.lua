-- Headless Neovim end-to-end test of the luaguard plugin (run by tests/test_editor_neovim.py):
--
--   LUAGUARD_PLUGIN=editors/neovim LUAGUARD_PYTHON=/path/python LUAGUARD_RESULT=out.json \
--     timeout 90 nvim --headless --clean -u tests/editors/neovim/e2e_init.lua WORKSPACE/src/shared/Modules/Combat.luau
--
-- Loads the plugin the way a user does (runtimepath + require('luaguard').setup()), opens
-- the file, waits for the unknown_instance diagnostic, applies the preferred quick fix
-- through vim.lsp.buf.code_action, writes the file, waits for the diagnostics to clear,
-- runs :LuaguardStats, and asks for completions when the server offers them.  Every step
-- is recorded in the JSON result; the Python test asserts on it (and on the file on disk).
-- Exit: 0 when the script ran to the end, 1 on a Lua error (recorded as "error").

local result = { steps = {} }
local out_path = assert(os.getenv('LUAGUARD_RESULT'), 'LUAGUARD_RESULT not set')

local function finish(code)
  local f = assert(io.open(out_path, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd(code == 0 and 'qall!' or 'cquit! ' .. code)
end

local function step(name, value)
  result.steps[#result.steps + 1] = name
  result[name] = value == nil and true or value
end

local function luaguard_diagnostics(bufnr)
  return vim.tbl_filter(function(d)
    return d.source == 'luaguard'
  end, vim.diagnostic.get(bufnr))
end

local function run()
  vim.opt.runtimepath:prepend(assert(os.getenv('LUAGUARD_PLUGIN'), 'LUAGUARD_PLUGIN not set'))
  vim.cmd.runtime('plugin/luaguard.lua')
  local python = assert(os.getenv('LUAGUARD_PYTHON'), 'LUAGUARD_PYTHON not set')
  -- Completions: a low threshold so the small default model's guarded items are not withheld.
  require('luaguard').setup({ python = python, settings = { completion = { minConfidence = 0, maxTokens = 16 } } })
  step('config_cmd', vim.lsp.config.luaguard.cmd)
  local user_commands = vim.tbl_keys(vim.api.nvim_get_commands({}))
  table.sort(user_commands)
  result.commands = vim.tbl_filter(function(n)
    return n:match('^Luaguard') ~= nil
  end, user_commands)

  -- setup() ran after the file was loaded: re-fire FileType like a lazy-loaded plugin would.
  local bufnr = vim.api.nvim_get_current_buf()
  vim.cmd.doautoall('nvim.lsp.enable FileType')
  step('filetype', vim.bo[bufnr].filetype)

  local client
  local attached = vim.wait(30000, function()
    client = vim.lsp.get_clients({ bufnr = bufnr, name = 'luaguard' })[1]
    return client ~= nil and client.initialized == true
  end, 50)
  step('attached', attached)
  if not attached then
    return finish(0)
  end
  step('root_dir', client.root_dir)
  local caps = client.server_capabilities or {}
  step('execute_commands', caps.executeCommandProvider and caps.executeCommandProvider.commands or {})
  step('completion_provider', caps.completionProvider ~= nil)

  local diag
  local t0 = vim.uv.hrtime()
  local found = vim.wait(30000, function()
    for _, d in ipairs(luaguard_diagnostics(bufnr)) do
      if d.code == 'unknown_instance' then
        diag = d
        return true
      end
    end
    return false
  end, 50)
  step('diagnostic_ms', math.floor((vim.uv.hrtime() - t0) / 1e6))
  if not found then
    step('diagnostics', vim.tbl_map(function(d)
      return { code = d.code, message = d.message }
    end, luaguard_diagnostics(bufnr)))
    return finish(0)
  end
  step('diagnostic', { code = diag.code, message = diag.message, lnum = diag.lnum, col = diag.col, severity = diag.severity })

  -- The user's way: cursor on the diagnostic, code action, preferred quick fix applied.
  vim.api.nvim_win_set_cursor(0, { diag.lnum + 1, diag.col })
  local titles = {}
  local before = vim.api.nvim_buf_get_lines(bufnr, diag.lnum, diag.lnum + 1, false)[1]
  vim.lsp.buf.code_action({
    apply = true,
    context = { only = { 'quickfix' }, diagnostics = { diag.user_data.lsp } },
    filter = function(action)
      titles[#titles + 1] = action.title
      return action.isPreferred == true
    end,
  })
  local changed = vim.wait(10000, function()
    return vim.api.nvim_buf_get_lines(bufnr, diag.lnum, diag.lnum + 1, false)[1] ~= before
  end, 50)
  step('action_titles', titles)
  step('fix_applied', changed)
  step('fixed_line', vim.api.nvim_buf_get_lines(bufnr, diag.lnum, diag.lnum + 1, false)[1])
  vim.cmd.write()
  step('written', not vim.bo[bufnr].modified)

  local cleared = vim.wait(15000, function()
    return #vim.tbl_filter(function(d)
      return d.code == 'unknown_instance'
    end, luaguard_diagnostics(bufnr)) == 0
  end, 50)
  step('cleared', cleared)
  step('remaining', vim.tbl_map(function(d)
    return { code = d.code, message = d.message }
  end, luaguard_diagnostics(bufnr)))

  -- :LuaguardStats fills the results buffer.
  vim.cmd('LuaguardStats')
  local stats_buf
  vim.wait(10000, function()
    stats_buf = vim.fn.bufnr('luaguard://results')
    return stats_buf ~= -1 and vim.api.nvim_buf_line_count(stats_buf) > 2
  end, 50)
  step('stats_lines', stats_buf ~= -1 and vim.api.nvim_buf_get_lines(stats_buf, 0, -1, false) or {})

  -- Tool call from a register; patch (this file's full new text with a placeholder) from
  -- another register; tool call from a range of a scratch buffer.
  local function results_after(command, heading)
    local buf = vim.fn.bufnr('luaguard://results')
    if buf ~= -1 then
      vim.bo[buf].modifiable = true
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    end
    vim.cmd(command)
    local lines = {}
    vim.wait(30000, function()
      buf = vim.fn.bufnr('luaguard://results')
      lines = buf ~= -1 and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or {}
      return lines[1] == heading
    end, 50)
    return lines
  end
  local call = vim.json.encode({ name = 'read_script', arguments = { path = 'ServerScriptService.Server.Services.CombatServise' } })
  vim.fn.setreg('a', call)
  step('toolcall_lines', results_after('LuaguardValidateToolCall a', '# luaguard: tool call validation'))
  local content = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  table.insert(content, 14, '-- rest of code here')
  vim.fn.setreg('b', table.concat(content, '\n'))
  step('patch_lines', results_after('LuaguardValidatePatch b', '# luaguard: patch validation'))
  vim.cmd('enew')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'some words first', call })
  step('range_lines', results_after('2,2LuaguardValidateToolCall', '# luaguard: tool call validation'))
  vim.cmd('bwipeout!')
  vim.api.nvim_set_current_buf(bufnr)

  -- Completion, once the server offers it: ask at `game.ReplicatedStorage.` on a new line.
  if caps.completionProvider then
    local last = vim.api.nvim_buf_line_count(bufnr)
    vim.api.nvim_buf_set_lines(bufnr, last, last, false, { 'local probe = game.ReplicatedStorage.' })
    local line = vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1]
    local response = client:request_sync('textDocument/completion', {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      position = { line = last, character = #line },
    }, 60000, bufnr)
    local items = {}
    if response and response.result then
      local list = response.result.items or response.result
      for _, item in ipairs(list) do
        items[#items + 1] = { label = item.label, insertText = item.insertText, textEdit = item.textEdit and item.textEdit.newText }
      end
    end
    step('completion', { error = response and response.err and response.err.message or (response == nil and 'timeout' or nil), items = items })
    vim.api.nvim_buf_set_lines(bufnr, last, last + 1, false, {})
    vim.bo[bufnr].modified = false
  end
  finish(0)
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      local ok, err = xpcall(run, debug.traceback)
      if not ok then
        result.error = tostring(err)
        finish(1)
      end
    end)
  end,
})
