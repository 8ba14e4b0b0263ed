"""The guard's automaton and matcher: instance paths, placeholders, brackets, grounded numbers,
masks.  Most tests use a one-byte-per-token vocabulary so every byte is a token boundary;
boundary-spanning tokens use extra multi-byte tokens."""

from __future__ import annotations

import random

import numpy as np

import pytest
from guard_support import SAMPLES
from luaguard.engine import Engine
from luaguard.guard.matcher import Guard, GuardOptions, guard_for
from luaguard.guard.token_bytes import TokenTable
from luaguard.project.index import load_project

EOS = 256
COMBAT = "src/server/Services/CombatService.luau"
EXTRA = [b"Modules.", b"Modulez.", b"Util.Maid", b"Utl.", b'"Util")', b'"Folder")', b"end)", b")\n", b" end",
         b"-- TODO", b"game.", b"Shared.", b"x.", b"..."]


def _table(extra=()) -> TokenTable:
    toks: list[bytes | None] = [bytes([b]) for b in range(256)] + [None] + list(extra)
    return TokenTable(size=len(toks), token_bytes=toks, eos_ids=frozenset({EOS}), kind="byte_level")


BYTES = _table()
MULTI = _table(EXTRA)


@pytest.fixture(scope="module")
def project():
    return load_project(SAMPLES)


@pytest.fixture(scope="module")
def guard(project) -> Guard:
    return guard_for(BYTES, project)


def feed(guard: Guard, prompt: str, text: str, *, scripts=()):
    """The cursor after ``text`` (one byte per token), or None when a byte is rejected."""
    cur = guard.start(prompt, scripts=scripts)
    for b in text.encode("utf-8"):
        cur = guard.advance(cur, b)
        if cur is None:
            return None
    return cur


def ok(guard, prompt, text, **kw) -> bool:
    return feed(guard, prompt, text, **kw) is not None


# ------------------------------------------------------------------------------------ paths

SHARED = "local x = game.ReplicatedStorage.Shared."


def test_closed_node_allows_children_and_members_only(guard) -> None:
    assert ok(guard, SHARED, "Util\n")
    assert ok(guard, SHARED, "Modules.Combat\n")
    assert ok(guard, SHARED, "Name\n")  # a member of Folder
    assert ok(guard, SHARED, "Parent.Shared\n")
    assert not ok(guard, SHARED, "Utils")
    assert not ok(guard, SHARED, "Modulez")
    assert not ok(guard, SHARED, "Foo")
    assert not ok(guard, SHARED, "Util.Maids")
    assert not ok(guard, SHARED, "Util.Nope")


def test_terminator_only_after_a_complete_name(guard) -> None:
    assert ok(guard, SHARED, "Uti")  # a prefix of Util
    for term in (".", ":", "(", ")", '"', " ", "\n", "["):
        assert not ok(guard, SHARED, "Uti" + term), term
    assert ok(guard, SHARED, "Util.")
    assert ok(guard, SHARED, "Util ")


def test_open_nodes_allow_free_names(guard) -> None:
    # Workspace.Map has $ignoreUnknownInstances: children may exist at run time
    assert ok(guard, "local m = workspace.Map.", "Anything.Goes.Here\n")
    # the DataModel's children are services (the linter's rule): any service or member, nothing else
    assert ok(guard, "local x = game.", "Lighting\n") and ok(guard, "local x = game.", "JobId\n")
    assert not ok(guard, "local x = game.", "SomethingElse\n")
    # ...but a name that is a child keeps the chain known: Shared's children are checked again
    assert not ok(guard, "local x = game.", "ReplicatedStorage.Shared.Nope")


def test_get_service_takes_service_names(guard) -> None:
    assert ok(guard, 'local s = game:GetService("', 'Players")\n')
    assert ok(guard, "local s = game:GetService('", "TweenService')\n")
    assert not ok(guard, 'local s = game:GetService("', 'Playerz")')
    assert not ok(guard, 'local s = game:GetService("', 'Player")')
    assert not ok(guard, 'local s = game:GetService("', 'Players\\')  # no escapes in names
    assert not ok(guard, "local s = game:GetService", " [[Players]]")  # lookups need '('


def test_lookups_take_children_not_members(guard) -> None:
    p = "local u = game.ReplicatedStorage.Shared:WaitForChild("
    assert ok(guard, p, '"Util"):WaitForChild("Maid")\n')
    assert ok(guard, p, '"Util", 5).Maid\n')  # the extra argument keeps the value
    assert not ok(guard, p, '"Name")')
    assert not ok(guard, p, '"Util"):WaitForChild("Nope")')
    assert not ok(guard, p, "[[Util]]")
    assert ok(guard, p, "name)")  # any expression: the value is unknown
    assert ok(guard, "local u = game.ReplicatedStorage.Shared:FindFirstChild(", '"Modules").Combat\n')


def test_bracket_index_uses_member_and_child_names(guard) -> None:
    p = 'local u = game.ReplicatedStorage.Shared["'
    assert ok(guard, p, 'Util"].Signal\n')
    assert ok(guard, p, 'Name"]\n')
    assert not ok(guard, p, 'Nope"]')
    assert not ok(guard, "local u = game.ReplicatedStorage.Shared[", " [[Nope]] ]")  # a long-string index
    assert ok(guard, "local u = game.ReplicatedStorage.Shared[", "[[x]]\n")  # a call with a long string


def test_script_parent_and_ancestors_follow_the_file(guard, project) -> None:
    scripts = project.instances_for_file(COMBAT)
    assert ok(guard, "local s = script.Parent.", "DataService\n", scripts=scripts)
    assert not ok(guard, "local s = script.Parent.", "Nope", scripts=scripts)
    assert ok(guard, 'local s = script:FindFirstAncestor("', 'Server").Bootstrap\n', scripts=scripts)
    assert not ok(guard, 'local s = script:FindFirstAncestor("', 'Nope")', scripts=scripts)
    # a file the project does not map: `script` is unknown, names are free
    assert ok(guard, "local s = script.Parent.", "Anything\n")


def test_local_player_mirrors_starter_gui(guard) -> None:
    p = 'local gui = game:GetService("Players").LocalPlayer.PlayerGui.'
    assert ok(guard, p, "Inventory\n")
    assert ok(guard, p, "Shop.Window\n")


def test_prompt_locals_are_bound(guard) -> None:
    prompt = 'local RS = game:GetService("ReplicatedStorage")\nlocal Shared = RS:WaitForChild("Shared")\n\nShared.'
    assert ok(guard, prompt, "Util.Maid\n")
    assert not ok(guard, prompt, "Nope")
    assert not ok(guard, prompt + "Util:WaitForChild(", '"Nope")')


def test_locals_the_model_declares_are_bound(guard) -> None:
    prompt = 'local RS = game:GetService("ReplicatedStorage")\n'
    assert ok(guard, prompt, "local util = RS.Shared.Util\nutil.Maid\n")
    assert not ok(guard, prompt, "local util = RS.Shared.Util\nutil.Nope")
    assert not ok(guard, prompt, "local a, util = 1, RS.Shared.Util\nutil.Nope")
    assert ok(guard, prompt, "local a, util = 1, RS.Shared.Util\nutil.Spring\n")
    assert not ok(guard, prompt, "local util: Folder = RS.Shared.Util\nutil.Nope")
    assert not ok(guard, prompt, "local util = (RS.Shared.Util)\nutil.Nope")
    assert not ok(guard, prompt, "local util = RS.Shared.Util :: Folder\nutil.Nope")


def test_bindings_follow_scopes(guard) -> None:
    """A local hides an outer one in its block only (the resolver's scoping): after the
    block the outer binding is back; a name whose value is not an instance hides it too."""
    prompt = "local x = game.ReplicatedStorage.Shared.Util\n"
    inner = "do local x = game.ReplicatedStorage.Shared.Modules\n"
    assert ok(guard, prompt, inner + "x.Combat\n")
    assert not ok(guard, prompt, inner + "x.Maid")
    assert ok(guard, prompt, inner + "end\nx.Maid\n")
    assert not ok(guard, prompt, inner + "end\nx.Combat")
    # the same, with the inner declaration in the prompt
    assert ok(guard, prompt + inner, "x.Combat\n")
    assert ok(guard, prompt + inner + "end\n", "x.Maid\n")
    assert not ok(guard, prompt + inner + "end\n", "x.Combat")
    assert ok(guard, prompt + inner, "end\nx.Maid\n")
    assert not ok(guard, prompt + inner, "end\nx.Combat")
    # parameters and loop variables hide it; a local with an unknown value does too
    for shadow in ("local function f(x)\n", "for _, x in t do\n", "for x = 1, 2 do\n", "local x = f()\n",
                   "if c then local x\n"):
        assert ok(guard, prompt, shadow + "x.Anything\n"), shadow
        assert ok(guard, prompt + shadow, "x.Anything\n"), shadow
    assert not ok(guard, prompt, "local function f(x)\nend\nx.Anything")
    assert not ok(guard, prompt + "local function f(x)\nend\n", "x.Anything")
    # an else-branch does not see the then-branch's locals
    assert not ok(guard, prompt + "if c then\nlocal x = f()\nelse\n", "x.Anything")
    assert ok(guard, prompt + "if c then\nlocal x = f()\nelseif d then\n", "x.Maid\n")


def test_find_first_child_reaches_descendants_with_a_true_second_argument(guard) -> None:
    """``FindFirstChild(name, true)`` searches descendants (the resolver's rule): a name
    found only below a child may be written, but the call must go on with ``,``."""
    p = "local hud = game.Players.LocalPlayer.PlayerGui.MainHud\nlocal t = hud:FindFirstChild("
    assert ok(guard, p, '"Timer", true)\n')
    assert not ok(guard, p, '"Timer")')
    assert not ok(guard, "local hud = game.Players.LocalPlayer.PlayerGui.MainHud\nlocal t = hud:FindFirstChild ",
                  '"Timer"')
    assert ok(guard, p, '"HealthBar")\n')  # a child: with or without the search
    assert ok(guard, p, '"HealthBar", true)\n')
    assert not ok(guard, p, '"Timerz"')
    assert ok(guard, p, '"Timer", true).Text = ""\n')  # (the value after the search is open)


def test_groups_and_type_assertions_keep_the_value(guard) -> None:
    assert ok(guard, "local u = (game.ReplicatedStorage.Shared).", "Util\n")
    assert not ok(guard, "local u = (game.ReplicatedStorage.Shared).", "Nope")
    assert not ok(guard, "local u = (game.ReplicatedStorage.Shared :: Folder).", "Nope")
    assert ok(guard, "local u = (game.ReplicatedStorage.Shared :: Folder).", "Util\n")


def test_type_assertion_needs_an_expression(guard) -> None:
    """`::` asserts the type of the expression before it (Luau grammar: asexp = simpleexp
    ['::' Type]); with none (`f(a, :: T)`) the text is broken and a linter's error recovery
    may read the rest as a path - found by the 8,000-generation property run."""
    p = 'local x = game.ReplicatedStorage.Shared:FindFirstChild("'
    assert not ok(guard, p, 'Util",\n\t ::T.x._aRse()')
    assert not ok(guard, "local x = f(", ":: number)")
    assert not ok(guard, "local x = ", ":: number")
    assert ok(guard, "local x = f(", "y :: number)\n")
    assert ok(guard, "local x = ", "nil :: any\n")
    assert ok(guard, "local x = ", '"a" :: string\n')
    assert ok(guard, "local x = ", "(y) :: number\n")


def test_no_name_right_after_a_string_inside_brackets(guard) -> None:
    """`f("a" b)` is broken Luau; a linter recovering from it may read `b` as part of a path
    (found by the 6,000-generation property run with other weights)."""
    p = 'local x = game.ReplicatedStorage.Shared:FindFirstChild("'
    assert not ok(guard, p, 'Util"S). se')
    assert not ok(guard, "local t = {", '"a" b}')
    assert not ok(guard, "local x = (", '"a" b)')
    assert ok(guard, p, 'Util" and x)\n')
    assert ok(guard, "local x = (if c then ", '"a" else "b")\n')
    assert ok(guard, "local x = (if c then ", '"a" elseif d then "b" else "c")\n')
    assert ok(guard, 'print("a")', ' b = 1\n')  # a new statement outside brackets


def test_no_literal_called_or_juxtaposed_inside_brackets(guard) -> None:
    """`f(1 (x))`, `f("a" "b")`: broken; a linter's recovery may index the outer call."""
    p = 'local x = game.ReplicatedStorage.Shared:FindFirstChild("'
    assert not ok(guard, p, 'Util",\n\t1()\n\t.T')
    assert not ok(guard, "local x = f(", '"a" "b")')
    assert not ok(guard, "local x = f(", "true {})")
    assert not ok(guard, "local x = {", "1 2}")
    assert ok(guard, "local x = f(", '1, "b", {}, (2))\n')
    assert ok(guard, "local x = f(", "(1)(2))\n")


def test_varargs_never_follow_an_instance(guard) -> None:
    """`Players.LocalPlayer...p` is broken (`...` after a name is only a type pack, `T...`)."""
    assert not ok(guard, "local p = game.Players.LocalPlayer", "...p")
    assert ok(guard, "type F<T", "...> = (T...) -> ()\n")


def test_values_go_on_across_comments_and_line_breaks(guard) -> None:
    # a comment and a line break between a value and the dot: the linter reads one chain
    p = "local u = game.ReplicatedStorage.Shared --[[c]]\n"
    assert ok(guard, p, ".Util\n")
    assert not ok(guard, p, ".Foo")
    assert ok(guard, p, "..'x'\n")  # concatenation is fine


def test_keywords_are_not_field_names(guard) -> None:
    assert not ok(guard, "local m = workspace.Map.", "end ")
    assert ok(guard, "local m = workspace.Map.", "ending\n")


def test_tokens_spanning_a_boundary_are_checked_byte_by_byte(project) -> None:
    g = guard_for(MULTI, project)
    ids = {b: MULTI.token_bytes.index(b) for b in EXTRA}
    m = g.matcher("local x = game.ReplicatedStorage.Shared.")
    mask = m.mask()
    assert mask.allows(ids[b"Modules."]) and mask.allows(ids[b"Util.Maid"])
    assert not mask.allows(ids[b"Modulez."]) and not mask.allows(ids[b"Utl."])
    m2 = g.matcher("local x = game.ReplicatedStorage.Shared:WaitForChild(")
    assert m2.mask().allows(ids[b'"Util")'])
    assert not m2.mask().allows(ids[b'"Folder")'])
    assert m2.consume(ids[b'"Util")'])
    assert m2.consume(ord(".")) and m2.consume(ord("M"))
    assert not m2.consume(ord("x"))


def test_no_project_checks_service_names_only() -> None:
    g = guard_for(BYTES, None)
    # what a service holds is unknown without a project; the DataModel holds services only
    assert ok(g, "local x = game.", "ReplicatedStorage.Anything.At.All\n")
    assert not ok(g, "local x = game.", "Anything\n")
    assert ok(g, 'local x = game:GetService("', 'Players")\n')
    assert not ok(g, 'local x = game:GetService("', 'Nope")')


def test_paths_can_be_switched_off(project) -> None:
    g = guard_for(BYTES, project, GuardOptions(paths=False))
    assert ok(g, SHARED, "Nope\n")
    assert not ok(g, "", "-- TODO\n")


# ------------------------------------------------------------------------------------ placeholders

@pytest.mark.parametrize("text", [
    "-- TODO: finish", "-- FIXME", "-- ... rest", "-- rest of the code", "-- todo: later",
    "--[[ your code here ]]", "--[==[ implement this ]==]", "-- ...", "-- implement this",
    "-- (existing code)", "-- same as before", "-- <placeholder>", "-- code omitted for brevity",
    "-- \u2026", "local x = 1 -- TODO", "-- code omitted", "-- ... code omitted ...", "-- rest of code here",
    "-- (rest of the code unchanged)", "--[[ code omitted ]]",
])
def test_placeholders_are_impossible(guard, text) -> None:
    """What the linter's placeholder rule flags (patch mode) the guard refuses, at the latest
    where the comment ends (a rule that reads the whole comment)."""
    assert any(f.rule == "placeholder" and f.severity.label == "error"
               for f in Engine().lint_text(text + "\n", "x.luau", mode="patch"))
    assert not ok(guard, "", text + "\n")
    assert feed(guard, "", text) is None or not guard.eos_ok(feed(guard, "", text))


@pytest.mark.parametrize("text", [
    "-- mastodon rocks\n", "-- the rest of the players\n", 'local s = "Loading..."\n', "-- updates other functions\n",
    "local t = {...}\n", "return ...\n", "print(select('#', ...))\n", "-- todo list\n", "-- TODOs\n",
    'local s = "TODO"\n', "local s = 'rest of code'\n", "local s = [[implement this]]\n", "local s = `your code here`\n",
    "-- luaguard: allow(unknown_instance)\n", "-- We implement this here because of X\n",
    "-- Same as above, but faster\n", "--[=[\n\tSee foo(...)\n\t... and so on\n]=]\n", "-- a\n-- ...\n-- b\n",
    # explanations of a deliberate omission are prose, not elisions (issue 33)
    "-- deviation: code omitted because the VM has no 64-bit ints\n", "-- layout code omitted for now but ported below\n",
    "-- code omitted here, see upstream\n", "-- rest of code here runs only in Studio\n",
    "--[[--------\n-- other helpers\n--------]]\n",
])
def test_ordinary_text_stays_possible(guard, text) -> None:
    assert ok(guard, "local function f(...)\n", text)
    assert not [f for f in Engine().lint_text("local function f(...)\n" + text + "end\n", "x.luau", mode="patch")
                if f.rule == "placeholder"]


_COMMENT_SITES = [  # (code before the comment, code after its line)
    ("", ""), ("local a = 1\n", ""), ("local a = 1 ", ""), ("local a = 1\t", ""), ("local a = 1\r\n", ""),
    ("local a = 1 --[[ x ]] ", ""), ("local a = 1 --[[ x\n]] ", ""), ("local s = [[\nx\n]] ", ""),
    ("-- note\n", ""), ("local a = 1 -- note\n", ""), ("local a = 1\r\n-- note\r\n", ""),
    ("type T = number ", ""), ("type T =\n\tnumber\n", ""), ("type T = {\n\ta: number, ", "}\n"),
    ("local x: number ", ""), ("local x:\n", "number\n"), ("f(a,\n", "b)\n"), ("f(a, ", "b)\n"),
    ("local t = {\n\t", "}\n"), ("return ", "\n"),
]


@pytest.mark.parametrize("comment", ["-- ...", "-- \u2026", "-- etc.", "-- ... rest of code", "-- TODO", "-- ok"])
def test_comments_after_code_follow_the_linter(guard, comment) -> None:
    """A comment's context - after code on its line (an ellipsis there is prose), alone on its
    line, after a comment line, in a type or a table type, after a block comment or a
    multi-line string - is the linter's, read from the start or primed right before it: the
    guard refuses the comment exactly where the patch-mode linter flags it."""
    for before, after in _COMMENT_SITES:
        text = before + comment + "\n" + after
        flagged = any(f.rule == "placeholder" for f in Engine().lint_text(text, "x.luau", mode="patch"))
        assert ok(guard, "", text) is not flagged, text
        assert ok(guard, before, comment + "\n" + after) is not flagged, text


def test_ellipsis_as_a_statement_is_impossible(guard) -> None:
    p = "local function f(...)\n\tprint(1)\n"
    assert not ok(guard, p, "\t...")
    assert not ok(guard, p, "\tprint(1) ...")
    assert ok(guard, p, "\tprint(...)\n")
    assert ok(guard, "type F = (T...", ") -> ()\n")


# ------------------------------------------------------------------------------------ brackets

def test_closers_need_their_opener(guard) -> None:
    assert ok(guard, "", "print(1)\n")
    assert not ok(guard, "", "print(1))")
    assert not ok(guard, "", "local t = {1, 2]")
    assert not ok(guard, "", ")")
    assert ok(guard, "", 'print("(", ")", [==[ ) ]==])\n')  # closers in strings are text
    assert ok(guard, "", "-- )]}\n")
    assert ok(guard, "local a = 1\n", "print(`{a} and {`{a}`}`)\n")
    assert not ok(guard, "", "print(`{}`)")
    assert not ok(guard, "", "print(`{{")


def test_blocks_and_brackets_nest(guard) -> None:
    assert ok(guard, "", "foo(function() end)\n")
    assert not ok(guard, "", "foo(function() )")  # the function is still open
    assert not ok(guard, "local function f()\n", "foo(end ")  # `end` would drop the '('
    assert ok(guard, "local function f()\n", "\tif a then b() elseif c then d() else e() end\nend\n")
    assert not ok(guard, "", "end\n")  # nothing to close
    assert ok(guard, "", "repeat x() until y\n")
    assert not ok(guard, "", "repeat x() end\n")
    assert ok(guard, "", "while a do if b then c() end end\n")
    assert ok(guard, "local function f()\n", "\tlocal x = if a then b else c\nend\n")
    assert not ok(guard, "local function f()\n", "\tlocal x = if a then b else c\nend\nend\n")


def test_prompt_brackets_and_blocks_are_known(guard) -> None:
    p = "table.sort(list, function(a, b)\n\tlocal x = a\n"
    assert ok(guard, p, "\treturn x < b\nend)\n")
    assert not ok(guard, p, "\treturn x < b\n)")
    assert not ok(guard, p, "end))")


_CLOSER_PROMPTS = [
    "declare function f(): number\nx()\n",  # a definition file's function has no body
    "local t = { 1, 2 ])\nfoo(x",  # a wrong closer stands for the innermost bracket's
    "if a then\n\tf(function()\n\tend\nx()\n",
    "while x do\n\tx()\n",
    "for i = 1, x",
    "local y = if a then b else (x",
    "print(`{x",
    "repeat\n\tx()\n",
    "f(x, [[ ) ]] , x",
    "local t = {x",
]


@pytest.mark.parametrize("prompt", _CLOSER_PROMPTS)
def test_prompt_closers_agree_with_the_structure_check(guard, prompt) -> None:
    """The guard allows a closer after a prompt exactly when the linter's structure check
    finds nothing wrong at that closer: both run one frame machine."""
    from luaguard.luau.lexer import tokenize
    from luaguard.luau.structure import analyze_structure
    from luaguard.text import LineIndex

    verdicts = []
    for closer in (")", "]", "}", "end", "until"):
        text = prompt + " " + closer + " "
        at = len(prompt) + 1
        linter_ok = not any(p.detected_at == at for p in analyze_structure(tokenize(text).tokens, LineIndex(text)))
        verdicts.append((closer, ok(guard, prompt, " " + closer + " "), linter_ok))
    assert all(g == lint for _c, g, lint in verdicts), verdicts
    assert sum(g for _c, g, _l in verdicts) <= 1  # only the innermost frame's closer


def _restart_reference(text: str, regions=()) -> int:
    """Where priming starts reading, by definition (every token and comment looked at): the
    latest line start (moved back to the start of a comment or string spanning it) whose
    token does not continue an expression chain from the line before, within 40 lines, and
    not inside one of ``regions`` (a span holding it, or one that ends with the text's last
    token: the model may go on with it) however far back."""
    from luaguard.guard.matcher import _fresh_line, _open_at_end
    from luaguard.luau import lexer as LX

    lex = LX.tokenize(text)
    tokens = [t for t in lex.tokens if t.kind != LX.EOF]
    # (a long string or comment the text ends inside holds the end too)
    spans = [(t.start, t.end + _open_at_end(t, text)) for t in [*lex.comments, *tokens]]
    last = tokens[-1].end if tokens else 0
    pos = len(text)
    cand = 0
    lines = 0
    while lines < 40:
        nl = text.rfind("\n", 0, pos)
        cand = nl + 1 if nl >= 0 else 0
        cand = min([a for a, z in spans if a < cand < z], default=cand)
        if any(a < cand and (cand < z or z >= last) for a, z in regions):
            pos = cand - 1
            continue
        lines += 1
        first = next((t for t in tokens if t.start >= cand), None)
        before = next((t for t in reversed(tokens) if t.start < cand), None)
        if _fresh_line(first, before):  # (the rule is shared; the search is what is checked)
            return cand
        if cand == 0:
            return 0
        pos = cand - 1
    return cand


def test_priming_starts_where_the_definition_says(guard) -> None:
    """The restart point found by binary searches over the tokens near the end equals the
    definition's, at random cuts of the sample files and at cuts inside comments, long
    strings, expression chains continued on the next line and declarations, with and without
    the spans the automaton reads whole (type regions, ``local`` declarations)."""
    from luaguard.guard.matcher import _read_whole, _restart
    from luaguard.luau import lexer as LX

    rng = random.Random(41)
    files = sorted((SAMPLES / "src").rglob("*.luau"))
    texts = ["", "x", "\n\n", "--[[ a\nb", "local s = [[\nab\ncd", "foo\n.bar\n:baz(", "a = b\n:c()\n",
             "x --[==[\n]]\n]==]\ny", 'print("a\\\n b', "f(\n\t1,\n\t2\n)", "t[\n1\n]", "local a = \"x\"\n\t.y",
             "local t = {\n\ta = [[\n\tb\n", "local s = (\n", "local x = f()\n", "local x: {\n\ta: number,\n"]
    for _ in range(300):
        src = rng.choice(files).read_text()
        texts.append(src[:rng.randrange(len(src) + 1)])
    for text in texts:
        assert _restart(text, LX.tokenize(text)) == _restart_reference(text), text[-80:]
        regions = _read_whole(guard.space.analyze(text, []))
        assert _restart(text, LX.tokenize(text), regions) == _restart_reference(text, regions), text[-80:]


def test_priming_reads_the_statement_the_model_may_continue(guard) -> None:
    """A prompt that ends at a line start after a call or a name (the model may go on with
    the chain: ``:andThen(...)``), or inside a ``local`` declaration (a table with a long
    string, a group the model closes), is read from the statement's start: the chain's value
    and the declared names are what the linter gives them, never refused nor let through."""
    chain = "local function f(b)\n\treturn M.Init(b)\n\t\t:andThen(M.Step)\n"
    assert ok(guard, chain, "\t\t:andThen(M.Next)\nend\n")
    p = "local r = game.ReplicatedStorage\n"
    assert ok(guard, p, "\t.Shared\nr.Util = 1\n")
    assert not ok(guard, p, "\t.Shared\nr.Utl")
    table = "local m = {\n\tnote = [[\n\tsome text\n"
    assert ok(guard, table, "\t]],\n}\nm.key = 1\n")
    group = "local s = (\n"
    assert ok(guard, group, "\tgame.ReplicatedStorage.Shared)\ns.Util = 1\n")
    assert not ok(guard, group, "\tgame.ReplicatedStorage.Shared)\ns.Utl")


def test_eos_only_when_balanced(guard) -> None:
    assert guard.eos_ok(feed(guard, "", "print(1)"))
    assert not guard.eos_ok(feed(guard, "", "print(1"))
    assert not guard.eos_ok(feed(guard, "", 'print("abc'))
    assert guard.eos_ok(feed(guard, "", "-- a comment"))
    assert not guard.eos_ok(feed(guard, "", "local x = game.ReplicatedStorage.Shared.Uti"))
    assert guard.eos_ok(feed(guard, "", "local x = game.ReplicatedStorage.Shared.Util"))
    # brackets the prompt opened may stay open
    assert guard.eos_ok(feed(guard, "foo(", "1, 2"))
    assert guard.advance(feed(guard, "", "print(1"), EOS) is None


def test_line_stop_policy(project) -> None:
    g = guard_for(BYTES, project, GuardOptions(stop="line"))
    assert g.eos_ok(feed(g, "", "foo(1,\n"))
    assert not g.eos_ok(feed(g, "", "foo(1,"))


def test_complete_ok_marks_safe_cut_points(guard) -> None:
    assert guard.complete_ok(feed(guard, "", "print(1"))
    assert not guard.complete_ok(feed(guard, "", "local x = game.ReplicatedStorage.Shared.Uti"))
    assert not guard.complete_ok(feed(guard, "local function f()\n", "foo(end"))  # unchecked `end`
    assert guard.complete_ok(feed(guard, "local function f()\n", "foo(en"))
    assert not guard.complete_ok(feed(guard, "", "print('abc"))


# ------------------------------------------------------------------------------------ numbers

def test_grounded_asset_ids() -> None:
    g = guard_for(BYTES, None, GuardOptions(grounded_numbers=True), ids=["1234567", "42"])
    assert ok(g, "", 'local id = "rbxassetid://1234567"\n')
    assert not ok(g, "", 'local id = "rbxassetid://1234568"')
    assert not ok(g, "", 'local id = "rbxassetid://123"')  # a prefix is not a complete id
    assert ok(g, "", 'local id = "rbxassetid://"\n')
    assert ok(g, "", "local t = { AssetId = 42 }\n")
    assert not ok(g, "", "local t = { AssetId = 43 }")
    assert not ok(g, "", "local t = { AssetId = 4 }")
    assert not ok(g, "", "sound.SoundId = 42.5")
    assert ok(g, "", "if x.AssetId == 99 then end\n")  # a comparison, not an id
    assert ok(g, "", "local n = 99\n")
    free = guard_for(BYTES, None)
    assert ok(free, "", 'local id = "rbxassetid://999"\n')


# ------------------------------------------------------------------------------------ masks

def test_masks_cover_the_vocabulary_and_store_the_smaller_set(guard) -> None:
    m = guard.matcher(SHARED)
    mask = m.mask()
    allowed = [t for t in range(BYTES.size) if mask.allows(t)]
    assert mask.allow and len(mask.ids) == len(allowed) == mask.n_allowed
    spelled = {BYTES.token_bytes[t] for t in allowed}
    assert {b"U", b"M", b"N", b"P", b"."} <= spelled  # Util, Modules, Name, Parent, `..`
    assert not {b"X", b"u", b"(", b"1"} & spelled
    free = guard.matcher("local a = 1\n").mask()
    n = sum(free.allows(t) for t in range(BYTES.size))
    assert n == free.n_allowed and len(free.ids) == min(n, BYTES.size - n)
    assert m.mask() is mask  # cached per state


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "torch"])
def test_apply_sets_minus_inf_on_banned_ids_only(guard, monkeypatch, compiled) -> None:
    """Both ways of applying a mask's packed words (``_walk.c``'s ``apply_bits`` for float32
    rows in memory, torch's unpacking + ``masked_fill_`` else) set exactly the banned ids to
    -inf - also where the score was +inf or NaN - for rows wider and narrower than the
    vocabulary and for half- and double-precision rows, and leave the other scores
    unchanged."""
    torch = pytest.importorskip("torch")
    import luaguard.guard.bitmask as B

    if not compiled:
        monkeypatch.setattr(B, "_c_apply_bits", None)
    elif B._c_apply_bits is None:
        pytest.skip("the compiled module is not built")
    for text in (SHARED, "local a = 1\n", "game.ReplicatedStorage."):
        mask = guard.matcher(text).mask()
        for width, dtype in ((BYTES.size + 3, torch.float32), (BYTES.size, torch.float16), (BYTES.size - 5, torch.float32),
                             (BYTES.size + 1, torch.float64), (BYTES.size + 40, torch.float32)):
            scores = torch.arange(width, dtype=dtype) / 7  # a model may pad its vocabulary
            scores[::5] = float("inf")
            scores[1::7] = float("nan")
            row = scores.clone()
            mask.apply_(row)
            for t in range(width):
                if t < BYTES.size and mask.allows(t):
                    assert row[t].item() == scores[t].item() or (row[t].isnan() and scores[t].isnan()), (text, width, t)
                else:
                    assert row[t].item() == float("-inf"), (text, width, t)


def test_packed_words_are_made_with_the_mask_and_counted(project) -> None:
    """The engine packs each new mask (bit t of word t // 32 set when t is allowed) when it
    makes it, and counts the words in its memory budget."""
    import luaguard.guard.vocab as V
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space

    au = Automaton(path_space(project))
    small = V.MaskEngine(au, BYTES)
    before = small._mask_ids
    m = small.mask_after(Guard(au, BYTES).start("local a = ").state)
    assert m._packed is not None and m._packed.dtype == np.int32 and len(m._packed) == (BYTES.size + 31) // 32
    assert small._mask_ids - before >= BYTES.size // 64
    bits = np.unpackbits(m._packed.view(np.uint8), bitorder="little")[:BYTES.size].astype(bool)
    assert np.array_equal(~bits, m.banned_row())
    assert np.array_equal(m.banned_row(), ~np.isin(np.arange(BYTES.size), m.ids) if m.allow
                          else np.isin(np.arange(BYTES.size), m.ids))


def _random_matchers(g, project, rng, n):
    """``n`` matchers primed at random offsets of random sample files, each with the 40
    characters before its offset (for assertion messages)."""
    files = sorted((SAMPLES / "src").rglob("*.luau"))
    for _ in range(n):
        f = rng.choice(files)
        src = f.read_text()
        off = rng.randrange(len(src))
        yield g.matcher(src[:off], scripts=project.instances_for_file(str(f.relative_to(SAMPLES)))), src[max(0, off - 40):off]


def _walked_states(g, project, seed: int, steps: int) -> list[tuple]:
    """Twelve random matchers of ``g`` each reading up to ``steps`` allowed tokens (chosen
    with ``random.Random(seed)``), masking before each: the matchers' states in order (the
    walk's own states are then in ``g.engine._tables.states``)."""
    rng = random.Random(seed)
    size = g.table.size
    full = []
    for m, _before in _random_matchers(g, project, rng, 12):
        for _step in range(steps):
            full.append(m.cursor.state)
            mask = m.mask()
            m.consume(rng.choice([t for t in range(size) if mask.allows(t)]))
            if m.finished:
                break
    return full


def test_mask_agrees_with_consume_on_random_walks(project) -> None:
    from guard_support import byte_level_tokenizer
    from luaguard.guard.table_cache import token_table

    tok = byte_level_tokenizer()
    table = token_table(tok)
    g = guard_for(table, project)
    rng = random.Random(7)
    for m, before in _random_matchers(g, project, rng, 6):
        for _step in range(4):
            mask = m.mask()
            allowed = []
            for t in range(table.size):
                a = mask.allows(t)
                assert a == (g.advance(m.cursor, t) is not None), (before, m.text, table.token_bytes[t])
                if a:
                    allowed.append(t)
            t = rng.choice(allowed)
            assert m.consume(t)
            if m.finished:
                break


TYPED_TEXTS = [
    # a function header with a typed parameter list and a return type, then a body
    "local function Room:PivotTo(cf: CFrame, part: BasePart?, ...: any): (boolean, string)\n"
    "\tif part then return true, part.Name end\n\treturn false, ''\nend\n",
    # aliases with generics, packs, table types, typeof, string singletons, casts
    "export type Cb<T...> = (T...) -> ()\ntype R = { read size: number, [string]: typeof(game.Workspace) }\n"
    "type Side = \"left\" | \"right\"\nlocal v = (game.Workspace :: Workspace).CurrentCamera\n",
    # attributes, loops with annotations, if-expressions, a function expression argument
    "@native\nlocal function f<T>(x: T): T\n\tfor i: number = 1, 3 do print(if i > 1 then i else -i) end\n"
    "\ttask.spawn(function(...) print(...) end)\n\treturn x\nend\n",
]


def test_mask_agrees_with_consume_at_every_prefix_of_typed_code(project) -> None:
    """At each prefix of typed code (and with random continuations' states) the mask bans
    exactly the tokens the matcher refuses, for a byte-level BPE vocabulary - the mask walk's
    projections keep what a type's end uncovers (found by guard_eval: `(cf: CFrame` then `(`)."""
    from guard_support import byte_level_tokenizer, metaspace_tokenizer
    from luaguard.guard.table_cache import token_table

    for table, text in [(token_table(tok()), text) for tok in (byte_level_tokenizer, metaspace_tokenizer)
                        for text in TYPED_TEXTS]:
        g = guard_for(table, project)
        cur = g.start("local x = 1\n")
        for i, b in enumerate(text.encode()):
            if i % 3 == 0:
                mask = g.mask(cur)
                for t in range(table.size):
                    assert mask.allows(t) == (g.advance(cur, t) is not None), (table.kind, text[:i], table.token_bytes[t])
            cur = _feed_byte(g, cur, b)
            assert cur is not None, text[:i + 1]


def _feed_byte(g, cur, b):
    from luaguard.guard.matcher import _feed
    from luaguard.guard.automaton import GEN

    return _feed(g, cur, bytes([b]), GEN)


@pytest.mark.parametrize("pieces", [True, False], ids=["pieces", "dense-build"])
def test_masks_in_shared_pieces_agree_with_consume_and_apply_exactly(project, monkeypatch, pieces) -> None:
    """Masks kept as pieces shared between masks (a layer's allowed or banned ids; a layer
    banned whole with its allowed ids restored) ban exactly what the automaton rejects.  The
    byte-level vocabulary is small, so the threshold for sharing is lowered to make every
    layer's ids a shared piece and every kind of piece appear (the small vocabulary's own
    build, straight from a boolean row, is turned off for that); applied as packed words.
    ``dense-build``: the same checks on masks built from a boolean row."""
    torch = pytest.importorskip("torch")
    import luaguard.guard.vocab as V
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    monkeypatch.setattr(V, "SHARE_MIN", 4)
    monkeypatch.setattr(V, "DENSE_BUILD_MAX", 0 if pieces else V.DENSE_BUILD_MAX)
    table = token_table(byte_level_tokenizer())
    g = Guard(Automaton(path_space(project)), table)
    rng = random.Random(11)
    kinds = {"keep": 0, "ban": 0, "several": 0}
    for m, before in _random_matchers(g, project, rng, 8):
        for _step in range(4):
            mask = m.mask()
            kinds["keep"] += bool(mask.keep) and not mask.allow
            kinds["ban"] += bool(mask.ban)
            kinds["several"] += len(mask.keep) + len(mask.ban) > 1
            want = [g.advance(m.cursor, t) is not None for t in range(table.size)]
            row = torch.zeros(table.size + 2)
            mask.apply_(row)
            got = [row[t].item() == 0.0 for t in range(table.size)]
            assert got == want, (before, m.text)
            assert row[table.size:].eq(float("-inf")).all()
            assert mask.n_allowed == sum(want)
            assert set(mask.ids.tolist()) == {t for t in range(table.size) if want[t] == mask.allow}
            m.consume(rng.choice([t for t in range(table.size) if want[t]]))
            if m.finished:
                break
    if pieces:
        assert kinds["keep"] and kinds["ban"] and kinds["several"], kinds
    else:  # one id array per mask, the row made with it
        assert kinds["keep"] == kinds["several"] == 0 < kinds["ban"], kinds


def test_cached_token_effects_equal_reading_byte_by_byte(project) -> None:
    """Guard.advance reads a generated token by one look-up of its cached effect; the cursor
    (state, identifier, declared names, bindings) equals the one reading it byte by byte
    gives, declarations included."""
    from luaguard.guard.automaton import GEN
    from luaguard.guard.matcher import _feed
    from guard_support import byte_level_tokenizer
    from luaguard.guard.table_cache import token_table

    table = token_table(byte_level_tokenizer())
    g = guard_for(table, project)
    tok = byte_level_tokenizer()
    rng = random.Random(5)
    files = sorted((SAMPLES / "src").rglob("*.luau"))
    checked = declared = 0
    for f in rng.sample(files, 6):
        src = f.read_text()
        scripts = project.instances_for_file(str(f.relative_to(SAMPLES)))
        cut = len(src) // 3
        ids = tok.encode(src[cut:cut + 1500])
        for round_ in range(2):  # the second round reads every token from the cache
            cur = g.start(src[:cut], scripts=scripts)
            for t in ids:
                fast = g.advance(cur, t)
                slow = _feed(g, cur, table.token_bytes[t], GEN)
                assert fast == slow, (round_, table.token_bytes[t])
                if fast is None:
                    break
                checked += 1
                declared += fast.bindings is not cur.bindings or fast.names != cur.names
                cur = fast
    assert checked > 1000 and declared > 0


def test_priming_reuses_the_analysis_lexing_and_gets_the_same_cursor(project) -> None:
    """Priming on header + prefix with the prefix's analysis reuses the analysis' lexing
    (the header is line comments); the cursor is the one lexing the whole prompt gives, at
    every cut, also where the header is not plain line comments (then it lexes again)."""
    from dataclasses import replace

    from guard_support import byte_level_tokenizer
    from luaguard.completion.context import build_prompt
    from luaguard.guard.matcher import _prime, _shared_lex

    g = guard_for(BYTES, project)
    space = g.space
    tok = byte_level_tokenizer()
    files = sorted((SAMPLES / "src").rglob("*.luau"))
    rng = random.Random(3)
    shared = 0
    for f in rng.sample(files, 8):
        src = f.read_text()
        scripts = list(project.instances_for_file(str(f.relative_to(SAMPLES))))
        for off in sorted(rng.sample(range(1, len(src)), 6)) + [len(src)]:
            an = space.analyze(src[:off], scripts)
            p = build_prompt(src, off, tokenizer=tok, context_length=100_000, max_new_tokens=8, project=project,
                             scripts=scripts, analysis=an, space=space, fim=False)
            shift = len(p.header)
            assert p.guard_text[shift:] == src[:off]
            shared += _shared_lex(p.guard_text, an, shift) is not None
            # an analysis of another text of the same length is never taken for this one
            assert _shared_lex(p.guard_text, replace(an, text="\x00" * len(an.text)), shift) is None
            fast = _prime(g, p.guard_text, scripts, an, shift)
            slow = _prime(g, p.guard_text, scripts, replace(an, lex=None), shift)
            assert fast == slow, (f.name, off)
            for head in ("--[[ facts ]]\n", "x = 1 -- not a comment header\n", "-- no line break"):
                assert _shared_lex(head + src[:off], an, len(head)) is None
                assert _prime(g, head + src[:off], scripts, an, len(head)) == \
                    _prime(g, head + src[:off], scripts, replace(an, lex=None), len(head))
    assert shared > 40


def test_rollback_and_fork(guard) -> None:
    m = guard.matcher("local x = game.ReplicatedStorage.")
    first = m.mask()
    for b in b"Shared.":
        assert m.consume(b)
    assert len(m) == 7 and m.text == "Shared."
    after = m.mask()
    assert not after.allows(ord("X"))
    twin = m.fork()
    m.rollback(7)
    assert m.mask() is first and m.text == ""
    assert twin.mask() is after
    with pytest.raises(ValueError):
        m.rollback(1)
    assert not m.consume(EOS + 1)  # an id without bytes


def test_no_decode_or_encode_inside_a_step(project, monkeypatch) -> None:
    from guard_support import byte_level_tokenizer
    from luaguard.guard.table_cache import token_table

    tok = byte_level_tokenizer()
    g = guard_for(token_table(tok), project)

    def boom(*a, **k):
        raise AssertionError("tokenizer used inside a decoding step")

    for name in ("decode", "encode", "convert_ids_to_tokens", "__call__", "batch_decode"):
        monkeypatch.setattr(type(tok), name, boom)
    m = g.matcher(SHARED)
    ids = [i for i in range(len(tok)) if m.mask().allows(i)]
    for _ in range(5):
        m.consume(ids[0])
        ids = [i for i in range(len(tok)) if m.mask().allows(i)]


def test_a_changed_project_gets_a_new_guard_without_invalidating(tmp_path) -> None:
    import shutil

    shutil.copytree(SAMPLES, tmp_path / "place")
    fresh = load_project(tmp_path / "place")
    g = guard_for(BYTES, fresh)
    assert guard_for(BYTES, fresh) is g  # kept on the index's snapshot
    assert not ok(g, SHARED, "NewThing\n")
    (tmp_path / "place" / "src" / "shared" / "NewThing.luau").write_text("return {}\n")
    fresh.apply_file_changes(["src/shared/NewThing.luau"])  # a new generation: a new snapshot
    g2 = guard_for(BYTES, fresh)
    assert g2 is not g
    assert ok(g2, SHARED, "NewThing\n")


def test_mask_budget_drops_old_masks_keeps_the_walk_memo_and_stays_exact(project) -> None:
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.vocab import MaskEngine

    budget = 300  # ids: a few masks of the one-byte vocabulary (they store 1-130 ids)
    g = Guard(Automaton(path_space(project)), BYTES)
    g.engine = MaskEngine(g.automaton, BYTES, max_mask_ids=budget)
    exact = guard_for(BYTES, project)  # default budget: never evicts here
    texts = ["local x = game.ReplicatedStorage.Shared.", "for i = 1, 3 do\n\tprint(", "-- a comment ", 'x = "a',
             "local p = game:GetService(\"", "if a then\n\t", "t = {[1] = (", "local s = script.Parent."]
    stored: list[int] = []
    memo: list[int] = []
    for round_ in range(3):
        for text in texts:
            m, want = g.matcher(text), exact.matcher(text)
            for b in b"Util":
                mask = m.mask()
                ref = want.mask()
                assert mask.allow == ref.allow and set(mask.ids.tolist()) == set(ref.ids.tolist()), (text, round_)
                stored.append(g.engine._mask_ids)
                memo.append(g.engine.memo_entries())
                if not (m.consume(b) and want.consume(b)):
                    break
    assert sum(b < a for a, b in zip(stored, stored[1:])) > 2  # the budget ran out several times
    assert max(stored) <= budget
    assert memo == sorted(memo) and memo[-1] > 0  # the walk memo only grew: never cleared
    assert len(g.engine._by_state) <= len(g.engine._combos) + 1  # the per-state index follows evictions


def test_id_arena_takes_copies_and_is_freed_only_without_live_views() -> None:
    import numpy as np

    from luaguard.guard.vocab import IdArena

    arena = IdArena(10)
    got = arena.take([np.array([1, 2, 3]), np.array([4])])
    assert got.tolist() == [1, 2, 3, 4] and got.base is arena.buf and arena.pos == 4
    assert arena.take([np.arange(7)]) is None and arena.pos == 4  # no room: nothing taken
    assert not arena.reset() and arena.pos == 4  # `got` still views it
    del got
    assert arena.reset() and arena.pos == 0
    assert arena.take([np.arange(10)]).tolist() == list(range(10))


def test_an_arena_at_most_half_used_stays_in_use_when_masks_are_dropped(project, monkeypatch) -> None:
    """Dropping every mask (the walk memo's budget, or the ids') switches arenas only when
    the current one is more than half used: otherwise new masks keep filling it after the
    ids already there, no spare arena is made, and the masks stay exact."""
    import luaguard.guard.vocab as V
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space

    monkeypatch.setattr(V, "ARENA_MIN_VOCAB", 0)
    monkeypatch.setattr(V, "DENSE_BUILD_MAX", 0)
    g = Guard(Automaton(path_space(project)), BYTES)
    g.engine = V.MaskEngine(g.automaton, BYTES, max_mask_ids=200_000)
    exact = guard_for(BYTES, project)
    arena = g.engine._arena
    for text in ("local x = game.ReplicatedStorage.", "-- a comment ", "local p = game:GetService(\""):
        for _ in range(2):
            mask, ref = g.matcher(text).mask(), exact.matcher(text).mask()
            assert mask.allow == ref.allow and set(mask.ids.tolist()) == set(ref.ids.tolist()), text
            used = arena.pos
            assert 0 < used <= len(arena.buf) // 2
            g.engine._reset()  # (every mask dropped)
            assert g.engine._arena is arena and g.engine._spare_arena is None and arena.pos == used


def test_mask_budget_with_the_id_arena_never_overwrites_a_held_mask(project, monkeypatch) -> None:
    """The masks' merged id arrays live in the engine's pre-faulted arenas (large
    vocabularies; here forced for the one-byte vocabulary, with masks as id arrays): when the
    budget drops every mask, the engine switches to its spare arena, which is reused only
    if no mask that used it is still held - a held mask keeps its ids, masks stay exact, and
    once nothing holds old masks the two arenas take turns (no new one is made)."""
    import numpy as np

    import luaguard.guard.vocab as V
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space

    monkeypatch.setattr(V, "ARENA_MIN_VOCAB", 0)
    monkeypatch.setattr(V, "DENSE_BUILD_MAX", 0)
    g = Guard(Automaton(path_space(project)), BYTES)
    g.engine = V.MaskEngine(g.automaton, BYTES, max_mask_ids=300)
    exact = guard_for(BYTES, project)
    texts = ["local x = game.ReplicatedStorage.Shared.", "for i = 1, 3 do\n\tprint(", "-- a comment ", 'x = "a',
             "local p = game:GetService(\"", "if a then\n\t", "t = {[1] = (", "local s = script.Parent."]
    arenas: list = []

    def run(keep: bool) -> list:
        masks = []
        for text in texts:
            m, want = g.matcher(text), exact.matcher(text)
            for b in b"Util":
                mask, ref = m.mask(), want.mask()
                assert mask.allow == ref.allow and set(mask.ids.tolist()) == set(ref.ids.tolist()), text
                if keep:
                    masks.append(mask)
                if not any(a is g.engine._arena for a in arenas):
                    arenas.append(g.engine._arena)
                if not (m.consume(b) and want.consume(b)):
                    break
        return masks

    first = g.engine._arena
    arenas.append(first)
    masks = run(True)
    held = next(mk for mk in masks if any(a.base is first.buf for a in mk.keep + mk.ban))  # it stored some
    before = [a.copy() for a in held.keep + held.ban]
    del masks
    for _ in range(3):
        run(False)
    assert len(arenas) >= 3  # the budget ran out while `held` used the first arena: a new spare was made
    assert all(np.array_equal(a, b) for a, b in zip(held.keep + held.ban, before))
    del held, before
    run(False)  # (the arena `held` kept alive is dropped at a switch here)
    arenas.clear()
    for _ in range(3):
        run(False)
    assert len(arenas) == 2  # nothing held: the two arenas take turns


# ------------------------------------------------------------------------------------ byte classes

@pytest.mark.parametrize("grounded", [False, True])
def test_byte_classes_are_exact(project, grounded) -> None:
    """Bytes of one class lead to the same state from every state reached while reading the
    sample place (each byte masked, then consumed) and every state the masks' walk projected:
    the walk computes one transition per class - with asset ids grounded too (string text
    then also tracks the id triggers' matcher)."""
    from collections import Counter

    from luaguard.guard import automaton as AU
    from guard_support import sample_texts

    # a guard of its own: its walk's states are ours to read
    g = guard_for(_table(), project, GuardOptions(grounded_numbers=grounded), ids=["1234567"] if grounded else ())
    states = set()
    extra = 'local a = game.ReplicatedStorage["Shared"]\nlocal b = a["Util"]\nlocal c = workspace[ "x" ]\n'
    if grounded:
        extra += 'local i = "rbxassetid://1234567"\nlocal j = `roblox.com/asset/?id=1234567 {i}`\n-- TODO: ... \n'
    for text in sample_texts()[:12] + [extra]:
        cur = g.start("")
        for b in text.encode("utf-8"):
            g.mask(cur)
            states.add(cur.state)
            nxt = g.advance(cur, b)
            if nxt is None:
                break
            cur = nxt
    states.update(g.engine._tables.states)
    au = g.automaton
    checked: Counter = Counter()
    for s in states:
        cmap = au.classes(s)
        if cmap is None:
            continue
        for b in range(256):
            assert au.step(s, b) == au.step(s, cmap[b]), (s, b, cmap[b])
        checked[s[AU.MODE]] += 1
    for mode in (AU.M_CODE, AU.M_IDENT, AU.M_NAME, AU.M_DOT1, AU.M_COLON, AU.M_DOT2, AU.M_NUM, AU.M_NSTR,
                 AU.M_LPAREN, AU.M_LARG, AU.M_IARG, AU.M_LBRACK, AU.M_STR, AU.M_INTERP, AU.M_LCMT, AU.M_CSTART,
                 AU.M_CLB, AU.M_DASH, AU.M_TILDE, AU.M_AFTER):
        assert checked[mode] >= 5, checked


def test_code_byte_classes_join_operators_that_step_alike(project) -> None:
    """Between tokens in code, the one-byte operators whose step reads nothing of the byte
    share a class (one transition for all of them in the mask walk), and those that change
    a declaration being read (`=`, `,`, `;`) keep their own; exactness for every state is
    test_byte_classes_are_exact's."""
    from luaguard.guard.automaton import Automaton, initial_state
    from luaguard.guard.matcher import path_space

    cmap = Automaton(path_space(project)).classes(initial_state())
    assert len({cmap[b] for b in b"+*/%^#<>"}) == 1
    assert len({cmap[b] for b in b"&|?"}) == 1
    assert cmap[ord("<")] != cmap[ord("&")]
    for b in b"=,;-.:":
        assert cmap[b] == b


# ------------------------------------------------------------------ the mask walk's speed-ups

def _mask_facts(mask):
    return mask.allow, mask.eos, mask.dead_end, mask.n_allowed, sorted(mask.ids.tolist())


def _allowed_ids(facts, size: int) -> set[int]:
    allow, ids = facts[0], set(facts[4])
    return ids if allow else set(range(size)) - ids


@pytest.mark.parametrize("presize", ["default", "none"])
def test_compiled_walk_is_built_and_gives_the_python_walks_masks(project, monkeypatch, presize) -> None:
    """The compiled walk (``_walk.c``, built by ``pip install``) computes the same masks as
    the Python walk, state for state, over random positions of the sample files - also when
    its hash tables start at their least size and grow many times over."""
    import luaguard.guard.vocab as V
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    import os

    if os.environ.get(V.PURE_PYTHON_ENV):
        pytest.skip(f"{V.PURE_PYTHON_ENV} selects the Python walk")
    assert V._CWalker is not None, "luaguard.guard._walk is not built (the install needs a C compiler)"
    table = token_table(byte_level_tokenizer())
    au = Automaton(path_space(project))
    if presize == "none":
        monkeypatch.setattr(V, "WALK_PRESIZE_SMALL", 0)  # 64 slots a table
    g = Guard(au, table)
    assert g.engine.compiled
    ref = V.MaskEngine(au, table, compiled=False)
    assert not ref.compiled
    rng = random.Random(23)
    n = 0
    for m, before in _random_matchers(g, project, rng, 12):
        for _step in range(6):
            state = m.cursor.state
            assert _mask_facts(g.engine.mask_after(state)) == _mask_facts(ref.mask_after(state)), (before, m.text)
            n += 1
            mask = m.mask()
            m.consume(rng.choice(mask.ids.tolist()) if mask.allow else rng.choice(
                [t for t in range(table.size) if mask.allows(t)]))
            if m.finished:
                break
    assert n >= 30
    assert g.engine.stats["walks"] > 0 and ref.stats["walks"] > 0
    # the walker's memo holds what the Python walk's dicts hold (so 64 slots grew many times)
    assert g.engine.memo_entries() == ref.memo_entries() > 4 * 64


def test_delegate_packing_refuses_what_it_cannot_hold(project, monkeypatch) -> None:
    """_StateTables.deleg_miss packs a delegate's special bytes in 24 bits: more than three,
    or a 0 byte (the empty slot), is a ValueError naming them, not a wrong walk."""
    import luaguard.guard.vocab as V
    from luaguard.guard.automaton import Automaton, initial_state
    from luaguard.guard.matcher import path_space

    au = Automaton(path_space(project))
    t = V._StateTables(au, {"steps": 0})
    sid = t.intern(initial_state())
    for special in (b".=:-", b"\x00."):
        monkeypatch.setattr(au, "delegate", lambda s, _sp=special: (initial_state(), _sp))
        with pytest.raises(ValueError, match="special bytes"):
            t.deleg_miss(sid)
    monkeypatch.setattr(au, "delegate", lambda s: (initial_state(), b"->="))
    packed = t.deleg_miss(sid)
    assert packed >> 24 == sid and bytes((packed >> (8 * i)) & 255 for i in range(3)) == b"->="


def test_compiled_walk_skips_non_code_bytes_only_where_they_are_rejected(project) -> None:
    """The compiled walk decides itself whether a state rejects every byte that is never
    code (non-ASCII and control bytes: the tokens made of them are then skipped whole): in
    code they are rejected, inside strings, comments and long brackets they are text - the
    same masks as the Python walk, with every single byte a token, and the tokens skipped
    in code (as many trie nodes walked as the Python walk)."""
    import os

    import luaguard.guard.vocab as V
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space

    if os.environ.get(V.PURE_PYTHON_ENV) or V._CWalker is None:
        pytest.skip("the compiled walk is not in use")
    table = _table(EXTRA + ["é".encode(), "\u00e9t\u00e9".encode(), b"\xff\xfe"])
    au = Automaton(path_space(project))
    g = Guard(au, table)
    ref = V.MaskEngine(au, table, compiled=False)
    assert g.engine.compiled
    cases = {'local s = "': True, "local s = '": True, "-- a ": True, "--[[ a ": True, "local s = [[": True,
             "local s = `": True, "local s = 1 ": False, "local s = game.": False, 'print(game:GetService("': False}
    for prompt, text in cases.items():
        state = g.start(prompt).state
        got, want = g.engine.mask_after(state), ref.mask_after(state)
        assert _mask_facts(got) == _mask_facts(want), prompt
        assert got.allows(0xC3) == text and got.allows(257 + len(EXTRA)) == text, prompt
        # and it skips them where the Python walk does (in code): both walk as many nodes
        assert g.engine.stats["walks"] == ref.stats["walks"], prompt


def test_shared_name_positions_change_no_mask(project) -> None:
    """Positions inside names shared between tables with the same names below (and names
    read without the value they are read on) accept exactly the bytes the unshared ones do:
    masks equal the reference automaton's over random positions and over every child and
    member name after a few instance values; and sharing does merge states."""
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    table = token_table(byte_level_tokenizer())
    space = path_space(project)
    shared = Guard(Automaton(space, share_names=True), table)
    plain = Guard(Automaton(space, share_names=False), table)
    rng = random.Random(29)
    files = sorted((SAMPLES / "src").rglob("*.luau"))
    cuts = []
    for _ in range(10):
        f = rng.choice(files)
        src = f.read_text()
        cuts.append((src[:rng.randrange(len(src))], project.instances_for_file(str(f.relative_to(SAMPLES)))))
    # names after values of one class with different children (shared members)
    for path in ("game.ReplicatedStorage.Shared", "game.ReplicatedStorage.Remotes", "game.ServerScriptService.Server",
                 "workspace", "game.Players.LocalPlayer"):
        for tail in (".", ".Na", ".Par", ".F", ':WaitForChild("', ":Fin"):
            cuts.append((f"local x = {path}{tail}", ()))
    checked = 0
    for prompt, scripts in cuts:
        a, b = shared.matcher(prompt, scripts=scripts), plain.matcher(prompt, scripts=scripts)
        for _step in range(5):
            ma, mb = a.mask(), b.mask()
            assert _mask_facts(ma) == _mask_facts(mb), (prompt[-60:], a.text)
            checked += 1
            t = rng.choice([t for t in range(table.size) if ma.allows(t)])
            assert a.consume(t) and b.consume(t)
            if a.finished:
                break
    assert checked >= 60
    assert len(shared.engine._tables.states) < len(plain.engine._tables.states)


def test_byte_class_templates_equal_the_reference_builder(project) -> None:
    """Byte classes of identifiers, names and name strings come from templates; over every
    class key a random walk over the sample files meets they equal the reference builder's."""
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import M_IDENT, M_NAME, M_NSTR, Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    table = token_table(byte_level_tokenizer())
    au = Automaton(path_space(project))
    g = Guard(au, table)
    rng = random.Random(31)
    named = [g.matcher(p) for p in ('local x = game.ReplicatedStorage:WaitForChild("', 'local s = game:GetService("',
                                    "local y = game.ReplicatedStorage.Sh")]
    for m in [*named, *(m for m, _before in _random_matchers(g, project, rng, 10))]:
        for _step in range(5):
            mask = m.mask()
            m.consume(rng.choice([t for t in range(table.size) if mask.allows(t)]))
            if m.finished:
                break
    keys = [k for k in au._class_cache if k[0] in (M_IDENT, M_NAME, M_NSTR)]
    kinds = {k[0] for k in keys}
    assert {M_IDENT, M_NAME, M_NSTR} <= kinds, kinds
    for k in keys:
        assert au._class_cache[k] == au._build_classes(k), k


def test_compiled_walk_checks_the_tries_records(project) -> None:
    """The compiled walk reads the trie's int32 records (``VocabTrie.records``)
    without bounds checks, so the walker checks them once when made: records that are not
    whole, or an index out of range, are a ``ValueError`` naming the record, never a read
    past the buffer; the records as built describe the same trie as the lists."""
    import numpy as np

    import luaguard.guard.vocab as V
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    if V._CWalker is None:
        pytest.skip("the compiled walk is not built")
    table = token_table(byte_level_tokenizer())
    engine = V.MaskEngine(Automaton(path_space(project)), table)
    trie = engine.trie
    built = trie.records
    nodes = np.frombuffer(built[0], dtype=np.int32).reshape(-1, 8)
    groups = np.frombuffer(built[1], dtype=np.int32).reshape(-1, 4)
    kids = np.frombuffer(built[2], dtype=np.int32).reshape(-1, 2)
    assert len(nodes) == trie.nodes
    for node in (0, 1, trie.nodes // 2, trie.nodes - 1):
        lo, hi, own, proj, plain, has, g0, g1 = nodes[node].tolist()
        assert (lo, hi, own, proj, plain, has) == (trie.lo[node], trie.hi[node], trie.own[node], trie.proj[node],
                                                   trie.plain[node], int(bool(trie.children[node])))
        got = tuple((int(groups[g, 0]), tuple(map(tuple, kids[groups[g, 1]:groups[g, 2]].tolist())))
                    for g in range(g0, g1))
        assert got == trie.groups[node]
    walker = engine._new_cwalker()  # (the records as built are accepted)
    assert walker is not None
    t = engine._tables
    args = dict(free=t.free, pclass=t.pclass, trans_miss=t.trans_miss, deleg_miss=t.deleg_miss,
                trunc_miss=t.trunc_miss, gproj_miss=t.gproj_miss, cmap_miss=t.cmap, bad_bytes=V._BAD_BYTES,
                nodes=built[0], groups=built[1], kids=built[2], span=engine._gspan)
    for presize in (-1, 1 << 31):
        with pytest.raises(ValueError, match="presize"):
            V._CWalker(**args, presize=presize)
    with pytest.raises(TypeError, match="presize"):
        V._CWalker(**args)
    bad_kid = kids.copy()
    bad_kid[-1, 1] = trie.nodes  # a child past the last node
    bad_group = groups.copy()
    bad_group[0, 2] = len(kids) + 1
    for records, message in (((built[0], built[1], bad_kid.tobytes()), "child record"),
                             ((built[0], bad_group.tobytes(), built[2]), "group record 0 "),
                             ((built[0][:-4], built[1], built[2]), "whole int32 records")):
        trie.records = records
        try:
            with pytest.raises(ValueError, match=message):
                engine._new_cwalker()
        finally:
            trie.records = built


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_dense_build_equals_the_pieces_build(project, compiled) -> None:
    """A small vocabulary's masks built straight as a boolean row (``_build_dense``) are
    the masks ``_build`` makes from per-layer id arrays: same kept side, ids, count, EOS and
    dead end, same row applied - for the states a random walk meets and for every layer
    state combination it built (with the compiled walk and the Python one; a dead end
    included)."""
    import numpy as np

    import luaguard.guard.vocab as V
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    if compiled and V._CWalker is None:
        pytest.skip("the compiled walk is not built")
    table = token_table(byte_level_tokenizer())
    g = Guard(Automaton(path_space(project)), table)
    g.engine.compiled = compiled
    g.engine._reset()
    _walked_states(g, project, 17, 6)
    e = g.engine
    combos = list(e._combos)
    # a dead end: no layer admits a token and EOS may not come
    combos.append((tuple(-1 for _ in e.trie.roots), False))
    assert len(combos) > 20
    sides = set()
    for layers, eos in combos:
        a, b = e._build_dense(layers, eos), e._build(layers, eos)
        assert (a.allow, a.n_allowed, a.eos, a.dead_end) == (b.allow, b.n_allowed, b.eos, b.dead_end), layers
        assert np.array_equal(np.sort(a.ids), np.sort(b.ids)), layers
        assert np.array_equal(a.banned_row(), b.banned_row()), layers
        sides.add((a.allow, a.dead_end))
    assert {(True, False), (False, False), (True, True)} <= sides, sides


def test_compiled_allow_row_matches_numpy() -> None:
    """``allow_row`` (``_walk.c``) bans every id but those of the rank intervals (and EOS
    when asked, or when no interval cleared one), counts what it cleared, and refuses ranks
    outside the rank order, ids outside the row and rows of wider items."""
    import numpy as np

    import luaguard.guard.vocab as V

    if V._c_allow_row is None:
        pytest.skip("the compiled walk is not built")
    rng = np.random.default_rng(9)
    perm = rng.permutation(5_000).astype(np.int64)
    eos = np.array([4_999, 17], dtype=np.int64)
    for trial in range(200):
        ivs = []
        for _layer in range(int(rng.integers(0, 4))):
            cuts = np.sort(rng.choice(np.arange(0, 5_000), size=2 * int(rng.integers(0, 6)), replace=False))
            ivs.append(cuts.reshape(-1, 2).astype(np.int64))
        for want_eos in (False, True):
            row = np.empty(5_000, dtype=bool)
            ranks, zeros = V._c_allow_row(perm, ivs, row, eos, want_eos)
            ref = np.ones(5_000, dtype=bool)
            n = 0
            for iv in ivs:
                for a, z in iv.tolist():
                    ref[perm[a:z]] = False
                    n += z - a
            if want_eos or n == 0:
                ref[eos] = False
            assert ranks == n and zeros == int((~ref).sum()), trial
            assert np.array_equal(row, ref), trial
    row = np.empty(5_000, dtype=bool)
    with pytest.raises(ValueError, match="allow_row"):
        V._c_allow_row(perm, [np.array([[4_990, 5_001]], dtype=np.int64)], row, eos, False)
    with pytest.raises(ValueError, match="allow_row"):
        V._c_allow_row(perm, [np.array([[7, 3]], dtype=np.int64)], row, eos, False)
    with pytest.raises(ValueError, match="allow_row"):  # an id past a narrower row
        V._c_allow_row(perm, [np.array([[0, 5_000]], dtype=np.int64)], np.empty(10, dtype=bool), eos, False)
    with pytest.raises(ValueError, match="EOS"):
        V._c_allow_row(perm, [], row, np.array([5_000], dtype=np.int64), True)
    with pytest.raises(TypeError, match="one-byte"):
        V._c_allow_row(perm, [], np.empty(5_000, dtype=np.int16), eos, True)
    with pytest.raises(TypeError, match="int64"):
        V._c_allow_row(perm, [np.zeros(4, dtype=np.int32)], row, eos, True)


def test_compiled_layer_id_arrays_match_numpy() -> None:
    """``side_runs`` + ``gather`` (``_walk.c``) make a layer's allowed or banned ids as
    :func:`~luaguard.guard.vocab._expand` does: long runs apart, the rest gathered in rank
    order; runs outside the rank order or an output of the wrong length are errors."""
    import numpy as np

    import luaguard.guard.vocab as V

    if V._c_side_runs is None:
        pytest.skip("the compiled walk is not built")
    rng = np.random.default_rng(5)
    perm = rng.permutation(10_000).astype(np.int64)
    for trial in range(200):
        cuts = np.sort(rng.choice(np.arange(100, 9_900), size=2 * int(rng.integers(0, 12)), replace=False))
        iv = cuts.reshape(-1, 2).astype(np.int64)
        for banned in (False, True):
            longs, shorts, n = V._c_side_runs(iv, 100, 9_900, banned, 300)
            want = set()
            runs = iv.tolist() if not banned else [
                (a, z) for a, z in zip([100] + iv[:, 1].tolist(), iv[:, 0].tolist() + [9_900]) if z > a]
            for a, z in runs:
                want.update(perm[a:z].tolist())
            assert all(z - a >= 300 for a, z in longs)
            rest = np.empty(n, dtype=np.int64)
            V._c_gather(perm, shorts, rest)
            got = [i for a, z in longs for i in perm[a:z].tolist()] + rest.tolist()
            assert len(got) == len(want) and set(got) == want, (trial, banned)
            short_runs = [(a, z) for a, z in runs if z - a < 300]
            ref = perm[V._expand(np.array([a for a, _ in short_runs], dtype=np.int64),
                                 np.array([z for _, z in short_runs], dtype=np.int64))] if short_runs else []
            assert rest.tolist() == list(ref)
    with pytest.raises(ValueError, match="gather"):
        V._c_gather(perm, np.array([9_990, 10_001], dtype=np.int64).tobytes(), np.empty(11, dtype=np.int64))
    with pytest.raises(ValueError, match="gather"):
        V._c_gather(perm, np.array([0, 5], dtype=np.int64).tobytes(), np.empty(4, dtype=np.int64))
    with pytest.raises(TypeError, match="int64"):
        V._c_side_runs(np.zeros(4, dtype=np.int32), 0, 10, False, 2)
    for bad in ([[5, 3]], [[2, 6], [4, 8]], [[0, 3]], [[3, 11]]):  # inverted, overlapping, outside [1, 10)
        for banned in (False, True):
            with pytest.raises(ValueError, match="side_runs"):
                V._c_side_runs(np.array(bad, dtype=np.int64), 1, 10, banned, 2)
    from luaguard.guard.bitmask import _c_apply_bits as apply_bits

    logits = np.zeros((2, 70), dtype=np.float32)
    bits = np.array([[-1, -1, -1], [0b1011, -1, 0]], dtype=np.int32)  # row 1: 2 and 4.. 31 banned, 64.. banned
    apply_bits(logits, bits, np.array([1], dtype=np.int64), np.array([1], dtype=np.int64))
    assert not np.isinf(logits[0]).any()
    assert [t for t in range(70) if np.isinf(logits[1, t])] == [2] + list(range(4, 32)) + list(range(64, 70))
    wide = np.zeros((1, 100), dtype=np.float32)  # ids past the words are banned
    apply_bits(wide, bits, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
    assert [t for t in range(100) if np.isinf(wide[0, t])] == list(range(96, 100))
    with pytest.raises(IndexError, match="out of range"):
        apply_bits(logits, bits, np.array([0, 2], dtype=np.int64), np.array([0, 0], dtype=np.int64))
    with pytest.raises(IndexError, match="out of range"):
        apply_bits(logits, bits, np.array([0], dtype=np.int64), np.array([2], dtype=np.int64))
    assert not np.isinf(logits[0]).any()  # checked before anything is written
    with pytest.raises(TypeError, match="float32"):
        apply_bits(np.zeros((1, 8)), bits, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
    with pytest.raises(TypeError, match="int32"):
        apply_bits(logits, bits.astype(np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))


def test_rank_total_counts_the_ranks_of_intervals() -> None:
    """``_rank_total`` (a layer's accepted tokens, from its rank intervals; ``rank_total`` in
    ``_walk.c`` where built, numpy otherwise) equals the sum of the intervals' lengths, for
    arrays the walk makes (read-only views of its bytes), numpy's own and empty ones; the C
    function refuses a buffer that is not int64."""
    import numpy as np

    import luaguard.guard.vocab as V

    rng = np.random.default_rng(11)
    for _ in range(100):
        cuts = np.sort(rng.choice(np.arange(10_000), size=2 * int(rng.integers(0, 30)), replace=False))
        iv = cuts.reshape(-1, 2).astype(np.int64)
        want = int(sum(z - a for a, z in iv.tolist()))
        assert V._rank_total(iv) == want
        view = np.frombuffer(iv.tobytes(), dtype=np.int64).reshape(-1, 2)  # as _layer_array makes them
        assert V._rank_total(view) == want
        assert V._rank_total(np.asfortranarray(iv)) == want  # (not C-contiguous: numpy's way)
    assert V._rank_total(np.zeros((0, 2), dtype=np.int64)) == 0
    if V._c_rank_total is not None:
        with pytest.raises(TypeError, match="int64"):
            V._c_rank_total(np.zeros((2, 2), dtype=np.int32))


def test_a_dropped_engine_is_freed_without_a_garbage_collection(project) -> None:
    """The compiled walk holds no reference cycle through its engine: dropping the engine
    frees it (and its tables) at once, not at the next full collection."""
    import gc
    import weakref

    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table
    from luaguard.guard.vocab import MaskEngine

    table = token_table(byte_level_tokenizer())
    au = Automaton(path_space(project))
    engine = MaskEngine(au, table)
    g = Guard(au, table)
    g.engine = engine
    g.matcher("local x = game.ReplicatedStorage.").mask()  # the walk ran (and called back)
    assert engine.stats["walks"] > 0
    ref = weakref.ref(engine)
    gc.disable()
    try:
        del g, engine
        assert ref() is None
    finally:
        gc.enable()


def test_long_tokens_walk_in_a_thread_with_a_small_stack(project) -> None:
    """Tokens hundreds of bytes long (runs of spaces, dashes, letters, as some vocabularies
    have) are walked one trie level per byte; in a worker thread with a 512 KiB stack (the
    default on macOS) the compiled walk computes the same masks as the Python walk."""
    import threading

    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.vocab import MaskEngine

    table = _table([b" " * 600, b"-" * 600, b"a" * 600, b"\t" * 300 + b"end"])
    au = Automaton(path_space(project))
    prompts = ["", "local x = ", "-- ", "if x then\n", 'x = "', "local p = game.ReplicatedStorage.Shared."]
    got: dict[str, object] = {}

    def run() -> None:
        try:
            g = Guard(au, table)
            ref = MaskEngine(au, table, compiled=False)
            for p in prompts:
                state = g.matcher(p).cursor.state
                got[p] = (_mask_facts(g.engine.mask_after(state)), _mask_facts(ref.mask_after(state)))
        except BaseException as e:  # noqa: BLE001 - reported below
            got["error"] = e

    old = threading.stack_size(512 * 1024)
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    assert "error" not in got, got.get("error")
    for p in prompts:
        compiled, python = got[p]
        assert compiled == python, p
    # the long tokens were judged, not skipped: 600 spaces and 600 dashes (a comment) fit
    # after `local x = `; 600 letters are a name that no child of a closed folder has
    spaces, dashes, letters, tab_end = range(table.size - 4, table.size)
    allowed = {p: _allowed_ids(got[p][0], table.size) for p in prompts}
    assert spaces in allowed["local x = "] and dashes in allowed["local x = "]
    assert tab_end in allowed["if x then\n"] and letters in allowed["local x = "]
    assert dashes in allowed['x = "'] and letters not in allowed["local p = game.ReplicatedStorage.Shared."]


def test_canonical_positions_are_shared_exactly_when_the_names_below_are_equal(project, monkeypatch) -> None:
    """PathSpace.canon: after the first byte of a name, two tables' positions are one exactly
    when the names (and values) below them are equal; a position with more names below than
    CANON_MAX_NAMES stays its own."""
    import luaguard.guard.paths as P
    from luaguard.guard.paths import KIND_DOT, PathSpace

    space = PathSpace(project)
    values = [space.nodeset((project.resolve_path(p),)) for p in
              ("ReplicatedStorage.Shared", "ReplicatedStorage.Remotes", "ServerScriptService.Server")]
    tables = [space.table(v, KIND_DOT) for v in values]
    shared = differ = 0
    for i, a in enumerate(tables):
        for b in tables[i + 1:]:
            ta, tb = space.get_table(a), space.get_table(b)
            for byte in set(ta.children[0]) & set(tb.children[0]):
                na, nb = ta.children[0][byte], tb.children[0][byte]
                same = ta.trie.subtree(na) == tb.trie.subtree(nb) and ta.free == tb.free
                assert (space.canon(a, na) == space.canon(b, nb)) == same, (chr(byte), a, b)
                shared += same
                differ += not same
    assert shared > 10 and differ > 0, (shared, differ)  # class members are shared, children differ

    monkeypatch.setattr(P, "CANON_MAX_NAMES", 1)
    small = PathSpace(project)
    t = small.table(small.nodeset((project.resolve_path("ReplicatedStorage.Shared"),)), KIND_DOT)
    tab = small.get_table(t)
    big = 0
    for node in tab.children[0].values():
        if tab.trie.count(node) > 1:
            big += 1
            assert small.canon(t, node) == (t, node)
    assert big > 5


def test_projection_class_drops_only_what_cannot_change_a_projection(project) -> None:
    """The mask walk normalises its projection keys with the state's projection class
    (projection_args: frames beyond the open ones, string ends other than the state's own,
    value and white-space bits where there is none): for every state the walk met over
    random positions of the sample files, every key and its normalised form project alike."""
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import Automaton, projection_args
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    table = token_table(byte_level_tokenizer())
    au = Automaton(path_space(project))
    g = Guard(au, table)
    _walked_states(g, project, 37, 4)
    states = g.engine._tables.states
    assert len(states) > 200
    merged = 0
    for s in states:
        pc = au.projection_class(s)
        for keep in range(0, 8):
            for ends in range(32):
                for drop in range(4):
                    nk, ne, nd = projection_args(pc, keep, ends, drop)
                    merged += (nk, ne, nd) != (keep, ends, drop)
                    assert au.project(s, nk, ne, nd) == au.project(s, keep, ends, drop), (s, keep, ends, drop)
    assert merged > 0


def test_projection_identity_is_known_from_the_projection_class(project) -> None:
    """The compiled walk skips a projection whose projection class says it is the state
    itself (projection_is_identity: PC_CLEAN, every frame kept, nothing to drop, the
    string's end byte among the coming ones).  Over the states the walk met and the
    matchers' own full states (with declarations, events and frames the model opened, which
    are not clean): wherever it says so, project returns the very state; and it says so for
    most of the walk's states."""
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import PC_CLEAN, Automaton, projection_args, projection_is_identity
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    table = token_table(byte_level_tokenizer())
    au = Automaton(path_space(project))
    g = Guard(au, table)
    full = _walked_states(g, project, 41, 6)
    walk_states = list(g.engine._tables.states)
    unclean = [s for s in full if not au.projection_class(s) & PC_CLEAN]
    assert unclean and any(s[6] is not None for s in unclean)  # declarations are never clean
    said = 0
    for s in walk_states + full:
        pc = au.projection_class(s)
        for keep in range(0, 8):
            for ends in range(32):
                for drop in range(16):
                    nk, ne, nd = projection_args(pc, keep, ends, drop & 3)
                    nd |= drop & 12
                    if projection_is_identity(pc, nk, ne, nd):
                        said += 1
                        assert au.project(s, nk, ne, nd) is s, (s, keep, ends, drop)
    clean = sum(1 for s in walk_states if au.projection_class(s) & PC_CLEAN)
    assert clean > len(walk_states) // 2
    assert said > 0


def test_compiled_projections_equal_the_automatons(project) -> None:
    """The compiled walk projects states itself (``project_sid`` in ``_walk.c``): for the
    states the walks of random sample positions met and the matchers' own full states (with
    declarations, events and frames the model opened), under keys keeping none to more
    than all frames, every string end and every ``drop`` bit, the state it interns is the
    one :meth:`Automaton.project` returns, with the free kind and projection class the
    automaton computes for it; and it returns the state's own id where ``project`` returns
    the state itself."""
    import os

    import luaguard.guard.vocab as V
    from guard_support import byte_level_tokenizer
    from luaguard.guard import automaton as AU
    from luaguard.guard.automaton import Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    if os.environ.get(V.PURE_PYTHON_ENV) or V._CWalker is None:
        pytest.skip("the compiled walk is not in use")
    table = token_table(byte_level_tokenizer())
    au = Automaton(path_space(project))
    g = Guard(au, table)
    full = _walked_states(g, project, 43, 6)
    t, cw = g.engine._tables, g.engine._cwalk
    sids = list(range(min(len(t.states), 700))) + [t.intern(s) for s in full]
    modes = set()
    same = 0
    for sid in sids:
        s = t.states[sid]
        for keep in (0, 1, 2, 3, 70):
            for ends in (0, 1, 2, 4, 8, 16, 31):
                for drop in range(16):
                    want = au.project(s, keep, ends, drop)
                    got = cw.project(sid, keep, ends, drop)
                    if got is None:  # (a type or a parameter list: Python projects it)
                        assert any(f[0] >= AU.K_PARAMS for f in s[AU.STACK])
                        continue
                    assert t.states[got] == want, (s, keep, ends, drop)
                    if want is s:
                        assert got == sid
                        same += 1
                    elif want != s:
                        modes.add(s[0])
    for sid, s in enumerate(t.states):
        assert (t.free[sid], t.pclass[sid]) == (au.free_kind(s), au.projection_class(s)), s
    assert same > 0 and len(modes) >= 8, modes
    assert any(s[6] is not None or s[9] for s in full)  # declarations or events were projected


def test_fixed_identifiers_are_left_as_they_are_by_identifier_bytes(project) -> None:
    """Automaton.ident_fixed (readers skip the rest of a run of identifier bytes from such a
    state): from every state the walk met and every state a byte-by-byte reading of sample
    files passed, a state it calls fixed steps to itself on every identifier byte in all
    four modes - and there are such states (inside identifiers read within a token)."""
    from luaguard.guard import automaton as AU
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import GEN, LENIENT, Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    au = Automaton(path_space(project))
    g = Guard(au, token_table(byte_level_tokenizer()))
    states = set(_walked_states(g, project, 29, 6)) | set(g.engine._tables.states)
    bytewise = Guard(au, _table())  # one token a byte: a value is attached after each
    for f in sorted((SAMPLES / "src").rglob("*.luau"))[:6]:
        cur = bytewise.start("")
        for byte in f.read_bytes()[:1500]:
            states.add(cur.state)
            nxt = bytewise.advance(cur, byte)
            cur = nxt if nxt is not None else bytewise.start("")
    # (a cursor's identifier has its value attached; the states inside a token follow it)
    states |= {n for s in list(states) for b in b"aQ_7" for how in (GEN, LENIENT) for n in (au.step(s, b, how),)
               if n is not None}
    fixed = idents = 0
    for s in states:
        if s[AU.MODE] != AU.M_IDENT:
            continue
        idents += 1
        if not au.ident_fixed(s):
            continue
        fixed += 1
        for b in AU._IDBYTES:
            for how in (0, GEN, LENIENT, LENIENT | GEN):
                assert au.step(s, b, how) == s, (s, b, how)
    assert fixed > 50 and idents > fixed, (fixed, idents)


def test_delegates_step_as_the_pending_token_does(project) -> None:
    """Automaton.delegate (the compiled walk takes the transitions of a state right after
    `.`, `..`, `:` or `-` from its delegate): from every state the walk met and every state
    the matchers passed while reading sample files and declarations typed with `:`, each
    byte that does not extend the pending token leads from the delegate where it leads
    from the state, in each of the four modes; the states the walk met are all marked
    PC_DELEG where they delegate."""
    from collections import Counter

    from luaguard.guard import automaton as AU
    from guard_support import byte_level_tokenizer
    from luaguard.guard.automaton import PC_DELEG, Automaton
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    table = token_table(byte_level_tokenizer())
    au = Automaton(path_space(project))
    g = Guard(au, table)
    full = set(_walked_states(g, project, 43, 6))
    text = ('local rs: ReplicatedStorage = game:GetService("ReplicatedStorage")\nlocal a, b: number = 1 - 2, 3 .. "x"\n'
            'local r = rs.Shared:WaitForChild("Util") -- c\nlocal n = #rs:GetChildren() - 1\nprint(a .. b, -n)\n'
            'local p = rs --[[c]].Shared\n')
    bytewise = Guard(au, _table())  # one token a byte
    cur = bytewise.start("")
    for byte in text.encode():
        full.add(cur.state)
        nxt = bytewise.advance(cur, byte)
        cur = nxt if nxt is not None else bytewise.start("")  # (`rs --[[c]].S`: rejected)
    checked: Counter = Counter()
    for s in set(g.engine._tables.states) | full:
        got = au.delegate(s)
        if got is None:
            continue
        assert au.projection_class(s) & PC_DELEG
        d, special = got
        for b in range(256):
            if b not in special:
                assert au.step(s, b) == au.step(d, b), (s, b)
        checked[s[AU.MODE]] += 1
    for mode in (AU.M_DOT1, AU.M_DOT2, AU.M_COLON, AU.M_DASH):
        assert checked[mode] >= 3, checked


def test_compiled_steps_equal_the_automatons_steps_byte_for_byte(project) -> None:
    """The compiled walk's own automaton steps (``cstep`` in ``_walk.c``: between tokens in
    code, names after ``.``/``:``, lookup and index arguments, name strings and what follows
    their closing quote, after ``[`` and ``[=``, the bytes that extend ``.``, ``..``, ``-``
    and ``~``,
    line comments and the starts of comments, quoted and interpolated strings, numbers) give, for
    every byte, the state :meth:`Automaton.step` gives from every state the walks of random
    sample positions reached, and intern new states with the free kind and projection class
    the automaton computes for them (which the walk's skips read)."""
    import collections

    import luaguard.guard.vocab as V
    from guard_support import byte_level_tokenizer
    from luaguard.guard import automaton as A
    from luaguard.guard.matcher import path_space
    from luaguard.guard.table_cache import token_table

    import os

    if os.environ.get(V.PURE_PYTHON_ENV) or V._CWalker is None:
        pytest.skip("the compiled walk is not in use")
    table = token_table(byte_level_tokenizer())
    au = A.Automaton(path_space(project))
    g = Guard(au, table)
    assert g.engine.compiled and g.engine.compiled_steps
    _walked_states(g, project, 31, 6)
    for text in ('local rs = game:GetService("', 'game.ReplicatedStorage:WaitForChild("', 'game.Workspace["',
                 "local x = game.ReplicatedStorage.", "game.Players.LocalPlayer:", "-- a comment", "--[=",
                 'local s = "text', "local n = 0x1F", "local f = 1.5e", "local t = `a {x} b", "local u = [==",
                 "local v = f[", "print(`{", "local p = game:GetService(", "local w = game.ReplicatedStorage[ ", "local w2 = workspace[",
                 'local q = game:GetService("Players"', 'local r = game.Workspace["Baseplate"',
                 'local c = game.ReplicatedStorage:WaitForChild( ', "local d = (", "local e = x .", "f(a ..",
                 "local g = y -", "if z ~", "return ."):
        g.matcher(text).mask()  # (name strings and names of the walk's own)
    t, cw = g.engine._tables, g.engine._cwalk
    extra = [t.intern((A.M_LBRACK_EQ, level) + s[2:])  # (the longest long-bracket level opened)
             for s in [s for s in t.states if s[0] == A.M_LBRACK_EQ][:3] for level in (31, 32)]
    covered: collections.Counter = collections.Counter()
    for sid in [*range(min(len(t.states), 2500)), *(i for i, s in enumerate(t.states) if s[0] == A.M_IARG), *extra]:
        s = t.states[sid]
        for b in range(256):
            got = cw.step(sid, b)
            if got is None:
                continue
            want = au.step(s, b)
            assert (None if got < 0 else t.states[got]) == want, (s, b)
            covered[s[0]] += 1
    for sid, s in enumerate(t.states):
        assert (t.free[sid], t.pclass[sid]) == (au.free_kind(s), au.projection_class(s)), s
    assert all(covered[m] > 100 for m in (A.M_CODE, A.M_NAME, A.M_NSTR, A.M_LBRACK, A.M_LCMT, A.M_CSTART, A.M_STR,
                                          A.M_NUM, A.M_INTERP, A.M_LBRACK_EQ, A.M_LARG, A.M_IARG, A.M_AFTER)), covered
    # pending punctuation: the bytes that extend it (the rest of `..` and `-` is the delegate's)
    assert all(covered[m] > 10 for m in (A.M_DOT1, A.M_DOT2, A.M_DASH, A.M_TILDE)), covered
    assert any(s[0] == A.M_LSTR for s in t.states)  # (opened by the walker's own `[[` / `[=[`)
    # with grounded asset ids the automaton's steps stay in Python
    from luaguard.guard.numbers import IdSet

    ids_au = A.Automaton(path_space(project), ids=IdSet(["1234567"]))
    g2 = Guard(ids_au, table)
    g2.engine.mask_after(A.initial_state())
    assert all(g2.engine._cwalk.step(0, b) is None for b in range(256))
