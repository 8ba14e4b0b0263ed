-- Default configuration of the luaguard language server for Neovim >= 0.11
-- (found on 'runtimepath' by vim.lsp.config; override any field with
-- vim.lsp.config('luaguard', {...}) or require('luaguard').setup({...})).
return require('luaguard.config').default()
