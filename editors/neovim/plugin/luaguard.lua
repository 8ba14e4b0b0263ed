-- luaguard user commands (the server itself is configured by require('luaguard').setup()
-- or vim.lsp.enable('luaguard'); see editors/neovim/README.md).
if vim.g.loaded_luaguard or vim.fn.has('nvim-0.11') ~= 1 then
  return
end
vim.g.loaded_luaguard = true

local function luaguard()
  return require('luaguard')
end

vim.api.nvim_create_user_command('LuaguardValidateToolCall', function(opts)
  luaguard().validate('tool_call', opts)
end, {
  range = true,
  nargs = '?',
  desc = 'luaguard: validate an AI tool call from the selected lines or a register (default +)',
})

vim.api.nvim_create_user_command('LuaguardValidatePatch', function(opts)
  luaguard().validate('patch', opts)
end, {
  range = true,
  nargs = '?',
  desc = 'luaguard: validate a patch (whole file or unified diff) for this buffer from the selected lines or a register',
})

vim.api.nvim_create_user_command('LuaguardStats', function()
  luaguard().stats()
end, { desc = 'luaguard: findings by rule in this session' })

vim.api.nvim_create_user_command('LuaguardRestart', function()
  luaguard().restart()
end, { desc = 'luaguard: restart the language server' })
