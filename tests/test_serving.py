"""luaguard.serving without vLLM: the request keys, the server's project registry, the
logits processor's batch bookkeeping (driven through stand-ins of vLLM's V1 interface types,
shaped as vllm 0.32 defines them - the real engine runs in tests/serving/run.sh), and the
language server's completion endpoint client against a local HTTP server."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch
from endpoint_standin import completion_endpoint

import luaguard.serving.registry as C
from luaguard.serving.registry import ConfigError, GuardRequest, ProjectRegistry, XArgsError, parse_xargs

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"


# -- request keys ----------------------------------------------------------------------------
def test_xargs():
    assert parse_xargs(None) is None and parse_xargs({}) is None and parse_xargs({"other": 1}) is None
    assert parse_xargs({"luaguard": False, "luaguard_project": "p"}) is None
    assert parse_xargs({"luaguard": "true", "luaguard_project": "p", "luaguard_file": "src\\a.luau"}) == \
        GuardRequest("p", "src/a.luau", None)
    assert parse_xargs({"luaguard": True, "luaguard_project": "p", "luaguard_file": "src/x/../a.luau"}).file == "src/a.luau"
    # an absolute file is kept: the project's root decides (ServedProject.relpath)
    assert parse_xargs({"luaguard": True, "luaguard_project": "p", "luaguard_file": "/srv/p/src/a.luau"}).file == \
        "/srv/p/src/a.luau"
    assert parse_xargs({"luaguard": 1, "luaguard_project": "p", "luaguard_prompt": "x"}).prompt == "x"
    # keys of other logits processors are none of luaguard's business
    assert parse_xargs({"top_guard": 1, "language": "luau", "project": "x"}) is None
    for bad, msg in (({"luaguard": "maybe", "luaguard_project": "p"}, "true or false"),
                     ({"luaguard": True}, "'luaguard_project' .* is required"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_file": "../x.luau"}, "stay inside"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_file": "src/../../x.luau"}, "stay inside"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_file": "C:\\game\\a.luau"}, "Windows drive"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_prompt": 3}, "must be a string, got a number"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_mode": "x"}, "unknown key 'luaguard_mode'"),
                     ({"luaguard_project": "p"}, "'luaguard_project' given without 'luaguard'"),
                     # wrong types are named as wrong types, not as missing
                     ({"luaguard": True, "luaguard_project": 3}, "'luaguard_project' must be a string .*got a number"),
                     ({"luaguard": True, "luaguard_project": ["place"]}, "'luaguard_project' must be a string .*got a list"),
                     ({"luaguard": True, "luaguard_project": " "}, "'luaguard_project' must not be empty"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_file": 7}, "'luaguard_file' must be a string"),
                     # near-miss keys: refused with a did-you-mean, never served unguarded
                     ({"Luaguard": True, "luaguard_project": "p"}, "'Luaguard': did you mean 'luaguard'"),
                     ({"LUAGUARD": True}, "'LUAGUARD': did you mean 'luaguard'"),
                     ({"luaguard": True, "luaguard_projcet": "p"}, "'luaguard_projcet': did you mean 'luaguard_project'"),
                     ({"luaguard": True, "Luaguard_Project": "p"}, "did you mean 'luaguard_project'"),
                     ({"luaguard": True, "luaguard-file": "a.luau", "luaguard_project": "p"}, "did you mean 'luaguard_file'"),
                     ({"luagaurd": True, "luaguard_project": "p"}, "did you mean 'luaguard'")):
        with pytest.raises(XArgsError, match=msg):
            parse_xargs(bad)


def test_registry_from_environment(tmp_path, monkeypatch):
    reg = ProjectRegistry.from_environment({"LUAGUARD_PROJECTS": f"place={PLACE}, "})
    assert reg.require("place").root == PLACE and reg.prompt_tokens == C.PROMPT_TOKENS
    with pytest.raises(XArgsError, match="unknown luaguard_project 'nope' .*place"):
        reg.require("nope")
    cfg = tmp_path / "serving.toml"
    cfg.write_text(f'prompt_tokens = 512\n[projects]\nplace = "{PLACE}"\nrel = "."\n')
    reg = ProjectRegistry.from_environment({"LUAGUARD_SERVING_CONFIG": str(cfg)})
    assert reg.require("rel").root == tmp_path and reg.prompt_tokens == 512
    assert ProjectRegistry.from_environment({"LUAGUARD_SERVING_CONFIG": str(cfg),
                                             "LUAGUARD_PROMPT_TOKENS": "2048"}).prompt_tokens == 2048
    # a relative root is taken from the working directory once, when the configuration is read
    monkeypatch.chdir(PLACE.parent)
    reg = ProjectRegistry.from_environment({"LUAGUARD_PROJECTS": "place=place"})
    monkeypatch.chdir(tmp_path)
    assert reg.require("place").root == PLACE
    for env, msg in (({"LUAGUARD_PROJECTS": "place"}, "expected name=/path"),
                     ({"LUAGUARD_PROJECTS": f"x={tmp_path / 'missing'}"}, "not a directory"),
                     ({"LUAGUARD_SERVING_CONFIG": str(tmp_path / "none.toml")}, "cannot read"),
                     ({"LUAGUARD_PROMPT_TOKENS": "lots"}, "LUAGUARD_PROMPT_TOKENS: expected a whole number"),
                     ({"LUAGUARD_PROMPT_TOKENS": "10"}, ">= 64")):
        with pytest.raises(ConfigError, match=msg):
            ProjectRegistry.from_environment(env)
    cfg.write_text("[projects\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        ProjectRegistry.from_environment({"LUAGUARD_SERVING_CONFIG": str(cfg)})


def _copy_place(tmp_path) -> Path:
    import shutil

    root = tmp_path / "place"
    shutil.copytree(PLACE, root)
    return root


def _touch(path: Path, tick: int) -> None:
    """Give ``path`` a modification time of its own (the fingerprint's resolution)."""
    import os

    os.utime(path, ns=(1, (2_000 + tick) * 1_000_000_000_000_000))


def test_served_project_reloads_after_a_change(tmp_path):
    root = _copy_place(tmp_path)
    proj = ProjectRegistry({"p": root}).require("p")
    first = proj.engine()
    assert not proj.refresh() and proj.engine() is first  # nothing changed
    new = root / "src" / "shared" / "Extra.luau"
    new.write_text("return {}\n")
    _touch(new.parent, 1)
    assert proj.engine() is first  # (a request never reloads: the watcher does)
    assert proj.refresh()
    second = proj.engine()
    assert second is not first
    assert second.project.resolve_partial("ReplicatedStorage.Shared.Extra")[1] == []


def test_the_watcher_thread_picks_up_a_change(tmp_path, monkeypatch):
    """``ProjectRegistry.watch``: a change on disk is loaded by the watcher thread, with no
    request asking for it."""
    import time

    root = _copy_place(tmp_path)
    reg = ProjectRegistry({"p": root})
    first = reg.require("p").engine()
    reg.watch(0.05)
    try:
        (root / "src" / "shared" / "Extra.luau").write_text("return {}\n")
        _touch(root / "src" / "shared", 2)
        deadline = time.monotonic() + 30
        while reg.require("p").engine() is first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reg.require("p").engine().project.resolve_partial("ReplicatedStorage.Shared.Extra")[1] == []
    finally:
        reg.close()
    assert not reg._watcher.is_alive()


def test_a_deleted_project_file_keeps_the_last_good_index_with_one_warning(tmp_path, caplog):
    """The project file removed while serving: the last good index stays (a path under a
    closed folder is still unknown), one warning is logged however often the watcher looks;
    restored, the project loads again."""
    root = _copy_place(tmp_path)
    proj = ProjectRegistry({"p": root}).require("p")
    good = proj.engine()
    assert good.project.resolve_partial("ReplicatedStorage.Shared.Zones")[1] == ["Zones"]
    caplog.set_level("WARNING", logger="luaguard.serving")
    (root / "default.project.json").rename(tmp_path / "saved.json")
    _touch(root, 3)
    for _ in range(3):
        assert not proj.refresh()
    assert proj.engine() is good and "no project file" in proj.error
    warnings = [r for r in caplog.records if "keeping its last good index" in r.getMessage()]
    assert len(warnings) == 1 and "no project file" in warnings[0].getMessage()
    (tmp_path / "saved.json").rename(root / "default.project.json")
    _touch(root, 4)
    assert proj.refresh() and proj.error is None and proj.engine() is not good


def test_a_root_without_a_project_file_is_refused(tmp_path, caplog):
    """``open_engine(require_index=True)`` raises for a root with no project file (it would
    be an empty, open DataModel that guards nothing); a served project there answers its
    requests with the reason, and the engine process logs it once at start."""
    from luaguard.engine import ProjectUnreadable, open_engine

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.luau").write_text("return 1\n")
    assert open_engine(tmp_path).project.kind == "none"  # (a front end that lints loose files)
    with pytest.raises(ProjectUnreadable, match="no project file in"):
        open_engine(tmp_path, require_index=True)
    caplog.set_level("ERROR", logger="luaguard.serving")
    proj = ProjectRegistry({"tmp": tmp_path}).require("tmp")
    with pytest.raises(ConfigError, match="project 'tmp' .*no project file"):
        proj.engine()
    with pytest.raises(ConfigError, match="no project file"):
        proj.engine()
    assert sum("does not load" in r.getMessage() for r in caplog.records) == 1


# -- project-relative paths ----------------------------------------------------------------------
def test_project_paths_resolve_against_the_root_not_the_working_directory(tmp_path, monkeypatch):
    """``Engine.relpath`` reads a relative path against the current directory (what a person
    types at the CLI); ``project_relpath``/``guard_contract`` read it against the project's
    root (a request's ``luaguard_file``, the Hugging Face example), accept absolute paths
    inside the root and refuse the rest."""
    import os

    from luaguard.engine import Engine, project_relpath

    rel = "src/server/Services/CombatService.luau"
    engine = Engine(PLACE)
    monkeypatch.chdir(tmp_path)
    assert engine.relpath(rel) is None  # (tmp_path/src/... is not in the project)
    assert engine.project_relpath(rel) == rel == project_relpath(PLACE, rel)
    assert project_relpath(PLACE, PLACE / rel) == rel and project_relpath(PLACE, f"src/server/../server/{'x.luau'}") == \
        "src/server/x.luau"
    for outside in ("../other/x.luau", "src/../../x.luau", "/etc/passwd", str(tmp_path / "x.luau"), ".", "", None):
        assert project_relpath(PLACE, outside) is None, outside
    link = tmp_path / "link"
    os.symlink(PLACE, link)
    assert project_relpath(PLACE, link / rel) == rel and Engine(link).project_relpath(PLACE / rel) == rel
    monkeypatch.chdir(PLACE)
    assert engine.relpath(rel) == rel  # (from the root, the two agree)
    monkeypatch.chdir(tmp_path)
    # the contract of a root-relative path, from elsewhere: the file's instances (script resolves)
    contract = engine.guard_contract(rel)
    assert contract.path == rel and [i.path for i in contract.scripts] == \
        ["game.ServerScriptService.Server.Services.CombatService"]
    assert engine.guard_contract(PLACE / rel).scripts == contract.scripts
    assert engine.guard_contract(tmp_path / "CombatService.luau").scripts == ()


def test_the_hugging_face_example_guards_script_with_a_root_relative_path(tmp_path, monkeypatch):
    """The module docstring of ``luaguard.guard.processor``, run from a directory that is not
    the project's root with a project-relative path: after ``require(script.Parent.`` the
    mask allows the folder's children and refuses a name the folder lacks."""
    from transformers import AutoConfig, AutoTokenizer

    from luaguard.engine import Engine
    from luaguard.guard.matcher import Guard
    from luaguard.guard.processor import GuardLogitsProcessor

    model = ROOT / "server" / "luaguard" / "data" / "model"
    tok = AutoTokenizer.from_pretrained(model)
    vocab = AutoConfig.from_pretrained(model).vocab_size
    monkeypatch.chdir(tmp_path)
    prompt = "local DataService = require(script.Parent."
    contract = Engine(PLACE).guard_contract("src/server/Services/CombatService.luau", prompt)
    guard = Guard.for_model(tok, vocab, contract)
    scores = torch.zeros(1, vocab)
    GuardLogitsProcessor(guard, [prompt], scripts=contract.scripts)(torch.tensor([tok.encode(prompt)]), scores)
    banned = torch.isinf(scores[0])
    data = tok.encode("DataService", add_special_tokens=False)[0]
    net = tok.encode("Net", add_special_tokens=False)[0]  # (ReplicatedStorage.Shared.Net: not a sibling)
    assert not banned[data] and banned[net]


def test_luaguard_complete_reads_its_file_argument_against_the_current_directory(tmp_path, monkeypatch, capsys):
    """``luaguard complete FILE:LINE:COL`` with FILE typed relative to the current directory
    (not the project's root): the guard's contract is the file's (its scripts), and a
    completion server is sent the file relative to the project's root."""
    from endpoint_standin import completion_reply

    from luaguard.cli import main
    from luaguard.engine import Engine

    _copy_place(tmp_path)
    made = []
    real = Engine.guard_contract

    def spy(self, path=None, text=None):
        made.append(real(self, path, text))
        return made[-1]

    monkeypatch.setattr(Engine, "guard_contract", spy)
    monkeypatch.chdir(tmp_path)
    with completion_endpoint(completion_reply("DataService)", [-0.1])) as endpoint:
        # the endpoint in the user's own config (a repository's luaguard.toml cannot set it)
        user = tmp_path / "user-config.toml"
        user.write_text(f'[completion]\nendpoint = "{endpoint.url}"\nendpoint_project = "place"\n')
        monkeypatch.setenv("LUAGUARD_USER_CONFIG", str(user))
        assert main(["complete", "place/src/server/Services/CombatService.luau:19:43", "--project", "place"]) == 0
    capsys.readouterr()
    assert endpoint.bodies[-1]["vllm_xargs"]["luaguard_file"] == "src/server/Services/CombatService.luau"
    assert [i.path for i in made[-1].scripts] == ["game.ServerScriptService.Server.Services.CombatService"]


# -- the processor, through stand-ins of vLLM's interface types -------------------------------
@pytest.fixture()
def vllm_processor(monkeypatch):
    """``luaguard.serving.vllm`` imported against stand-in ``vllm`` modules
    (tests/serving/vllm_standins.py)."""

    sys.path.insert(0, str(ROOT / "tests" / "serving"))
    import vllm_standins

    for name, mod in vllm_standins.modules().items():
        monkeypatch.setitem(sys.modules, name, mod)
    SamplingParams, BatchUpdate = vllm_standins.SamplingParams, vllm_standins.BatchUpdate
    MoveDirectionality = vllm_standins.MoveDirectionality
    monkeypatch.delitem(sys.modules, "luaguard.serving.vllm", raising=False)
    monkeypatch.delenv("VLLM_USE_V2_MODEL_RUNNER", raising=False)
    import luaguard.serving.vllm as V

    monkeypatch.setattr(V.LuaguardLogitsProcessor, "_registry", ProjectRegistry({"place": PLACE}))
    model = ROOT / "server" / "luaguard" / "data" / "model"
    from transformers import AutoConfig

    vocab = AutoConfig.from_pretrained(model).vocab_size
    mc = types.SimpleNamespace(tokenizer=str(model), tokenizer_revision=None, get_vocab_size=lambda: vocab)
    proc = V.LuaguardLogitsProcessor(types.SimpleNamespace(model_config=mc), torch.device("cpu"), False)
    yield V, proc, SamplingParams, BatchUpdate, MoveDirectionality, vocab
    sys.modules.pop("luaguard.serving.vllm", None)


def test_processor_masks_guarded_rows_only_and_follows_moves(vllm_processor):
    V, proc, SP, BU, MD, vocab = vllm_processor
    tok = proc.tokenizer()
    prompt = 'local ReplicatedStorage = game:GetService("ReplicatedStorage")\nlocal m = ReplicatedStorage.'
    ids = tok(prompt, add_special_tokens=False)["input_ids"]
    xargs = {"luaguard": True, "luaguard_project": "place", "luaguard_file": "src/server/Bootstrap.server.luau"}
    out0, out1, out2 = [], [], []
    proc.update_state(BU(3, [], [(0, SP(xargs), ids, out0), (1, SP(None), ids, out1), (2, SP(xargs), ids, out2)], []))
    logits = torch.zeros(3, vocab)
    proc.apply(logits)
    guard = proc.rows[0].guard
    want = torch.from_numpy(guard.mask(guard.start(prompt, scripts=proc.registry().require("place").scripts(
        xargs["luaguard_file"]))).banned_row(vocab))
    assert torch.equal(torch.isinf(logits[0]), want) and torch.equal(torch.isinf(logits[2]), want)
    assert not torch.isinf(logits[1]).any()  # opted out
    shared = tok.encode("Shared", add_special_tokens=False)
    out0.extend(shared)  # vLLM appends to the live lists
    proc.update_state(BU(2, [2], [], [(0, 2, MD.UNIDIRECTIONAL)]))  # row 2 done; row 0 moves to 2
    assert set(proc.rows) == {2}
    logits = torch.zeros(3, vocab)
    proc.apply(logits)
    assert not torch.isinf(logits[0]).any() and torch.isinf(logits[2]).any()
    assert proc.rejected == 0
    proc.update_state(BU(3, [], [], [(2, 1, MD.SWAP)]))
    assert set(proc.rows) == {1}
    out0.append(tok.encode(")", add_special_tokens=False)[0])  # ")" closes nothing: refused
    logits = torch.zeros(3, vocab)
    proc.apply(logits)
    assert proc.rejected == 1
    allowed = (~torch.isinf(logits[1])).nonzero().flatten().tolist()
    assert allowed and set(allowed) <= set(guard.table.eos_ids)  # EOS only from then on


def test_a_second_instance_for_the_same_engine_does_nothing(vllm_processor):
    V, proc, SP, BU, MD, vocab = vllm_processor
    config = types.SimpleNamespace(model_config=proc.model_config)
    first = V.LuaguardLogitsProcessor(config, torch.device("cpu"), False)
    second = V.LuaguardLogitsProcessor(config, torch.device("cpu"), False)  # entry point + --logits-processors
    assert not first.duplicate and second.duplicate
    xargs = {"luaguard": True, "luaguard_project": "place"}
    for p in (first, second):
        p.update_state(BU(1, [], [(0, SP(xargs), [1, 2], [])], []))
    assert first.rows and not second.rows
    logits = torch.zeros(1, vocab)
    assert second.apply(logits) is logits and not torch.isinf(logits).any()


def test_processor_validate_params(vllm_processor):
    V, proc, SP, *_ = vllm_processor
    validate = V.LuaguardLogitsProcessor.validate_params
    validate(SP(None))
    validate(SP({"luaguard": True, "luaguard_project": "place"}))
    validate(SP({"luaguard": True, "luaguard_project": "place",
                 "luaguard_file": str(PLACE / "src/server/Bootstrap.server.luau")}))  # absolute, inside
    for bad, msg in (({"luaguard": True, "luaguard_project": "other"}, "unknown luaguard_project"),
                     ({"luaguard": True, "luaguard_project": "place", "luaguard_file": "/etc/passwd"},
                      "'luaguard_file' '/etc/passwd' is outside project 'place'"),
                     ({"luaguard": True, "luaguard_project": "place", "luaguard_file": "../x.luau"}, "stay inside"),
                     ({"LUAGUARD": True, "luaguard_project": "place"}, "did you mean 'luaguard'"),
                     ({"luaguard": True, "luaguard_project": 3}, "must be a string")):
        with pytest.raises(ValueError, match=msg):
            validate(SP(bad))


def test_the_registry_watches_and_only_the_engine_process_logs(vllm_processor, monkeypatch):
    """The registry a process makes on first use starts its watcher thread; made by
    ``validate_params`` (vLLM's API-server process, which runs no engine) its projects log
    their load failures at DEBUG, and a processor built in the process (the engine's) makes
    them log as usual - one warning per break in the server's log, not one per process."""
    V, proc, SP, *_ = vllm_processor
    monkeypatch.setattr(V.LuaguardLogitsProcessor, "_registry", None)
    monkeypatch.setenv("LUAGUARD_PROJECTS", f"place={PLACE}")
    V.LuaguardLogitsProcessor.validate_params(SP({"luaguard": True, "luaguard_project": "place"}))
    reg = V.LuaguardLogitsProcessor._registry
    try:
        assert reg.projects["place"].quiet and reg._watcher.is_alive()
        V.LuaguardLogitsProcessor(types.SimpleNamespace(model_config=proc.model_config), torch.device("cpu"), False)
        assert not reg.projects["place"].quiet
    finally:
        reg.close()


def test_served_luaguard_file_resolves_against_the_projects_root(vllm_processor, tmp_path, monkeypatch):
    """The server runs from a directory that is not the project's root: a project-relative
    ``luaguard_file`` (and an absolute one inside the root) still gives the file's contract,
    so after ``require(script.Parent.`` the mask is the one with the file's scripts - not the
    mask of a file the guard cannot place."""
    from luaguard.engine import Engine

    V, proc, SP, BU, MD, vocab = vllm_processor
    monkeypatch.chdir(tmp_path)
    tok = proc.tokenizer()
    rel = "src/server/Services/CombatService.luau"
    prompt = "local DataService = require(script.Parent."
    ids = tok.encode(prompt, add_special_tokens=False)
    served = proc.registry().require("place")
    guard = served.guard(tok, vocab, rel)
    scripts = served.scripts(rel)
    assert [i.path for i in scripts] == [i.path for i in Engine(PLACE).guard_contract(PLACE / rel).scripts] != []
    want = guard.mask(guard.start(prompt, scripts=scripts)).banned_row(vocab)
    unplaced = guard.mask(guard.start(prompt)).banned_row(vocab)
    assert not np.array_equal(want, unplaced)
    files = (rel, str(PLACE / rel), f"./{rel}", "src\\server\\Services\\CombatService.luau")
    added = []
    for i, file in enumerate(files):
        x = {"luaguard": True, "luaguard_project": "place", "luaguard_file": file, "luaguard_prompt": prompt}
        V.LuaguardLogitsProcessor.validate_params(SP(x))
        added.append((i, SP(x), ids, []))
    proc.update_state(BU(len(files), [], added, []))
    logits = torch.zeros(len(files), vocab)
    proc.apply(logits)
    for i, file in enumerate(files):
        assert np.array_equal(torch.isinf(logits[i]).numpy(), want), file
    assert proc.failed == 0


def test_a_long_luaguard_prompt_is_cut_before_the_engine_and_primed_off_the_step(vllm_processor, monkeypatch):
    """A 4 MB ``luaguard_prompt``: ``validate_params`` (vLLM's admission, before the engine
    process) replaces it by its end - at most ``prompt_tokens`` x CHARS_PER_TOKEN characters
    from a line start, the caller's dict untouched - and the engine primes the guard with at
    most ``prompt_tokens`` tokens of it on the processor's worker thread: ``update_state``
    returns before the priming is done, and ``apply`` takes the primed cursor."""
    import threading

    V, proc, SP, BU, MD, vocab = vllm_processor
    monkeypatch.setattr(proc.registry(), "prompt_tokens", 256)
    tok = proc.tokenizer()
    body = (PLACE / "src/server/Services/CombatService.luau").read_text()
    tail = 'local ReplicatedStorage = game:GetService("ReplicatedStorage")\nlocal m = ReplicatedStorage.'
    big = body * (4_000_000 // len(body)) + tail
    assert len(big) > 3_900_000
    x = {"luaguard": True, "luaguard_project": "place", "luaguard_file": "src/server/Bootstrap.server.luau",
         "luaguard_prompt": big}
    sp = SP(x)
    V.LuaguardLogitsProcessor.validate_params(sp)
    cut = sp.extra_args["luaguard_prompt"]
    assert x["luaguard_prompt"] is big and sp.extra_args is not x
    assert cut == C.bound_prompt(big, 256) and big.endswith(cut) and len(cut) <= 256 * C.CHARS_PER_TOKEN
    assert big[len(big) - len(cut) - 1] == "\n"  # (from a line start)
    primed = C.trim_prompt(cut, tok, 256)
    assert big.endswith(primed) and 200 <= len(tok.encode(primed, add_special_tokens=False)) <= 256
    gate = threading.Event()
    real = proc._prime
    seen = []

    def slow(project, rel, prompt, prompt_ids):
        gate.wait(60)
        seen.append(prompt)
        return real(project, rel, prompt, prompt_ids)

    monkeypatch.setattr(proc, "_prime", slow)
    ids = tok.encode(tail, add_special_tokens=False)
    proc.update_state(BU(1, [], [(0, sp, ids, [])], []))
    assert not proc.rows[0].pending.done()  # (update_state did not wait for the priming)
    gate.set()
    logits = torch.zeros(1, vocab)
    proc.apply(logits)
    guard = proc.rows[0].guard
    scripts = proc.registry().require("place").scripts(x["luaguard_file"])
    want = guard.mask(guard.start(primed, scripts=scripts)).banned_row(vocab)
    assert seen == [cut] and np.array_equal(torch.isinf(logits[0]).numpy(), want) and want.any()
    # no luaguard_prompt: the prompt's last prompt_tokens ids, decoded
    proc.update_state(BU(2, [], [(1, SP({k: v for k, v in x.items() if k != "luaguard_prompt"}),
                                  tok.encode(body * 3 + tail, add_special_tokens=False), [])], []))
    logits = torch.zeros(2, vocab)
    proc.apply(logits)
    assert np.array_equal(torch.isinf(logits[1]).numpy(), want) and proc.failed == 0
    assert len(seen[1] or "") == 0  # (the ids were decoded on the worker thread)


def test_model_runner_v2_is_never_a_start_up_failure_unless_luaguard_was_asked_for(vllm_processor, monkeypatch):
    """Under Model Runner V2 (as vLLM decides it: ``vllm_config.use_v2_model_runner``, or V2's
    constructor signature) the processor - loaded by the entry point in every engine - logs a
    warning and does nothing; a server that asked for luaguard (named in
    ``--logits-processors`` or with projects configured) fails at start with the fix.  The
    class is a subclass of V2's interface, so V2's loader accepts the entry point."""
    V, proc, SP, *_ = vllm_processor
    v2_interface = sys.modules["vllm.v1.worker.gpu.sample.logits_processor.interface"]
    assert issubclass(V.LuaguardLogitsProcessor, v2_interface.LogitsProcessor)
    monkeypatch.delenv("LUAGUARD_PROJECTS", raising=False)
    monkeypatch.delenv("LUAGUARD_SERVING_CONFIG", raising=False)
    mc = types.SimpleNamespace(**vars(proc.model_config), logits_processors=None)
    v2_config = types.SimpleNamespace(model_config=mc, use_v2_model_runner=True)
    for args in ((torch.device("cpu"), False), (types.SimpleNamespace(),)):  # V1's and V2's constructors
        p = V.LuaguardLogitsProcessor(v2_config, *args)
        assert p.v2 and not p.add_request(0, SP({"luaguard": True, "luaguard_project": "place"}))
        logits = torch.zeros(2, 8)
        assert p.apply(logits, None) is logits and not torch.isinf(logits).any()
    asked = types.SimpleNamespace(model_config=types.SimpleNamespace(
        **vars(mc) | {"logits_processors": ["luaguard.serving.vllm:LuaguardLogitsProcessor"]}), use_v2_model_runner=True)
    with pytest.raises(RuntimeError, match="VLLM_USE_V2_MODEL_RUNNER=0"):
        V.LuaguardLogitsProcessor(asked, types.SimpleNamespace())
    monkeypatch.setenv("LUAGUARD_PROJECTS", f"place={PLACE}")
    with pytest.raises(RuntimeError, match="VLLM_USE_V2_MODEL_RUNNER=0"):
        V.LuaguardLogitsProcessor(v2_config, types.SimpleNamespace())


def test_a_project_that_breaks_keeps_its_last_good_index(vllm_processor, tmp_path, monkeypatch, caplog):
    """A project file saved broken while the server runs: the processor keeps guarding with
    the last good index (a warning in the log), nothing raises in update_state/apply, other
    projects are untouched; a project that never loaded answers 400 to its own requests only
    (validate_params) and, should one reach the engine anyway, that row may only end."""
    import shutil

    V, proc, SP, BU, MD, vocab = vllm_processor
    root = tmp_path / "place"
    shutil.copytree(PLACE, root)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "default.project.json").write_text("{ not json")
    reg = ProjectRegistry({"place": root, "broken": broken, "ok": PLACE})
    monkeypatch.setattr(V.LuaguardLogitsProcessor, "_registry", reg)
    tok = proc.tokenizer()
    prompt = 'local ReplicatedStorage = game:GetService("ReplicatedStorage")\nlocal m = ReplicatedStorage.'
    ids = tok(prompt, add_special_tokens=False)["input_ids"]
    x = {"luaguard": True, "luaguard_project": "place", "luaguard_prompt": prompt}
    proc.update_state(BU(1, [], [(0, SP(x), ids, [])], []))
    logits = torch.zeros(1, vocab)
    proc.apply(logits)
    want = torch.isinf(logits[0]).clone()
    assert want.any() and not want.all()
    # the project file breaks while the server runs
    (root / "default.project.json").write_text('{"name": "place", "tree": ')
    import os

    os.utime(root / "default.project.json", ns=(1, 3_000_000_000_000_000_000))
    caplog.set_level("WARNING", logger="luaguard.serving")
    assert not reg.require("place").refresh()  # (what the watcher thread does)
    V.LuaguardLogitsProcessor.validate_params(SP(x))  # still guarded: the last good index
    proc.update_state(BU(2, [], [(1, SP(x), ids, [])], []))
    logits = torch.zeros(2, vocab)
    proc.apply(logits)
    assert torch.equal(torch.isinf(logits[1]), want) and torch.equal(torch.isinf(logits[0]), want)
    assert "keeping its last good index" in caplog.text
    assert reg.require("place").error is not None
    # a project that never loaded: 400 for its requests, others unaffected
    with pytest.raises(ValueError, match="broken"):
        V.LuaguardLogitsProcessor.validate_params(SP({"luaguard": True, "luaguard_project": "broken"}))
    V.LuaguardLogitsProcessor.validate_params(SP({"luaguard": True, "luaguard_project": "ok"}))
    proc.update_state(BU(3, [], [(2, SP({"luaguard": True, "luaguard_project": "broken"}), ids, [])], []))
    logits = torch.zeros(3, vocab)
    proc.apply(logits)  # (no exception in the engine step)
    assert proc.failed == 1
    allowed = (~torch.isinf(logits[2])).nonzero().flatten().tolist()
    assert allowed == [tok.eos_token_id]
    assert torch.equal(torch.isinf(logits[0]), want)
    # fixed on disk: the project reloads
    shutil.copy(PLACE / "default.project.json", root / "default.project.json")
    os.utime(root / "default.project.json", ns=(1, 4_000_000_000_000_000_000))
    assert reg.require("place").refresh() and reg.require("place").error is None


# -- the language server's completion endpoint ------------------------------------------------
@pytest.fixture()
def http_server():
    with completion_endpoint() as endpoint:
        yield endpoint


def test_remote_completion_engine(http_server):
    from luaguard.config import CompletionSettings
    from luaguard.completion.requests import CompletionRequest as RemoteRequest
    from luaguard.completion.client import EndpointError, RemoteCompletionEngine

    s = CompletionSettings(endpoint=http_server.url, endpoint_model="m", endpoint_project="place")
    eng = RemoteCompletionEngine(s, PLACE)
    http_server.answers[:] = [(200, {"choices": [{"text": "Shared", "finish_reason": "stop",
                                            "logprobs": {"token_logprobs": [-0.1, -0.2]}}]})]
    text = "local x = game.ReplicatedStorage."
    got = eng.complete(RemoteRequest(text=text, offset=len(text), path=str(PLACE / "src/server/Bootstrap.server.luau")))
    assert http_server.seen[0] == ("/v1/models", None)  # (no context length: a 404)
    path, body = http_server.seen[1]
    assert path == "/v1/completions" and body["prompt"] == text and body["model"] == "m"
    assert "truncate_prompt_tokens" not in body
    assert got.guarded
    assert body["vllm_xargs"] == {"luaguard": True, "luaguard_project": "place",
                                  "luaguard_file": "src/server/Bootstrap.server.luau"}
    assert got.text == "Shared" and not got.withheld and 0.8 < got.mean_prob < 0.9
    http_server.answers[:] = [(200, {"choices": [{"text": "zz", "logprobs": {"token_logprobs": [-3.0]}}]})]
    assert eng.complete(RemoteRequest(text=text, offset=len(text))).withheld
    # the prompt is cut by the model's tokens, by the server: its context less max_tokens
    http_server.models = {"data": [{"id": "other", "max_model_len": 64}, {"id": "m", "max_model_len": 2048}]}
    http_server.seen.clear()
    long = "-- filler line\n" * 4000 + text
    http_server.answers[:] = [(200, {"choices": [{"text": "Shared", "logprobs": {"token_logprobs": [-0.1]}}],
                               "usage": {"prompt_tokens": 2048 - 48}})]
    got = eng.complete(RemoteRequest(text=long, offset=len(long), max_tokens=48))
    body = http_server.seen[-1][1]
    assert body["truncate_prompt_tokens"] == 2048 - 48 and body["truncation_side"] == "left"
    assert body["prompt"].endswith(text) and len(body["prompt"]) == (2048 - 48) * 16 and got.truncated_prompt
    http_server.seen.clear()
    http_server.answers[:] = [(200, {"choices": [{"text": "x"}], "usage": {"prompt_tokens": 9}})]
    assert not eng.complete(RemoteRequest(text=text, offset=len(text), max_tokens=48)).truncated_prompt
    assert [p for p, _b in http_server.seen] == ["/v1/completions"]  # (the context length is asked once)
    # no project named: nothing is guarded, and the answer says so
    plain = RemoteCompletionEngine(CompletionSettings(endpoint=http_server.url, endpoint_model="m"), PLACE)
    http_server.answers[:] = [(200, {"choices": [{"text": "x"}]})]
    assert not plain.complete(RemoteRequest(text=text, offset=len(text))).guarded
    assert "vllm_xargs" not in http_server.seen[-1][1]
    http_server.answers[:] = [(400, {"error": {"message": "unknown luaguard_project 'place'"}})]
    with pytest.raises(EndpointError, match="HTTP 400: unknown luaguard_project"):
        eng.complete(RemoteRequest(text=text, offset=len(text)))
    http_server.answers[:] = [(200, {"nope": 1})]
    with pytest.raises(EndpointError, match="no choices"):
        eng.complete(RemoteRequest(text=text, offset=len(text)))
    dead = RemoteCompletionEngine(CompletionSettings(endpoint="http://127.0.0.1:9/v1"), PLACE)
    with pytest.raises(EndpointError, match="127.0.0.1:9"):
        dead.complete(RemoteRequest(text=text, offset=len(text)))


def test_endpoint_setting_must_be_an_http_url():
    from luaguard.config import CompletionSettings, Settings, _section

    problems: list = []
    got = _section(CompletionSettings, Settings().completion, {"endpoint": "gpu-box:8000"}, "luaguard.toml",
                   "completion", problems)
    assert got.endpoint is None and "invalid value" in problems[0].message
    got = _section(CompletionSettings, Settings().completion, {"endpoint": "http://gpu:8000/v1",
                                                               "endpointProject": "place"}, "lsp", "completion", [])
    assert got.endpoint == "http://gpu:8000/v1" and got.endpoint_project == "place"


# -- one guard constructor ---------------------------------------------------------------------
def test_every_front_end_builds_the_same_guard(vllm_processor):
    """``Guard.for_model`` (the Hugging Face example), the vLLM registry and processor, and the
    language server's completion engine all build their guard with ``project_guard`` from the
    engine's ``guard_contract``: on the same prompt they give the same mask (each from its own
    index and tokenizer object), which accepts a name the project's scripts create at run
    time (``leaderstats``), where a guard of the bare project index would not."""
    from luaguard.engine import Engine
    from luaguard.completion.generate import CompletionEngine
    from luaguard.guard.matcher import Guard, guard_for
    from luaguard.completion.loading import default_model_path, load_model
    from luaguard.guard.processor import GuardLogitsProcessor

    V, proc, SP, BU, MD, vocab = vllm_processor
    tok = proc.tokenizer()
    rel = "src/server/Services/LeaderstatsService.luau"
    prompt = 'local Players = game:GetService("Players")\nlocal stats = Players.LocalPlayer:WaitForChild("'
    contract = Engine(PLACE).guard_contract(PLACE / rel)
    hf = Guard.for_model(tok, vocab, contract)
    served = proc.registry().require("place").guard(tok, vocab, rel)
    lsp = CompletionEngine(loaded=load_model(default_model_path())).guard(contract)
    assert hf is Guard.for_model(tok, vocab, contract)  # (cached)
    want = hf.mask(hf.start(prompt, scripts=contract.scripts)).banned_row(vocab)
    for g, scripts in ((served, proc.registry().require("place").scripts(rel)), (lsp, contract.scripts)):
        assert g is not hf and np.array_equal(g.mask(g.start(prompt, scripts=scripts)).banned_row(vocab), want)
    bare = guard_for(hf.table, contract.project)
    assert not np.array_equal(want, bare.mask(bare.start(prompt, scripts=contract.scripts)).banned_row(vocab))
    leader = tok.encode("leaderstats", add_special_tokens=False)[0]
    assert not want[leader]
    # the processors apply exactly that mask
    scores = torch.zeros(2, vocab)
    ids = torch.tensor([tok.encode(prompt, add_special_tokens=False)] * 2)
    GuardLogitsProcessor(hf, [prompt], scripts=contract.scripts)(ids, scores)
    assert all(np.array_equal(torch.isinf(scores[r]).numpy(), want) for r in range(2))
    x = {"luaguard": True, "luaguard_project": "place", "luaguard_file": rel, "luaguard_prompt": prompt}
    proc.update_state(BU(1, [], [(0, SP(x), ids[0].tolist(), [])], []))
    logits = torch.zeros(1, vocab)
    proc.apply(logits)
    assert np.array_equal(torch.isinf(logits[0]).numpy(), want)


def test_tables_and_guards_are_built_when_the_processor_starts(vllm_processor, monkeypatch):
    """The processor loads the tokenizer, builds its token table and trie and each project's
    guard in ``__init__``; a request's ``update_state``/``apply`` builds none of them."""
    import luaguard.guard.table_cache as TC
    import luaguard.guard.vocab as VO

    V, proc, SP, BU, MD, vocab = vllm_processor
    table = TC.token_table(proc.tokenizer(), vocab)
    assert "vocab_trie" in table._derived

    def refuse(*a, **k):
        raise AssertionError("built inside the engine step")

    monkeypatch.setattr(TC, "_cached_or_built", refuse)
    monkeypatch.setattr(VO.VocabTrie, "__init__", refuse)
    x = {"luaguard": True, "luaguard_project": "place", "luaguard_file": "src/server/Bootstrap.server.luau"}
    ids = proc.tokenizer().encode("local x = game.", add_special_tokens=False)
    proc.update_state(BU(1, [], [(0, SP(x), ids, [])], []))
    logits = torch.zeros(1, vocab)
    proc.apply(logits)
    assert torch.isinf(logits[0]).any() and proc.failed == 0
