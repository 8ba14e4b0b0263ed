-- Unit checks of the plugin's pure Lua helpers: nvim --headless --clean -l tests/editors/neovim/unit.lua PLUGIN_DIR
-- Prints one line per failure and exits 1 if any failed.
vim.opt.runtimepath:prepend(assert(arg[1], 'usage: nvim -l unit.lua PLUGIN_DIR'))
local failures = 0
local function check(name, got, want)
  if not vim.deep_equal(got, want) then
    failures = failures + 1
    io.stderr:write(('FAIL %s:\n  got  %s\n  want %s\n'):format(name, vim.inspect(got), vim.inspect(want)))
  end
end

local health = require('luaguard.health')
check('supported 3.11', health.supported_python('3.11.0'), true)
check('supported 3.13', health.supported_python('3.13.1'), true)
check('unsupported 3.10', health.supported_python('3.10.9'), false)
check('unsupported garbage', health.supported_python('x'), false)
check('interpreter_of module cmd', health.interpreter_of({ 'py', '-3.12', '-m', 'luaguard.cli', 'serve' }), { 'py', '-3.12' })
check('interpreter_of script cmd', health.interpreter_of({ 'luaguard', 'serve' }), nil)
check('diagnose missing executable', health.diagnose({ '/nonexistent/luaguard', 'serve' }):match('is not executable') ~= nil, true)
check('diagnose missing python', health.diagnose({ '/nonexistent/python', '-m', 'luaguard.cli', 'serve' }):match('cannot run the Python interpreter') ~= nil, true)

local config = require('luaguard.config')
check('server_cmd python', config.server_cmd({ python = '/x/python' }), { '/x/python', '-P', '-m', 'luaguard', 'serve' })
check('interpreter_of -P module cmd', health.interpreter_of({ '/x/python', '-P', '-m', 'luaguard', 'serve' }), { '/x/python' })
check('server_cmd cmd wins', config.server_cmd({ cmd = { 'a' }, python = '/x' }), { 'a' })
check('root marker project', config.is_root_marker('game.project.json'), true)
check('root marker sourcemap', config.is_root_marker('sourcemap.json'), true)
check('root marker other', config.is_root_marker('project.json.bak'), false)

local results = require('luaguard.results')
local md = table.concat(results.validation('tool call', 'register +', {
  { valid = true, errors = {}, feedback = '' },
  { valid = false, errors = { { code = 'unknown_path', field = 'path', message = 'no such path', suggestions = { 'ServerScriptService.Main' } } }, feedback = 'Fix the path.' },
}), '\n')
check('validation count', md:match('1 of 2 valid%.') ~= nil, true)
check('validation error line', md:match("%- %*%*unknown_path%*%* %(field `path`%): no such path") ~= nil, true)
check('validation suggestion', md:match('did you mean: `ServerScriptService%.Main`') ~= nil, true)
check('validation feedback', md:match('> Fix the path%.') ~= nil, true)
local findings = table.concat(results.validation('patch', 'lines 1-3', { findings = { { rule = 'placeholder', message = 'placeholder', range = { start = { line = 2, character = 0 } } } } }), '\n')
check('patch finding line', findings:match('%*%*placeholder%*%* %(line 3%)') ~= nil, true)
local stats = results.stats({ rules = { placeholder = 1, unknown_instance = 3 }, files = 2 })
check('stats total', stats[3], '4 finding(s) in 2 linted file(s).')
check('stats order', { stats[7], stats[8] }, { '| `unknown_instance` | 3 |', '| `placeholder` | 1 |' })

local patch = table.concat(results.validation('patch', 'register b', {
  valid = false,
  errors = { { code = 'placeholder', message = 'src/a.luau:12: Placeholder', range = { start = { line = 11, character = 0 } }, file = 'src/a.luau', suggestions = {} } },
  warnings = { { code = 'deprecated_property', message = 'old', field = 'property', suggestions = {} } },
  feedback = 'Write it.',
}), '\n')
check('patch error keeps its file:line', patch:match('%- %*%*placeholder%*%*: src/a%.luau:12: Placeholder') ~= nil, true)
check('patch warning listed', patch:match('Warnings:\n\n%- %*%*deprecated_property%*%* %(field `property`%): old') ~= nil, true)
local tc = results.stats({ rules = {}, files = 0, toolcalls = { calls = 3, invalid = 2, patches = 1, invalid_patches = 1 } })
check('stats toolcalls', tc[#tc], 'Tool calls: 3 validated, 2 rejected. Patches: 1 validated, 1 rejected.')
local luaguard = require('luaguard')
check('diff detected', luaguard.looks_like_diff('--- a/x.luau\n+++ b/x.luau\n@@ -1,2 +1,3 @@\n a\n+b\n'), true)
check('file is not a diff', luaguard.looks_like_diff('local x = 1\n-- @@ -1 +1 @@ in a comment\nreturn x\n'), false)

if failures > 0 then
  os.exit(1)
end
print('ok')
