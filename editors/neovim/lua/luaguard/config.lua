--- The luaguard server configuration for vim.lsp.config, and how it is started.
---
--- Server command, in order: `opts.cmd`; `{opts.python, '-P', '-m', 'luaguard', 'serve'}`;
--- `luaguard serve` when a `luaguard` executable is on PATH; else
--- `python3 -P -m luaguard serve` (`-P` keeps the workspace off Python's import path).
local M = {}

--- Files that mark a luaguard/Rojo project root (a `*.project.json` counts too).
M.root_files = { 'luaguard.toml', 'default.project.json', 'sourcemap.json' }

--- Whether `name` marks a project root.
---@param name string
---@return boolean
function M.is_root_marker(name)
  return vim.tbl_contains(M.root_files, name) or name:match('%.project%.jsonc?$') ~= nil
end

--- The command that starts the server (see the module comment).
---@param opts? { cmd?: string[], python?: string }
---@return string[]
function M.server_cmd(opts)
  opts = opts or {}
  if opts.cmd then
    return opts.cmd
  end
  if opts.python then
    return { opts.python, '-P', '-m', 'luaguard', 'serve' }
  end
  if vim.fn.executable('luaguard') == 1 then
    return { 'luaguard', 'serve' }
  end
  return { vim.fn.executable('python3') == 1 and 'python3' or 'python', '-P', '-m', 'luaguard', 'serve' }
end

--- The project root of buffer `bufnr`: the nearest directory with a project marker,
--- else the git root, else the file's directory.
---@param bufnr integer
---@param on_dir fun(dir: string?)
function M.root_dir(bufnr, on_dir)
  local root = vim.fs.root(bufnr, function(name)
    return M.is_root_marker(name)
  end) or vim.fs.root(bufnr, '.git')
  if not root then
    local name = vim.api.nvim_buf_get_name(bufnr)
    root = name ~= '' and vim.fs.dirname(name) or vim.fn.getcwd()
  end
  on_dir(root)
end

--- The default vim.lsp.config table for 'luaguard'.
---@param opts? { cmd?: string[], python?: string, settings?: table }
---@return vim.lsp.Config
function M.default(opts)
  opts = opts or {}
  return {
    cmd = M.server_cmd(opts),
    filetypes = { 'luau', 'lua' },
    root_dir = M.root_dir,
    -- Answered to the server's workspace/configuration request for section "luaguard".
    -- Keys: projectFile, sourcemapFile, placeholderMode ("editor" | "patch"),
    -- rules = { rule_id = "off" | "error" | "warning" | "information" | "hint" },
    -- completion = { enabled, model, minConfidence, maxTokens }, debounceMs.
    settings = { luaguard = opts.settings or vim.empty_dict() },
    on_exit = function(code, signal, client_id)
      if code ~= 0 or (signal and signal ~= 0) then
        vim.schedule(function()
          require('luaguard.health').explain_exit(code, signal, client_id)
        end)
      end
    end,
  }
end

return M
