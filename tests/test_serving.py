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

from luaguard.serving.config import ConfigError, GuardRequest, ProjectRegistry, XArgsError, parse_xargs

ROOT = Path(__file__).resolve().parent.parent
PLACE = ROOT / "samples" / "place"


# -- request keys ----------------------------------------------------------------------------
def test_xargs():
    assert parse_xargs(None) is None and parse_xargs({}) is None and parse_xargs({"other": 1}) is None
    assert parse_xargs({"luaguard": False, "luaguard_project": "p"}) is None
    assert parse_xargs({"luaguard": "true", "luaguard_project": "p", "luaguard_file": "src\\a.luau"}) == \
        GuardRequest("p", "src/a.luau", None)
    assert parse_xargs({"luaguard": 1, "luaguard_project": "p", "luaguard_prompt": "x"}).prompt == "x"
    for bad, msg in (({"luaguard": "maybe", "luaguard_project": "p"}, "true or false"),
                     ({"luaguard": True}, "luaguard_project"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_file": "../x.luau"}, "stay inside"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_file": "/etc/x"}, "stay inside"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_prompt": 3}, "string"),
                     ({"luaguard": True, "luaguard_project": "p", "luaguard_mode": "x"}, "unknown key"),
                     ({"luaguard_project": "p"}, "without 'luaguard'")):
        with pytest.raises(XArgsError, match=msg):
            parse_xargs(bad)


def test_registry_from_environment(tmp_path):
    reg = ProjectRegistry.from_environment({"LUAGUARD_PROJECTS": f"place={PLACE}, "})
    assert reg.require("place").root == PLACE
    with pytest.raises(XArgsError, match="unknown luaguard_project 'nope' .*place"):
        reg.require("nope")
    cfg = tmp_path / "serving.toml"
    cfg.write_text(f'[projects]\nplace = "{PLACE}"\nrel = "."\n')
    reg = ProjectRegistry.from_environment({"LUAGUARD_SERVING_CONFIG": str(cfg)})
    assert reg.require("rel").root == tmp_path / "."
    for env, msg in (({"LUAGUARD_PROJECTS": "place"}, "expected name=/path"),
                     ({"LUAGUARD_PROJECTS": f"x={tmp_path / 'missing'}"}, "not a directory"),
                     ({"LUAGUARD_SERVING_CONFIG": str(tmp_path / "none.toml")}, "cannot read")):
        with pytest.raises(ConfigError, match=msg):
            ProjectRegistry.from_environment(env)
    cfg.write_text("[projects\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        ProjectRegistry.from_environment({"LUAGUARD_SERVING_CONFIG": str(cfg)})


def test_served_project_reloads_after_a_change(tmp_path, monkeypatch):
    import shutil

    import luaguard.serving.config as C

    monkeypatch.setattr(C, "RELOAD_CHECK_SECONDS", 0.0)
    root = tmp_path / "place"
    shutil.copytree(PLACE, root)
    proj = ProjectRegistry({"p": root}).require("p")
    first = proj.engine()
    assert proj.engine() is first  # nothing changed
    new = root / "src" / "shared" / "Extra.luau"
    new.write_text("return {}\n")
    import os

    os.utime(new.parent, ns=(1, 2_000_000_000_000_000_000))
    second = proj.engine()
    assert second is not first
    assert second.project.resolve_partial("ReplicatedStorage.Shared.Extra")[1] == []


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
    V.LuaguardLogitsProcessor.validate_params(SP(None))
    V.LuaguardLogitsProcessor.validate_params(SP({"luaguard": True, "luaguard_project": "place"}))
    with pytest.raises(ValueError, match="unknown luaguard_project"):
        V.LuaguardLogitsProcessor.validate_params(SP({"luaguard": True, "luaguard_project": "other"}))


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

    import luaguard.serving.config as C

    V, proc, SP, BU, MD, vocab = vllm_processor
    monkeypatch.setattr(C, "RELOAD_CHECK_SECONDS", 0.0)
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
    assert reg.require("place").engine() is not None and reg.require("place").error is None


# -- the language server's completion endpoint ------------------------------------------------
@pytest.fixture()
def http_server():
    with completion_endpoint() as endpoint:
        yield endpoint


def test_remote_completion_engine(http_server):
    from luaguard.config import CompletionSettings
    from luaguard.guard.completion_types import CompletionRequest as RemoteRequest
    from luaguard.serving.client import EndpointError, RemoteCompletionEngine

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
    from luaguard.guard.generate import CompletionEngine
    from luaguard.guard.matcher import Guard, guard_for
    from luaguard.guard.model import default_model_path, load_model
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
    import luaguard.guard.token_bytes as TB
    import luaguard.guard.vocab as VO

    V, proc, SP, BU, MD, vocab = vllm_processor
    table = TB.token_table(proc.tokenizer(), vocab)
    assert "vocab_trie" in table._derived

    def refuse(*a, **k):
        raise AssertionError("built inside the engine step")

    monkeypatch.setattr(TB, "_cached_or_built", refuse)
    monkeypatch.setattr(VO.VocabTrie, "__init__", refuse)
    x = {"luaguard": True, "luaguard_project": "place", "luaguard_file": "src/server/Bootstrap.server.luau"}
    ids = proc.tokenizer().encode("local x = game.", add_special_tokens=False)
    proc.update_state(BU(1, [], [(0, SP(x), ids, [])], []))
    logits = torch.zeros(1, vocab)
    proc.apply(logits)
    assert torch.isinf(logits[0]).any() and proc.failed == 0
