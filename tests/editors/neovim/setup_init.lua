-- Headless Neovim check of the plugin's messages on bad set-ups (run by
-- tests/test_editor_neovim.py):
--
--   LUAGUARD_PLUGIN=editors/neovim LUAGUARD_CMD='["/usr/bin/python3","-m","luaguard.cli","serve"]' \
--   LUAGUARD_RESULT=out.json [LUAGUARD_RESTART=1] \
--     timeout 90 nvim --headless --clean -u tests/editors/neovim/setup_init.lua FILE.luau
--
-- Records every vim.notify message, waits until one at ERROR level arrives (or 20 s), and with
-- LUAGUARD_RESTART=1 then runs :LuaguardRestart and waits for luaguard diagnostics.
local result = { notifications = {} }
local out_path = assert(os.getenv('LUAGUARD_RESULT'), 'LUAGUARD_RESULT not set')

local function finish(code)
  local f = assert(io.open(out_path, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd(code == 0 and 'qall!' or 'cquit! ' .. code)
end

vim.notify = function(msg, level)
  table.insert(result.notifications, { message = tostring(msg), level = level or vim.log.levels.INFO })
end

local function errors()
  return vim.tbl_filter(function(n)
    return n.level == vim.log.levels.ERROR
  end, result.notifications)
end

local function run()
  vim.opt.runtimepath:prepend(assert(os.getenv('LUAGUARD_PLUGIN'), 'LUAGUARD_PLUGIN not set'))
  vim.cmd.runtime('plugin/luaguard.lua')
  require('luaguard').setup({ cmd = vim.json.decode((assert(os.getenv('LUAGUARD_CMD'), 'LUAGUARD_CMD not set'))) })
  local bufnr = vim.api.nvim_get_current_buf()
  pcall(vim.cmd.doautoall, 'nvim.lsp.enable FileType') -- absent when setup() refused to enable
  result.got_error = vim.wait(30000, function()
    return #errors() > 0
  end, 50)
  if os.getenv('LUAGUARD_RESTART') == '1' and result.got_error then
    local first = vim.lsp.get_clients({ name = 'luaguard', _uninitialized = true })[1]
    result.first_client_alive = first ~= nil and not first:is_stopped()
    vim.cmd('LuaguardRestart')
    result.restarted = vim.wait(30000, function()
      for _, d in ipairs(vim.diagnostic.get(bufnr)) do
        if d.source == 'luaguard' and d.code == 'unknown_instance' then
          return true
        end
      end
      return false
    end, 50)
    local now = vim.lsp.get_clients({ name = 'luaguard', bufnr = bufnr })[1]
    result.new_client = now ~= nil and (first == nil or now.id ~= first.id)
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
