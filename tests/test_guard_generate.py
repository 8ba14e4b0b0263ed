"""Guarded completion (luaguard.completion.generate), prompt context (luaguard.completion.context) and
the ``luaguard complete`` command, with a random-weights model saved as a local folder."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from guard_support import (
    SAMPLES,
    byte_level_tokenizer,
    cpu_threads,
    new_violations,
    random_gpt2,
)
from luaguard.cli import main
from luaguard.config import CompletionSettings
from luaguard.engine import Engine
from luaguard.completion.context import build_prompt, module_exports
from luaguard.completion.generate import CompletionEngine, CompletionRequest, parse_location
from luaguard.completion.loading import ModelLoadError, load_model
from luaguard.project.index import load_project

COMBAT = "src/server/Services/CombatService.luau"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    cpu_threads(1)
    tok = byte_level_tokenizer()
    folder = tmp_path_factory.mktemp("model")
    model = random_gpt2(tok, seed=5, n_positions=96)
    model.save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def engine(model_dir) -> CompletionEngine:
    return CompletionEngine(CompletionSettings(model=str(model_dir), min_confidence=0.0, timeout_ms=0))


@pytest.fixture(scope="module")
def project():
    return load_project(SAMPLES)


@pytest.fixture(scope="module")
def contract():
    """The linter's contract for COMBAT, as the language server and the CLI take it."""
    return Engine(SAMPLES).guard_contract(COMBAT)


def _source() -> str:
    return (SAMPLES / COMBAT).read_text(encoding="utf-8")


def _at(text: str, needle: str) -> int:
    return text.index(needle) + len(needle)


def test_completion_is_guarded_and_lint_clean(engine, project, contract) -> None:
    src = _source()
    lint = Engine(SAMPLES)
    for needle in ('game:GetService("', "local ReplicatedStorage = game:GetService(\"ReplicatedStorage\")\n", "local "):
        off = _at(src, needle)
        for seed in range(3):
            r = engine.complete(CompletionRequest(text=src, offset=off, path=COMBAT, max_tokens=20, temperature=1.0,
                                                  seed=seed), contract)
            assert r.guarded and 0 < r.tokens <= 20
            assert r.text == r.raw_text  # min_confidence 0: nothing is withheld
            v = new_violations(lint, src[:off], r.text, COMBAT)
            assert not any(v.values()), (needle, r.text, v)
            assert 0.0 < r.min_prob <= r.mean_prob <= 1.0
            assert len(r.mask_us) >= r.tokens


def test_get_service_completion_names_a_service(engine, project, contract) -> None:
    src = 'local x = game:GetService("'
    for seed in range(5):
        r = engine.complete(CompletionRequest(text=src, offset=len(src), max_tokens=12, temperature=1.0, seed=seed),
                            contract)
        name = r.text.split('"')[0]
        assert name == "" or project.api.is_service(name) or any(s.startswith(name) for s in project.api.services), r.text


def test_same_seed_same_completion_and_no_guard_switch(engine, project, contract) -> None:
    src = _source()
    off = _at(src, "local ")
    a = engine.complete(CompletionRequest(text=src, offset=off, path=COMBAT, max_tokens=10, temperature=0.8, seed=4), contract)
    b = engine.complete(CompletionRequest(text=src, offset=off, path=COMBAT, max_tokens=10, temperature=0.8, seed=4), contract)
    assert a.raw_text == b.raw_text
    plain = engine.complete(CompletionRequest(text=src, offset=off, path=COMBAT, max_tokens=10, guard=False), contract)
    assert not plain.guarded and plain.mask_us == []


def test_max_tokens_and_time_budget(engine, project, contract) -> None:
    src = _source()
    off = _at(src, "local ")
    r = engine.complete(CompletionRequest(text=src, offset=off, path=COMBAT, max_tokens=3), contract)
    assert r.tokens <= 3
    t0 = time.monotonic()
    r = engine.complete(CompletionRequest(text=src, offset=off, path=COMBAT, max_tokens=5000, timeout_ms=1), contract)
    assert r.stop_reason == "time_budget"
    assert time.monotonic() - t0 < 5


def test_cancellation_is_honoured(engine, project, contract) -> None:
    src = _source()
    off = _at(src, "local ")
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 3

    # (fim=False: in fill-in-the-middle order this random model's first choice is a FIM
    # sentinel, which is a stop token of its family - see test_guard_fim.py)
    r = engine.complete(CompletionRequest(text=src, offset=off, path=COMBAT, max_tokens=50, fim=False), contract,
                        cancelled=cancelled)
    assert r.stop_reason == "cancelled" and r.withheld and r.text == ""
    assert r.tokens <= 3


def test_confidence_threshold_withholds(model_dir, project, contract) -> None:
    strict = CompletionEngine(CompletionSettings(model=str(model_dir), min_confidence=1.0, timeout_ms=0))
    src = "local x = "
    r = strict.complete(CompletionRequest(text=src, offset=len(src), max_tokens=8, temperature=1.0), contract)
    assert r.withheld and r.text == "" and r.raw_text != "" and r.mean_prob < 1.0


def test_prompt_longer_than_the_context_is_cut_from_the_left(engine, project, contract) -> None:
    src = _source() * 4  # far more than the model's 96 positions
    r = engine.complete(CompletionRequest(text=src, offset=len(src), path=COMBAT, max_tokens=8), contract)
    assert r.truncated_prompt and r.prompt_tokens <= 96 - 8
    assert r.tokens <= 8


def test_empty_project_gives_a_degraded_answer(engine) -> None:
    src = 'local x = game:GetService("'
    r = engine.complete(CompletionRequest(text=src, offset=len(src), max_tokens=10, temperature=1.0, seed=1), None)
    assert r.degraded and r.guarded
    name = r.text.split('"')[0]
    from luaguard.project.api import load_api

    assert name == "" or any(s.startswith(name) for s in load_api().services)


def test_bad_input(engine, project, model_dir, tmp_path, contract) -> None:
    with pytest.raises(ValueError):
        engine.complete(CompletionRequest(text="abc", offset=10), contract)
    missing = CompletionEngine(CompletionSettings(model=str(tmp_path / "nope")))
    with pytest.raises(ModelLoadError, match="no such model folder"):
        missing.complete(CompletionRequest(text="x", offset=1))
    corrupt = tmp_path / "corrupt"
    shutil.copytree(model_dir, corrupt)
    (corrupt / "model.safetensors").write_bytes(b"\x00" * 100)
    with pytest.raises(ModelLoadError):
        CompletionEngine(CompletionSettings(model=str(corrupt))).complete(CompletionRequest(text="x", offset=1))
    pickled = tmp_path / "pickled"
    shutil.copytree(model_dir, pickled)
    (pickled / "model.safetensors").rename(pickled / "pytorch_model.bin")
    with pytest.raises(ModelLoadError, match="safetensors"):
        CompletionEngine(CompletionSettings(model=str(pickled))).complete(CompletionRequest(text="x", offset=1))


def test_empty_document_and_weird_text(engine, project, contract) -> None:
    for text in ("", "\x00\x01 <|endoftext|> `", "--[[ unterminated", '"unterminated', "local t = {(", "end end )"):
        r = engine.complete(CompletionRequest(text=text, offset=len(text), max_tokens=6, temperature=1.0), contract)
        assert r.tokens <= 6


def test_threads_share_one_engine(engine, project, contract) -> None:
    import threading

    src = _source()
    off = _at(src, "local ")
    out = []

    def run(seed: int) -> None:
        out.append(engine.complete(CompletionRequest(text=src, offset=off, path=COMBAT, max_tokens=6, temperature=1.0,
                                                     seed=seed), contract).raw_text)

    threads = [threading.Thread(target=run, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(out) == 3


# ------------------------------------------------------------------------------------ context

def test_prompt_has_facts_and_fits_the_budget(project, model_dir) -> None:
    lm = load_model(model_dir)
    src = _source()
    off = _at(src, 'local ReplicatedStorage = game:GetService("ReplicatedStorage")\n')
    scripts = project.instances_for_file(COMBAT)
    p = build_prompt(src, off, tokenizer=lm.tokenizer, context_length=4096, max_new_tokens=64, project=project,
                     scripts=scripts, fim=False)
    assert p.header.startswith("-- script: game.ServerScriptService.Server.Services.CombatService\n")
    assert "-- parent: game.ServerScriptService.Server.Services\n" in p.header
    assert "DataService" in p.header  # a sibling
    assert p.guard_text.endswith(src[:off]) and not p.truncated
    small = build_prompt(src, len(src), tokenizer=lm.tokenizer, context_length=200, max_new_tokens=40, project=project,
                         scripts=scripts, fim=False)
    assert small.truncated and len(small.input_ids) <= 160
    assert small.guard_text.endswith(src)  # the guard still reads the whole prefix


def test_prompt_lists_exports_of_required_modules(project, model_dir) -> None:
    lm = load_model(model_dir)
    src = 'local RS = game:GetService("ReplicatedStorage")\nlocal Signal = require(RS.Shared.Util.Signal)\n'
    p = build_prompt(src, len(src), tokenizer=lm.tokenizer, context_length=4096, max_new_tokens=32, project=project)
    line = next(f for f in p.facts if f.startswith("game.ReplicatedStorage.Shared.Util.Signal exports:"))
    assert "new" in line


def test_fill_in_the_middle_when_the_tokenizer_supports_it(project, model_dir) -> None:
    lm = load_model(model_dir)
    tok = lm.tokenizer
    src = "local a = 1\nlocal b = \nprint(a, b)\n"
    off = src.index("local b = ") + len("local b = ")
    p = build_prompt(src, off, tokenizer=tok, context_length=256, max_new_tokens=16)
    ids = [tok.convert_tokens_to_ids(t) for t in ("<fim_prefix>", "<fim_suffix>", "<fim_middle>")]
    assert p.fim and p.input_ids[0] == ids[0] and p.input_ids[-1] == ids[2] and ids[1] in p.input_ids
    plain = build_prompt(src, off, tokenizer=tok, context_length=256, max_new_tokens=16, fim=False)
    assert not plain.fim and ids[0] not in plain.input_ids


def test_special_tokens_in_the_text_stay_text(model_dir) -> None:
    lm = load_model(model_dir)
    src = "-- <|endoftext|>\nlocal x = "
    p = build_prompt(src, len(src), tokenizer=lm.tokenizer, context_length=256, max_new_tokens=16)
    assert lm.tokenizer.eos_token_id not in p.input_ids


def test_module_exports() -> None:
    src = "local M = {}\nfunction M.new() end\nfunction M:Fire() end\nM.VERSION = 2\nlocal function hidden() end\nreturn M\n"
    assert module_exports(src) == ["new", "Fire", "VERSION"]
    assert module_exports("return {\n\tspeed = 1,\n\tname = 'x',\n}\n") == ["speed", "name"]
    assert module_exports("print(1)") == []


# ------------------------------------------------------------------------------------ CLI

def test_parse_location() -> None:
    assert parse_location("a/b.luau:3:7") == ("a/b.luau", 3, 7)
    assert parse_location("C:/x/y.luau:1:1") == ("C:/x/y.luau", 1, 1)
    for bad in ("a.luau", "a.luau:x:1", "a.luau:0:1", ":1:1"):
        with pytest.raises(ValueError):
            parse_location(bad)


def test_cli_complete_json(model_dir, capsys) -> None:
    path = SAMPLES / COMBAT
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "local Players" in l)
    code = main(["complete", f"{path}:{line}:7", "--project", str(SAMPLES), "--model", str(model_dir),
                 "--max-tokens", "6", "--format", "json", "--timeout-ms", "0"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["line"] == line and data["column"] == 7 and data["guarded"] is True and data["tokens"] <= 6
    assert data["promptTokens"] <= 96 and "stopReason" in data


def test_cli_complete_errors(model_dir, tmp_path, capsys) -> None:
    path = SAMPLES / COMBAT
    assert main(["complete", f"{path}:99999:1", "--model", str(model_dir)]) == 2
    assert "lines" in capsys.readouterr().err
    assert main(["complete", f"{path}:1:999", "--model", str(model_dir)]) == 2
    assert main(["complete", "nofile.luau:1:1", "--model", str(model_dir)]) == 2
    assert main(["complete", f"{path}:1:1", "--model", str(tmp_path / "missing")]) == 2
    assert "cannot load the completion model" in capsys.readouterr().err


class _DeadEndMatcher:
    """A matcher stuck after one token: its mask then allows only EOS (a dead end), and it
    refuses EOS there as a real guard does where the text may not stop."""

    def __init__(self, size: int, eos: int) -> None:
        self.size, self.eos, self.consumed = size, eos, []
        self.guard = self  # (generate_ids asks a matcher's guard for the mask at a cursor)

    @property
    def cursor(self) -> int:
        return len(self.consumed)

    def mask(self, cursor: int | None = None):
        import numpy as np
        from luaguard.guard.vocab import TokenMask

        if not (self.cursor if cursor is None else cursor):
            return TokenMask(False, np.array([self.eos], dtype=np.int64), self.size, self.size - 1, False)
        return TokenMask(True, np.array([self.eos], dtype=np.int64), self.size, 1, True, dead_end=True)

    def cached_mask(self):
        return self.mask()

    def consume(self, tok: int) -> bool:
        if tok == self.eos or self.consumed:  # (stuck after one token: nothing is allowed)
            return False
        self.consumed.append(tok)
        return True

    def complete_ok(self) -> bool:
        return not self.consumed

    def rollback(self, n: int = 1) -> None:
        del self.consumed[len(self.consumed) - n:]


def test_dead_end_stops_and_trims_instead_of_raising(model_dir) -> None:
    """Where only EOS is left but the text may not stop, generation stops (`dead_end`) and
    drops the unfinished tail; it never raises 'the guard rejected token'."""
    from luaguard.completion.generate import generate_ids

    lm = load_model(str(model_dir), device="cpu")
    eos = lm.tokenizer.eos_token_id
    m = _DeadEndMatcher(lm.model.config.vocab_size, eos)
    res = generate_ids(lm.model, lm.tokenizer("local x = ").input_ids, max_new_tokens=5, eos_ids=[eos], matcher=m)
    assert res.stop_reason == "dead_end"
    assert res.ids == [] and res.probs == [] and m.consumed == []


def test_phases_account_for_every_step_and_do_not_change_the_result(model_dir, project) -> None:
    """``generate_ids(phases=...)`` (bench/guard_breakdown.py) adds each part of a step's
    time and counts steps and new masks; the tokens are those of a run without it."""
    from luaguard.completion.generate import _eos_ids, generate_ids
    from luaguard.guard.matcher import guard_for
    from luaguard.guard.table_cache import token_table

    lm = load_model(str(model_dir), device="cpu")
    eos = _eos_ids(lm)
    guard = guard_for(token_table(lm.tokenizer, lm.model.config.vocab_size, eos_ids=eos), project)
    text = _source()[:_at(_source(), "local ReplicatedStorage = game:GetService(\"ReplicatedStorage\")\n")]
    prompt = lm.tokenizer(text[-200:]).input_ids
    scripts = project.instances_for_file(COMBAT)
    plain = generate_ids(lm.model, prompt, max_new_tokens=12, eos_ids=eos,
                         matcher=guard.matcher(text[-200:], scripts=scripts), seed=3, temperature=0.9)
    phases: dict[str, float] = {}
    masks_before = guard.engine.stats["masks"]
    t0 = time.perf_counter()
    timed = generate_ids(lm.model, prompt, max_new_tokens=12, eos_ids=eos,
                         matcher=guard.matcher(text[-200:], scripts=scripts), seed=3, temperature=0.9, phases=phases)
    wall = time.perf_counter() - t0
    assert timed.ids == plain.ids and timed.probs == plain.probs
    assert phases["steps"] == timed.steps > 1
    assert phases["masks_new"] == guard.engine.stats["masks"] - masks_before == 0  # the first run made them
    # (at the test model's vocabulary every accepted step's mask is applied after the loop)
    assert {"prefill", "forward", "mask_cached", "choose", "consume", "deferred"} <= set(phases)
    assert 0 < sum(v for k, v in phases.items() if k not in ("steps", "masks_new", "refused", "retried", "rescued")) <= wall
    unguarded: dict[str, float] = {}
    generate_ids(lm.model, prompt, max_new_tokens=4, eos_ids=eos, phases=unguarded)
    assert unguarded["steps"] == 4 and not {"mask_new", "mask_cached", "apply", "consume"} & set(unguarded)


class _CountingMatcher:
    """Wraps a real matcher; counts the tokens the guard refused and keeps those it took
    (also those a trim rolls back later)."""

    def __init__(self, inner) -> None:
        self.inner, self.refused, self.taken = inner, 0, []
        self.guard = inner.guard

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def consume(self, tok: int) -> bool:
        ok = self.inner.consume(tok)
        self.refused += not ok
        if ok:
            self.taken.append(tok)
        return ok


def _prompts(n: int) -> list[tuple[str, list]]:
    import random

    rng = random.Random(13)
    files = sorted((SAMPLES / "src").rglob("*.luau"))
    out = []
    for _ in range(n):
        f = rng.choice(files)
        src = f.read_text(encoding="utf-8")
        out.append((src[:rng.randrange(len(src))][-120:], str(f.relative_to(SAMPLES))))
    return out


def test_check_first_greedy_equals_masking_every_step(model_dir, project) -> None:
    """Greedy decoding that asks the guard about the unmasked argmax first (and computes
    uncached masks after the loop) gives the tokens and probabilities of masking every step
    first - over prompts where the guard refuses unmasked choices and masks are new."""
    from luaguard.guard.automaton import Automaton
    from luaguard.completion.generate import _eos_ids, generate_ids
    from luaguard.guard.matcher import Guard, path_space
    from luaguard.guard.table_cache import token_table

    lm = load_model(str(model_dir), device="cpu")
    eos = _eos_ids(lm)
    table = token_table(lm.tokenizer, lm.model.config.vocab_size, eos_ids=eos)
    first_guard = Guard(Automaton(path_space(project)), table)
    every_guard = Guard(Automaton(path_space(project)), table)
    refused = deferred_masks = 0
    for text, rel in _prompts(10) + [("local x = game.ReplicatedStorage.", COMBAT), ('local p = game:GetService("', COMBAT)]:
        scripts = project.instances_for_file(rel)
        ids = lm.tokenizer(text).input_ids[-64:]  # (the test model has 96 positions)
        m = _CountingMatcher(first_guard.matcher(text, scripts=scripts))
        before = first_guard.engine.stats["masks"]
        a = generate_ids(lm.model, ids, max_new_tokens=16, eos_ids=eos, matcher=m)
        b = generate_ids(lm.model, ids, max_new_tokens=16, eos_ids=eos, check_first=False,
                         matcher=every_guard.matcher(text, scripts=scripts))
        assert (a.ids, a.probs, a.stop_reason) == (b.ids, b.probs, b.stop_reason), text[-60:]
        assert all(0.0 < p <= 1.0 for p in a.probs)
        refused += m.refused
        deferred_masks += first_guard.engine.stats["masks"] > before
    assert refused > 0 and deferred_masks > 0


@pytest.mark.parametrize(("text", "refusals", "cold"), [('local s = game:GetService("', (0.5, 1.0), False),
                                                     ('local s = game:GetService("', (0.5, 1.0), True),
                                                     ("local t = {", (0.05, 0.5), True)])
def test_check_first_sampling_follows_the_masked_distribution(model_dir, project, text, refusals, cold) -> None:
    """Sampling that tries an unmasked sample first and falls back to the masked distribution
    when the guard refuses it draws each token with its masked, renormalised probability:
    first tokens over 600 seeds against the exact masked softmax (every token expected 10+
    times within 4.5 standard errors, and a chi-square test over bins of the rest), at a prompt where the guard refuses most
    unmasked samples and at one where it takes most; a refused draw is retried unmasked, then
    redrawn from the masked distribution - with the step's mask cached and not (``cold``: a
    fresh guard per draw: the probability comes from a mask computed after the loop)."""
    from luaguard.guard.automaton import Automaton
    from luaguard.completion.generate import RETRIES, _eos_ids, generate_ids
    from luaguard.guard.matcher import Guard, guard_for, path_space
    from luaguard.guard.table_cache import token_table

    lm = load_model(str(model_dir), device="cpu")
    eos = _eos_ids(lm)
    table = token_table(lm.tokenizer, lm.model.config.vocab_size, eos_ids=eos)
    guard = guard_for(table, project)
    ids = lm.tokenizer(text).input_ids
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0, -1].float()
    mask = guard.matcher(text).mask()
    raw = torch.softmax(logits, dim=-1)
    refuse = 1.0 - float(raw[[t for t in range(len(raw)) if mask.allows(t)]].sum())
    assert refusals[0] < refuse < refusals[1]
    masked = logits.clone()
    mask.apply_(masked)
    exact = torch.softmax(masked, dim=-1)
    n = 600
    counts = torch.zeros_like(exact)
    refusals = []  # per draw: how many unmasked choices the guard refused
    for seed in range(n):
        g = Guard(Automaton(path_space(project)), table) if cold else guard
        m = _CountingMatcher(g.matcher(text))
        generate_ids(lm.model, ids, max_new_tokens=1, eos_ids=eos, matcher=m, temperature=1.0, seed=seed)
        refusals.append(m.refused)
        counts[m.taken[0]] += 1
    freq = counts / n
    se = torch.sqrt(exact * (1 - exact) / n) + 1e-9
    # per token where the normal approximation holds (10+ draws expected); a token of
    # probability 5e-5 drawn once would be 5.6 standard errors off, and thousands of them
    # share the tail: the chi-square below covers them in bins
    # (none at the flat "local t = {": there the chi-square is the whole check)
    common = exact * n >= 10
    if common.any():
        assert float(((freq - exact).abs() / se)[common].max()) < 4.5
    # Pearson's chi-square over bins of tokens (most probable first) expected 10+ times each
    obs, exp = [0.0], [0.0]
    for t in torch.argsort(exact, descending=True).tolist():
        if exp[-1] >= 10:
            obs.append(0.0)
            exp.append(0.0)
        obs[-1] += float(counts[t])
        exp[-1] += float(exact[t]) * n
    if exp[-1] < 10 and len(exp) > 1:
        obs[-2] += obs.pop()
        exp[-2] += exp.pop()
    df = len(obs) - 1
    assert df >= 8
    assert sum((o - e) ** 2 / e for o, e in zip(obs, exp)) < df + 6 * (2 * df) ** 0.5
    # every way was taken: the first draw allowed; refused, then allowed on a retry; refused
    # throughout and redrawn masked - where most draws are refused (where 14% are, all
    # RETRIES + 1 draws are refused once in ~2,700 steps: not to be expected in 600)
    assert refusals.count(0) > 10 and sum(1 <= r <= RETRIES for r in refusals) > 10
    assert max(refusals) <= RETRIES + 1
    if refuse > 0.5:
        assert refusals.count(RETRIES + 1) > 10


def test_check_first_sampling_does_not_depend_on_the_guards_caches(model_dir, project) -> None:
    """The same seed draws the same tokens from a guard whose caches are cold and from one
    that has seen the text before (what is tried never depends on a cached mask)."""
    from luaguard.guard.automaton import Automaton
    from luaguard.completion.generate import _eos_ids, generate_ids
    from luaguard.guard.matcher import Guard, path_space
    from luaguard.guard.table_cache import token_table

    lm = load_model(str(model_dir), device="cpu")
    eos = _eos_ids(lm)
    table = token_table(lm.tokenizer, lm.model.config.vocab_size, eos_ids=eos)
    warm = Guard(Automaton(path_space(project)), table)
    for text, rel in _prompts(6) + [('local s = game:GetService("', COMBAT)]:
        scripts = project.instances_for_file(rel)
        ids = lm.tokenizer(text).input_ids[-64:]
        runs = []
        for guard in (Guard(Automaton(path_space(project)), table), warm, warm):
            res = generate_ids(lm.model, ids, max_new_tokens=16, eos_ids=eos, temperature=1.0, seed=11,
                               matcher=guard.matcher(text, scripts=scripts))
            runs.append((res.ids, res.probs))
        assert runs[0] == runs[1] == runs[2], text[-60:]
