-- Interactive Neovim set-up for the terminal screenshot (run inside tmux by
-- tests/editors/neovim/screenshot.mjs): the plugin loaded as a user would, diagnostics
-- as virtual text, and once the unknown_instance diagnostic arrives the cursor moves to it
-- and the code-action menu opens.  The harness captures the screen, picks the fix, saves.
vim.opt.runtimepath:prepend(assert(os.getenv('LUAGUARD_PLUGIN'), 'LUAGUARD_PLUGIN not set'))
vim.cmd.runtime('plugin/luaguard.lua')
vim.o.termguicolors = true
vim.o.number = true
vim.o.signcolumn = 'yes'
vim.o.laststatus = 2
vim.o.ruler = true
vim.o.swapfile = false
vim.o.tabstop = 4
vim.o.shortmess = vim.o.shortmess .. 'I'
vim.o.statusline = ' %f %m%= luaguard: %{v:lua.LuaguardStatus()}  %l:%c '
vim.diagnostic.config({ virtual_text = { prefix = '●' }, signs = true, underline = true })

function _G.LuaguardStatus()
  local counts = { 0, 0 }
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.source == 'luaguard' and d.severity <= 2 then
      counts[d.severity] = counts[d.severity] + 1
    end
  end
  local attached = #vim.lsp.get_clients({ bufnr = 0, name = 'luaguard' }) > 0
  return attached and ('%d error(s), %d warning(s)'):format(counts[1], counts[2]) or 'not attached'
end

require('luaguard').setup({ python = assert(os.getenv('LUAGUARD_PYTHON'), 'LUAGUARD_PYTHON not set') })

local shown = false
vim.api.nvim_create_autocmd('DiagnosticChanged', {
  callback = function(args)
    if shown then
      return
    end
    for _, d in ipairs(vim.diagnostic.get(args.buf)) do
      if d.code == 'unknown_instance' then
        shown = true
        vim.schedule(function()
          vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
          vim.cmd('normal! zz')
          vim.cmd.redraw()
          vim.lsp.buf.code_action({ context = { only = { 'quickfix' }, diagnostics = { d.user_data.lsp } } })
        end)
        return
      end
    end
  end,
})
