"""The guard's contract on the classes of code that public Luau showed (see
``test_real_code_regressions.py``): everything the patch-mode linter accepts, the guard
accepts - token by token and in its masks, for every test tokenizer (the shipped model's,
a byte-level BPE and a SentencePiece-style one), primed at every line of the snippet, and
at the real production tokenizers of ``real_tokenizers.py`` (Qwen2.5's 151k BPE, Qwen3.6's
248k, DeepSeek's 128k): the snippets, the project snippets and a few of the sample place's
files (the whole place at those sizes is ``bench/real_code.py --tokenizers``'s).  The guard
is the one every front end builds (:func:`~luaguard.guard.matcher.project_guard` of the
engine's :meth:`~luaguard.engine.Engine.guard_contract`).

The snippets are this project's own; the sample place's files are replayed the same way.
Where a snippet needs a project (instance paths, template scripts, Wally packages, names
created at run time, a file outside the DataModel, names shadowing instance-bound locals),
it gets a small project built in a temporary folder.
"""

from __future__ import annotations

import json

import pytest
from guard_support import SAMPLES, byte_level_tokenizer, metaspace_tokenizer, replay
from test_real_code_regressions import VALID

from real_tokenizers import NAMES, WIDTHS, available, real_tokenizer

from luaguard.engine import Engine
from luaguard.guard.matcher import project_guard
from luaguard.completion.loading import _load_tokenizer, default_model_path
from luaguard.guard.table_cache import token_table
from project_files import write_files


def _tokenizers():
    return {
        "default": _load_tokenizer(default_model_path()),
        "byte_level": byte_level_tokenizer(),
        "metaspace": metaspace_tokenizer(),
    }


@pytest.fixture(scope="module")
def tokenizers():
    return {name: (tok, token_table(tok)) for name, tok in _tokenizers().items()}


@pytest.fixture(scope="module", params=NAMES)
def real(request):
    """One real production tokenizer (built once per process) and its table at its model's
    logits width, as ``{name: (tokenizer, table)}``."""
    why = available(request.param)
    if why:
        pytest.skip(why)
    tok = real_tokenizer(request.param)
    return {request.param: (tok, token_table(tok, WIDTHS[request.param]))}


def _error_lines(engine: Engine, text: str, path) -> set[int]:
    lines: set[int] = set()
    for f in engine.lint_text(text, path, mode="patch"):
        if f.severity.label == "error":
            lines.update(range(f.range.start.line, f.range.end.line + 1))
    return lines


def _check(engine: Engine, text: str, path, tokenizers, *, every_line: bool | str = True,
           mask_every: int = 1) -> list[str]:
    """Replay ``text`` through the guard of ``engine``'s contract for ``path`` for each
    tokenizer, primed at each line start (``False``: the first, middle and last lines;
    ``"first"``: the first), every ``mask_every``-th token's mask checked too; the misses,
    described."""
    contract = engine.guard_contract(path, text)
    scripts = contract.scripts
    data = text.encode("utf-8")
    errors = _error_lines(engine, text, path)
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A and i + 1 < len(data)]
    if every_line == "first":
        starts = starts[:1]
    elif not every_line:
        starts = sorted({starts[0], starts[len(starts) // 2], starts[-1]})
    out = []
    for name, (tok, table) in tokenizers.items():
        guard = project_guard(table, contract)
        for start in starts:
            misses, _refusals, _tokens, _masks, note = replay(guard, tok, table, data, start, scripts=scripts,
                                                              error_lines=errors, mask_every=mask_every)
            assert not note, (name, note)
            out.extend(f"{name} from byte {start}: line {ln} token {piece!r}: {why}" for ln, piece, why in misses)
    return out


@pytest.mark.parametrize("name", sorted(VALID))
def test_guard_accepts_the_valid_snippets(name, tokenizers):
    assert _check(Engine(), VALID[name], "x.luau", tokenizers) == []


def test_guard_accepts_the_sample_place(tokenizers):
    engine = Engine(SAMPLES)
    misses = []
    for path in sorted((SAMPLES / "src").rglob("*.luau")):
        misses += [f"{path.name}: {m}" for m in _check(engine, path.read_text(encoding="utf-8"), path, tokenizers,
                                                         every_line=False)]
    assert misses == []


# -- snippets that need a project ------------------------------------------------------------
PROJECT = {
    "default.project.json": json.dumps({"name": "game", "tree": {
        "$className": "DataModel",
        "ServerScriptService": {"$path": "src/server"},
        "ServerStorage": {"$path": "src/storage"},
        "ReplicatedStorage": {"$path": "src/shared", "Packages": {"$path": "Packages"}},
    }}),
    "src/shared/Config.luau": "return { Speed = 16 }\n",
    "src/shared/Assets/Sword.luau": "return {}\n",
    "Packages/Net/wally.toml": "[package]\nname = \"me/net\"\n\n[dependencies]\nSignal = \"me/signal@1.0.0\"\n",
    # a template that is cloned into characters at run time (does not run under ServerStorage)
    "src/storage/Regen.server.luau": (
        "local character = script.Parent\n"
        "local humanoid = character:WaitForChild(\"Humanoid\")\n"
        "humanoid.Health = humanoid.MaxHealth\n"
    ),
    # a LocalScript kept under ServerScriptService
    "src/server/Spin.client.luau": "local part = script.Parent\npart.AssemblyLinearVelocity = Vector3.zero\n",
    # a name created at run time elsewhere in the project, then looked up
    "src/server/Setup.server.luau": (
        "local folder = Instance.new(\"Folder\")\n"
        "folder.Name = \"RuntimeBin\"\n"
        "folder.Parent = game:GetService(\"ReplicatedStorage\")\n"
    ),
    "src/server/Use.server.luau": (
        "local RS = game:GetService(\"ReplicatedStorage\")\n"
        "local bin = RS:WaitForChild(\"RuntimeBin\")\n"
        "local cfg = require(RS.Config)\n"
        "print(bin, cfg.Speed)\n"
    ),
    # a helper that names and parents what it creates from its parameters
    "src/server/Boot.server.luau": (
        "local function make(className, name, parent)\n"
        "\tlocal obj = Instance.new(className)\n"
        "\tobj.Name = name\n"
        "\tobj.Parent = parent\n"
        "end\n"
        "make(\"Folder\", \"Stats\", game:GetService(\"ReplicatedStorage\").Assets)\n"
    ),
    "src/server/ReadStats.server.luau": "local s = game:GetService(\"ReplicatedStorage\").Assets:WaitForChild(\"Stats\")\n",
    # a child checked for first; a name built at run time (not a name the guard checks)
    "src/shared/Store.luau": (
        "local function key(id)\n"
        "\tif script:FindFirstChild(\"Override\") then\n"
        "\t\treturn script.Override.Value\n"
        "\tend\n"
        "\treturn script:FindFirstChild(`Slot{id}`)\n"
        "end\n"
        "return key\n"
    ),
    # a script disabled in its meta file: a template cloned into what it picks up
    "src/server/Pickup/init.server.luau": "local handle = script.Parent\nhandle.Touched:Connect(print)\n",
    "src/server/Pickup/init.meta.json": json.dumps({"properties": {"Disabled": True}}),
    # a Wally package reaching its dependency beside it
    "Packages/Net/init.luau": "local Signal = require(script.Parent.Signal)\nreturn Signal\n",
    # a build script outside the DataModel: unknown classes are warnings there
    "scripts/build.luau": "local fs = Instance.new(\"FileSystemThing\")\nprint(fs)\n",
    # names that hide instance-bound ones: parameters, loop variables, locals, shadowing
    "src/server/Shadow.server.luau": (
        "local RS = game:GetService(\"ReplicatedStorage\")\n"
        "local part = RS.Config\n"
        "local function onTouched(part)\n"
        "\tprint(part.Anything)\n"
        "end\n"
        "for _, part in workspace:GetChildren() do\n"
        "\tprint(part.Whatever)\n"
        "end\n"
        "do\n"
        "\tlocal part = RS.Assets\n"
        "\tprint(part.Sword)\n"
        "end\n"
        "if part then\n"
        "\tlocal part = Instance.new(\"Part\")\n"
        "\tpart.Size = Vector3.one\n"
        "else\n"
        "\tprint(part.Name)\n"
        "end\n"
        "local game = {GetService = function(_, name) return name end}\n"
        "print(game:GetService(\"NotAService\"), onTouched)\n"
    ),
}


@pytest.fixture(scope="module")
def project_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("real_code_project")
    write_files(root, PROJECT)
    return root


@pytest.mark.parametrize("rel", sorted(k for k in PROJECT if k.endswith(".luau")))
def test_guard_accepts_project_snippets(rel, project_dir, tokenizers):
    engine = Engine(project_dir)
    path = project_dir / rel
    text = path.read_text(encoding="utf-8")
    assert [f for f in engine.lint_text(text, path, mode="patch") if f.severity.label == "error"] == []
    assert _check(engine, text, path, tokenizers) == []


def test_guard_still_refuses_what_the_linter_rejects(project_dir, tokenizers):
    """The same guard keeps its prevention: a path the project lacks, a service that does
    not exist (inside the DataModel) and a placeholder are refused."""
    engine = Engine(project_dir)
    path = project_dir / "src/server/Use.server.luau"
    scripts = engine.project.instances_for_file("src/server/Use.server.luau")
    for name, (tok, table) in tokenizers.items():
        guard = project_guard(table, engine.guard_contract(path))
        for prompt, bad in (('local RS = game:GetService("ReplicatedStorage")\nlocal c = RS.', "Confg.x"),
                            # created at run time, but under ReplicatedStorage, not Assets
                            ('local RS = game:GetService("ReplicatedStorage")\nlocal c = RS.Assets:WaitForChild("',
                             'RuntimeBin")'),
                            ('local s = game:GetService("', 'Playerz")'),
                            ("local x = 1\n", "-- rest of code here\n")):
            m = guard.matcher(prompt, scripts=scripts)
            ids = tok.encode(bad, add_special_tokens=False)
            assert not all(m.consume(i) for i in ids), (name, prompt, bad)
    assert path.exists()


# -- the real production tokenizers ------------------------------------------------------------
def test_real_tokenizers_accept_the_valid_snippets(real):
    """The valid snippets read from their start, masks checked at every token, a third of
    them at each real tokenizer (in turn: together they cover every snippet).  A cold mask
    at these sizes costs 1-20 ms (the walk and the automaton's first steps), so the other
    primings are the small tokenizers' and the whole corpus is bench/real_code.py's."""
    engine = Engine()
    (name,) = real
    mine = [k for i, k in enumerate(sorted(VALID)) if NAMES[i % len(NAMES)] == name]
    misses = []
    for key in mine:
        misses += [f"{key}: {m}" for m in _check(engine, VALID[key], "x.luau", real, every_line="first")]
    assert mine and misses == []


def test_real_tokenizers_accept_project_snippets_and_refuse_what_the_linter_rejects(real, project_dir):
    """The project snippets (run-time names, Wally, templates, outside the DataModel,
    shadowing) are accepted, and a missing path, a missing service and a placeholder are
    still refused, at a real tokenizer."""
    engine = Engine(project_dir)
    misses = []
    for rel in sorted(k for k in PROJECT if k.endswith(".luau")):
        path = project_dir / rel
        misses += [f"{rel}: {m}" for m in _check(engine, path.read_text(encoding="utf-8"), path, real,
                                                    every_line="first")]
    assert misses == []
    test_guard_still_refuses_what_the_linter_rejects(project_dir, real)


#: the sample file replayed at each real tokenizer here (names created at run time such as
#: ``leaderstats`` included; the whole place at every tokenizer is bench/real_code.py's)
REAL_SAMPLE_FILES = {"qwen2.5": "src/server/Services/LeaderstatsService.luau",
                     "qwen3.6": "src/client/Controllers/HudController.luau", "deepseek": "src/shared/Util/Signal.luau"}


def test_real_tokenizers_accept_a_sample_file(real):
    """One of the sample place's files per real tokenizer, read from its start, every fourth
    mask checked."""
    engine = Engine(SAMPLES)
    (name,) = real
    path = SAMPLES / REAL_SAMPLE_FILES[name]
    assert _check(engine, path.read_text(encoding="utf-8"), path, real, every_line="first", mask_every=4) == []
