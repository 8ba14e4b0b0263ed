--- luaguard for Neovim >= 0.11: diagnostics and quick fixes from `luaguard serve`, plus
--- commands to validate AI tool calls and patches and to show hallucination stats.
---
---   require('luaguard').setup({
---     python = '/path/to/python',        -- or cmd = { 'luaguard', 'serve' }
---     settings = { placeholderMode = 'patch', rules = { likely_unknown_instance = 'off' } },
---   })
---
--- setup() registers the configuration with vim.lsp.config('luaguard', ...) and enables it
--- with vim.lsp.enable('luaguard').  The user commands are defined in plugin/luaguard.lua.
local config = require('luaguard.config')
local results = require('luaguard.results')

local M = {}

M.server_commands = {
  tool_call = 'luaguard.validateToolCall',
  patch = 'luaguard.validatePatch',
  stats = 'luaguard.stats',
}

---@class luaguard.Opts
---@field cmd? string[]     full server command (overrides python)
---@field python? string    Python interpreter with luaguard installed
---@field settings? table   the `luaguard` settings section sent to the server
---@field enable? boolean   call vim.lsp.enable (default true)
---@field config? table     any other vim.lsp.Config field (on_attach, capabilities, ...)

---@param opts? luaguard.Opts
function M.setup(opts)
  opts = opts or {}
  if vim.fn.has('nvim-0.11') ~= 1 then
    vim.notify('luaguard: Neovim 0.11 or newer is needed', vim.log.levels.ERROR)
    return
  end
  local cfg = config.default(opts)
  if vim.fn.executable(cfg.cmd[1]) ~= 1 then
    -- Neovim's own spawn error is easy to miss at start-up; say what to do instead.
    local why = require('luaguard.health').diagnose(cfg.cmd) or ('`%s` not found'):format(cfg.cmd[1])
    vim.notify('luaguard: the server cannot start: ' .. why, vim.log.levels.ERROR)
    return
  end
  if not opts.settings then
    cfg.settings = nil -- keep whatever an earlier vim.lsp.config('luaguard', ...) set
  end
  vim.lsp.config('luaguard', vim.tbl_deep_extend('force', cfg, opts.config or {}))
  if opts.enable ~= false then
    vim.lsp.enable('luaguard')
  end
end

--- The running luaguard client for `bufnr` (or any), or nil with a message.
---@param bufnr? integer
---@return vim.lsp.Client?
function M.client(bufnr)
  local clients = vim.lsp.get_clients({ name = 'luaguard', bufnr = bufnr })
  if #clients == 0 and bufnr then
    clients = vim.lsp.get_clients({ name = 'luaguard' })
  end
  if #clients == 0 then
    vim.notify('luaguard: no luaguard server is running (open a .luau file, or see :checkhealth luaguard)', vim.log.levels.WARN)
    return nil
  end
  return clients[1]
end

--- Whether `client` advertises the server command `name`.
---@param client vim.lsp.Client
---@param name string
---@return boolean
function M.has_command(client, name)
  local provider = client.server_capabilities and client.server_capabilities.executeCommandProvider
  return provider ~= nil and vim.tbl_contains(provider.commands or {}, name)
end

--- Run the server command `name` with `arguments`; `on_result(err, result)`.
---@param client vim.lsp.Client
---@param name string
---@param arguments table
---@param on_result fun(err: lsp.ResponseError?, result: any)
---@param bufnr? integer
function M.execute(client, name, arguments, on_result, bufnr)
  client:request('workspace/executeCommand', { command = name, arguments = arguments }, function(err, result)
    on_result(err, result)
  end, bufnr)
end

--- The text a command works on: the lines of `range` in the current buffer, else the
--- register `reg` (default: `+` when a clipboard provider exists, else `"`).
---@param cmd_opts table the user-command callback argument
---@return string text, string origin
function M.command_text(cmd_opts)
  if cmd_opts.range and cmd_opts.range > 0 then
    local lines = vim.api.nvim_buf_get_lines(0, cmd_opts.line1 - 1, cmd_opts.line2, false)
    local name = vim.fn.expand('%:t')
    return table.concat(lines, '\n'), ('lines %d-%d of %s'):format(cmd_opts.line1, cmd_opts.line2, name ~= '' and name or '[No Name]')
  end
  local reg = cmd_opts.args ~= '' and cmd_opts.args or (vim.fn.has('clipboard') == 1 and '+' or '"')
  return vim.fn.getreg(reg), ('register %s'):format(reg)
end

--- Whether `text` is a unified diff (file headers and a hunk header) rather than a file.
---@param text string
---@return boolean
function M.looks_like_diff(text)
  local hunk, header = false, false
  for line in vim.gsplit(text, '\n', { plain = true }) do
    hunk = hunk or line:match('^@@ %-%d+,?%d* %+%d+,?%d* @@') ~= nil
    header = header or line:match('^%-%-%- ') ~= nil or line:match('^%+%+%+ ') ~= nil
  end
  return hunk and header
end

--- `:LuaguardValidateToolCall` / `:LuaguardValidatePatch`.
---@param kind 'tool_call'|'patch'
---@param cmd_opts table
function M.validate(kind, cmd_opts)
  local label = kind == 'tool_call' and 'tool call' or 'patch'
  local bufnr = vim.api.nvim_get_current_buf()
  local text, origin = M.command_text(cmd_opts)
  if vim.trim(text) == '' then
    vim.notify(('luaguard: nothing to validate in %s; select lines or name a register holding the %s'):format(origin, label), vim.log.levels.WARN)
    return
  end
  local client = M.client(bufnr)
  if not client then
    return
  end
  local name = M.server_commands[kind]
  if not M.has_command(client, name) then
    vim.notify(('luaguard: this server cannot validate a %s (no %s command)'):format(label, name), vim.log.levels.WARN)
    return
  end
  -- luaguard.validateToolCall(text) -> list of verdicts; luaguard.validatePatch({uri,
  -- content} | {uri, diff}) -> one verdict, for this buffer when it is a Luau/Lua file
  -- (a diff may name its own files).
  local args
  if kind == 'tool_call' then
    args = { text }
  else
    local ft = vim.bo[bufnr].filetype
    local file = vim.api.nvim_buf_get_name(bufnr)
    local uri = (file ~= '' and (ft == 'luau' or ft == 'lua')) and vim.uri_from_bufnr(bufnr) or vim.NIL
    args = { M.looks_like_diff(text) and { uri = uri, diff = text } or { uri = uri, content = text } }
  end
  M.execute(client, name, args, function(err, result)
    if err then
      vim.notify(('luaguard: %s validation failed: %s'):format(label, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    results.show(results.validation(label, origin, result))
  end, bufnr)
end

--- `:LuaguardStats`.
function M.stats()
  local client = M.client(vim.api.nvim_get_current_buf())
  if not client then
    return
  end
  M.execute(client, M.server_commands.stats, {}, function(err, result)
    if err then
      vim.notify('luaguard: could not get the stats: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    results.show(results.stats(result))
  end)
end

--- `:LuaguardRestart`: stop the luaguard clients and start them again for every open
--- buffer they apply to (Neovim 0.11's documented disable/enable restart).
function M.restart()
  vim.lsp.enable('luaguard', false)
  local deadline = vim.uv.now() + 5000
  local function again()
    local alive = vim.lsp.get_clients({ name = 'luaguard' })
    if #alive > 0 and vim.uv.now() < deadline then
      vim.defer_fn(again, 50)
      return
    end
    for _, client in ipairs(alive) do
      client:stop(true)
    end
    vim.lsp.enable('luaguard', true)
  end
  again()
end

return M
