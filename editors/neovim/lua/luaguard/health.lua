--- `:checkhealth luaguard`, and the message shown when the server exits with an error
--- (Python missing, luaguard not installed in it, or a crash).
local M = {}

--- Printed by the interpreter as one JSON line (the same probe as the VS Code extension).
M.PROBE = table.concat({
  'import json, sys',
  "out = {'executable': sys.executable, 'version': '%d.%d.%d' % sys.version_info[:3], 'luaguard': None, 'importError': None}",
  'if sys.version_info >= (3, 11):',
  '    try:',
  '        import luaguard',
  "        out['luaguard'] = getattr(luaguard, '__version__', '?')",
  '        import luaguard.lsp.server',
  '    except ModuleNotFoundError as e:',
  "        if e.name != 'luaguard':",
  "            out['importError'] = '%s: %s' % (type(e).__name__, e)",
  '    except Exception as e:',
  "        out['importError'] = '%s: %s' % (type(e).__name__, e)",
  'print(json.dumps(out))',
}, '\n')

--- The interpreter part of a server command (`{python, '-P', '-m', 'luaguard', 'serve'}`
--- -> `{python}`), or nil when the command is not a Python module invocation.
---@param cmd string[]
---@return string[]?
function M.interpreter_of(cmd)
  for i, arg in ipairs(cmd) do
    if arg == '-m' and (cmd[i + 1] == 'luaguard' or cmd[i + 1] == 'luaguard.cli') then
      local last = i - 1
      if cmd[last] == '-P' then
        last = last - 1
      end
      return vim.list_slice(cmd, 1, last)
    end
  end
  return nil
end

--- Run the probe with `python` (a command list).  Returns the decoded table, or nil and
--- the reason it could not run.
---@param python string[]
---@param timeout_ms? integer
---@return table?, string?
function M.probe(python, timeout_ms)
  if vim.fn.executable(python[1]) ~= 1 then
    return nil, ('`%s` not found'):format(python[1])
  end
  local argv = vim.list_extend(vim.list_slice(python), { '-c', M.PROBE })
  local ok, obj = pcall(function()
    return vim.system(argv, { text = true }):wait(timeout_ms or 20000)
  end)
  if not ok then
    return nil, tostring(obj)
  end
  local line = vim.iter(vim.split(obj.stdout or '', '\n', { trimempty = true })):rev():find(function(l)
    return l:sub(1, 1) == '{'
  end)
  if obj.code ~= 0 or not line then
    return nil, ('exit code %d: %s'):format(obj.code, vim.trim(obj.stderr or ''))
  end
  local decoded_ok, data = pcall(vim.json.decode, line)
  if not decoded_ok or type(data) ~= 'table' then
    return nil, 'unexpected output: ' .. line
  end
  return data, nil
end

--- Whether "3.11.4" is at least 3.11.
---@param version string
---@return boolean
function M.supported_python(version)
  local major, minor = version:match('^(%d+)%.(%d+)')
  major, minor = tonumber(major), tonumber(minor)
  return major ~= nil and (major > 3 or (major == 3 and minor >= 11))
end

--- A sentence saying what is wrong with `cmd` as a server command, or nil when the probe
--- finds nothing wrong (the server then crashed for another reason).
---@param cmd string[]
---@return string?
function M.diagnose(cmd)
  local python = M.interpreter_of(cmd)
  if not python then
    if vim.fn.executable(cmd[1]) ~= 1 then
      return ('`%s` is not executable or not on PATH. Install luaguard from a clone of its repository (`python3 -m pip install /path/to/luaguard`; it is not on PyPI yet) or pass `python = "/path/to/python"` to require("luaguard").setup().'):format(cmd[1])
    end
    return nil
  end
  local info, err = M.probe(python)
  if not info then
    return ('cannot run the Python interpreter `%s` (%s). Pass `python = "/path/to/python3.11+"` to require("luaguard").setup().'):format(table.concat(python, ' '), err)
  end
  if not M.supported_python(info.version) then
    return ('luaguard needs Python 3.11 or newer; %s is Python %s.'):format(info.executable, info.version)
  end
  if info.luaguard == vim.NIL or info.luaguard == nil then
    return ('luaguard is not installed in %s (Python %s). Install it from a clone of the luaguard repository with `%s -m pip install /path/to/luaguard` (it is not on PyPI yet), or pass another interpreter as `python` to require("luaguard").setup().'):format(
      info.executable,
      info.version,
      info.executable
    )
  end
  if info.importError ~= vim.NIL and info.importError ~= nil then
    return ('luaguard %s in %s cannot start: %s. Reinstall it there.'):format(info.luaguard, info.executable, info.importError)
  end
  return nil
end

--- Called (scheduled) when the server exits with a non-zero code or a signal.
---@param code integer
---@param signal integer
---@param client_id integer
function M.explain_exit(code, signal, client_id)
  if vim.v.exiting ~= vim.NIL then
    return
  end
  local config = vim.lsp.config.luaguard or {}
  local cmd = type(config.cmd) == 'table' and config.cmd or {}
  local why = (#cmd > 0) and M.diagnose(cmd) or nil
  local how = (signal and signal ~= 0) and ('signal %d'):format(signal) or ('exit code %d'):format(code)
  if why then
    vim.notify('luaguard: the server could not start: ' .. why, vim.log.levels.ERROR)
  else
    vim.notify(
      ('luaguard: the server stopped unexpectedly (%s, client %d). Details in :LspLog. Restart it with :LuaguardRestart.'):format(how, client_id),
      vim.log.levels.ERROR
    )
  end
end

--- `:checkhealth luaguard`.
function M.check()
  local health = vim.health
  health.start('luaguard')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.11 or newer is needed (vim.lsp.config / vim.lsp.enable)')
    return
  end
  local config = vim.lsp.config.luaguard
  if not config or type(config.cmd) ~= 'table' then
    health.error('no vim.lsp.config for luaguard: call require("luaguard").setup()')
    return
  end
  health.info('server command: ' .. table.concat(config.cmd, ' '))
  local why = M.diagnose(config.cmd)
  if why then
    health.error(why)
  else
    local python = M.interpreter_of(config.cmd)
    local info = python and M.probe(python)
    health.ok(info and ('luaguard %s on Python %s (%s)'):format(info.luaguard, info.version, info.executable) or 'server command found')
  end
  if vim.lsp.is_enabled and not vim.lsp.is_enabled('luaguard') then
    health.warn('luaguard is configured but not enabled: call require("luaguard").setup() or vim.lsp.enable("luaguard")')
  end
  local clients = vim.lsp.get_clients({ name = 'luaguard' })
  if #clients == 0 then
    health.info('no luaguard client running (open a .luau file)')
  end
  for _, client in ipairs(clients) do
    health.ok(('client %d running, root %s'):format(client.id, client.root_dir or '(none)'))
  end
end

return M
