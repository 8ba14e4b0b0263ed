--- Markdown for validation answers and stats, shown in a scratch buffer
--- (`luaguard://results`, filetype markdown) in a split that is reused.
local M = {}

local function is_list(v)
  return type(v) == 'table' and vim.islist(v)
end

local function is_map(v) -- an empty table counts as both (JSON {} and [] decode alike)
  return type(v) == 'table' and (next(v) == nil or not vim.islist(v))
end

local function str(v)
  if v == nil or v == vim.NIL then
    return ''
  end
  return tostring(v)
end

local function json_block(value)
  local ok, text = pcall(vim.json.encode, value)
  return { '```json', ok and text or vim.inspect(value), '```' }
end

--- One error/finding as list items: code, field or line, message, suggestions.
---@param p any
---@return string[]
local function problem(p)
  if not is_map(p) then
    return { '- ' .. str(p) }
  end
  local rule = p.code or p.rule or p.rule_id or p.ruleId
  local where = {}
  if type(p.field) == 'string' and p.field ~= '' then
    where[#where + 1] = ('field `%s`'):format(p.field)
  end
  local line = type(p.line) == 'number' and p.line
    or (is_map(p.range) and is_map(p.range.start) and type(p.range.start.line) == 'number' and p.range.start.line + 1)
  -- Patch findings carry "file" and already start their message with "file:line: ".
  if line and type(p.file) ~= 'string' then
    where[#where + 1] = ('line %d'):format(line)
  end
  local head = ('- %s%s%s: %s'):format(
    type(p.severity) == 'string' and (p.severity .. ' ') or '',
    rule and ('**%s**'):format(str(rule)) or '',
    #where > 0 and (' (' .. table.concat(where, ', ') .. ')') or '',
    str(p.message)
  )
  local out = { head }
  if is_list(p.suggestions) and #p.suggestions > 0 then
    local names = vim.tbl_map(function(s)
      return '`' .. str(s) .. '`'
    end, vim.list_slice(p.suggestions, 1, 5))
    out[#out + 1] = '  - did you mean: ' .. table.concat(names, ', ')
  end
  return out
end

local function verdict(r, index)
  local out = {}
  if index then
    out[#out + 1] = ('### Call %d%s%s'):format(
      index,
      type(r.line) == 'number' and (' (input line %d)'):format(r.line) or '',
      type(r.tool) == 'string' and (': `' .. r.tool .. '`') or ''
    )
    out[#out + 1] = ''
  end
  out[#out + 1] = r.valid == true and '**Valid.**' or '**Invalid.**'
  local problems = is_list(r.errors) and r.errors or (is_list(r.findings) and r.findings or {})
  if #problems > 0 then
    out[#out + 1] = ''
    for _, p in ipairs(problems) do
      vim.list_extend(out, problem(p))
    end
  end
  if is_list(r.warnings) and #r.warnings > 0 then
    vim.list_extend(out, { '', 'Warnings:', '' })
    for _, p in ipairs(r.warnings) do
      vim.list_extend(out, problem(p))
    end
  end
  if type(r.feedback) == 'string' and vim.trim(r.feedback) ~= '' then
    vim.list_extend(out, { '', 'Feedback for the model:', '' })
    for _, l in ipairs(vim.split(r.feedback, '\n')) do
      out[#out + 1] = '> ' .. l
    end
  end
  return out
end

--- Lines of markdown for a validation answer.
---@param label string "tool call" | "patch"
---@param origin string where the text came from
---@param result any the server's answer
---@return string[]
function M.validation(label, origin, result)
  local out = { ('# luaguard: %s validation'):format(label), '', ('Input: %s.'):format(origin), '' }
  if is_list(result) and #result > 0 and vim.iter(result):all(function(r)
    return is_map(r) and r.valid ~= nil
  end) then
    local valid = #vim.tbl_filter(function(r)
      return r.valid == true
    end, result)
    out[#out + 1] = ('%d of %d valid.'):format(valid, #result)
    for i, r in ipairs(result) do
      out[#out + 1] = ''
      vim.list_extend(out, verdict(r, i))
    end
  elseif is_map(result) and result.valid ~= nil then
    vim.list_extend(out, verdict(result, nil))
  elseif is_map(result) and (is_list(result.findings) or is_list(result.diagnostics)) then
    local list = is_list(result.findings) and result.findings or result.diagnostics
    if #list == 0 then
      out[#out + 1] = 'No problems found.'
    end
    for _, p in ipairs(list) do
      vim.list_extend(out, problem(p))
    end
  else
    vim.list_extend(out, json_block(result))
  end
  return out
end

--- Lines of markdown for `luaguard.stats` (`{ rules = { rule = count }, files = n }`).
---@param result any
---@return string[]
function M.stats(result)
  local out = { '# luaguard: hallucination stats (this session)', '' }
  if not is_map(result) or not is_map(result.rules) then
    return vim.list_extend(out, json_block(result))
  end
  local rows, total = {}, 0
  for rule, n in pairs(result.rules) do
    if type(n) == 'number' then
      rows[#rows + 1] = { rule, n }
      total = total + n
    end
  end
  table.sort(rows, function(a, b)
    return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1])
  end)
  out[#out + 1] = ('%d finding(s)%s.'):format(total, type(result.files) == 'number' and (' in %d linted file(s)'):format(result.files) or '')
  if #rows > 0 then
    vim.list_extend(out, { '', '| rule | findings |', '| --- | ---: |' })
    for _, row in ipairs(rows) do
      out[#out + 1] = ('| `%s` | %d |'):format(row[1], row[2])
    end
  end
  if is_map(result.toolcalls) then
    local t = result.toolcalls
    local function n(k)
      return type(t[k]) == 'number' and t[k] or 0
    end
    vim.list_extend(out, {
      '',
      ('Tool calls: %d validated, %d rejected. Patches: %d validated, %d rejected.'):format(n('calls'), n('invalid'), n('patches'), n('invalid_patches')),
    })
  end
  return out
end

--- Show `lines` in the results buffer (created on first use, reused afterwards).
---@param lines string[]
---@return integer bufnr
function M.show(lines)
  local name = 'luaguard://results'
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].buftype = 'nofile'
    vim.bo[bufnr].bufhidden = 'hide'
    vim.bo[bufnr].swapfile = false
    vim.bo[bufnr].filetype = 'markdown'
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    local current = vim.api.nvim_get_current_win()
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, bufnr)
    vim.api.nvim_win_set_height(0, math.min(math.max(#lines, 5), 15))
    vim.api.nvim_set_current_win(current)
  end
  return bufnr
end

return M
