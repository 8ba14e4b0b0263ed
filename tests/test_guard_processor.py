"""The transformers LogitsProcessor adapter: batches, beams, greedy and sampling, and the
property test (random-weights model, locally trained tokenizer, guarded generations checked
by luaguard's own linter)."""

from __future__ import annotations

import functools
import os
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from guard_support import (
    SAMPLES,
    byte_level_tokenizer,
    cpu_threads,
    metaspace_tokenizer,
    new_violations,
    random_gpt2,
)
from luaguard.engine import Engine
from luaguard.guard.matcher import Guard
from luaguard.guard.processor import GuardLogitsProcessor
from luaguard.project.index import load_project
from transformers import LogitsProcessorList

PATH = "src/server/Services/CombatService.luau"
PREFIX = (
    'local Players = game:GetService("Players")\n'
    'local ReplicatedStorage = game:GetService("ReplicatedStorage")\n'
    'local Shared = ReplicatedStorage:WaitForChild("Shared")\n'
)
#: Path-expression prompts: each ends where a model has to spell instance names.
PATH_PROMPTS = [
    "local x = game.", 'local x = game:GetService("', "local x = workspace.", "local x = script.Parent.",
    "local x = ReplicatedStorage.", 'local x = ReplicatedStorage:WaitForChild("', "local x = game.ReplicatedStorage.Shared.",
    'local x = Shared["', "local p = Players.LocalPlayer.", 'local x = script:FindFirstAncestor("',
    "local x = Shared.", 'local x = Shared:FindFirstChild("', "local m = require(script.Parent.", "game.ServerStorage.",
    "local x = game.Workspace.Map.", "Shared.Util.", "local u = Shared.Modules.", 'Shared:WaitForChild("Util"):WaitForChild("',
    "local x = (Shared.Util).", "local gui = Players.LocalPlayer.PlayerGui.",
]


@functools.cache
def _contract():
    """The linter's contract for PATH (what every front end builds its guard from)."""
    return Engine(SAMPLES).guard_contract(PATH)


@pytest.fixture(scope="module")
def setup():
    cpu_threads(1)
    project = load_project(SAMPLES)
    return project, Engine(SAMPLES), project.instances_for_file(PATH)


def _generate(model, tok, guard, prompts, scripts, *, n, max_new, seed, **kw):
    """Guarded generations for ``prompts`` (one HF generate call per prompt); returns
    (prompt, completion text) pairs, completions cut back to a safe point when the token
    limit stopped them."""
    out = []
    for i, p in enumerate(prompts):
        prompt = PREFIX + p
        enc = tok(prompt, return_tensors="pt")
        proc = GuardLogitsProcessor(guard, [prompt], scripts=scripts)
        torch.manual_seed(seed + i)
        rows = model.generate(**enc, logits_processor=LogitsProcessorList([proc]), num_return_sequences=n,
                              max_new_tokens=max_new, pad_token_id=tok.eos_token_id, **kw)
        assert proc.rejected == 0
        for row in rows:
            ids = row[enc.input_ids.shape[1]:].tolist()
            ids = ids[: guard.keep(proc._roots[0], ids)]
            out.append((prompt, guard.table.text_of(ids)))
    return out


def _count(engine, pairs):
    totals = {"paths": 0, "placeholders": 0, "closers": 0}
    bad = []
    for prompt, text in pairs:
        v = new_violations(engine, prompt, text, PATH)
        for k in totals:
            totals[k] += len(v[k])
        if any(v.values()):
            bad.append((text, v))
    return totals, bad


@pytest.mark.parametrize("kind", ["byte_level", "metaspace"])
def test_property_guarded_generations_are_lint_clean(setup, kind) -> None:
    """1,000 sampled generations (20 path prompts x 50) from a random-weights model: no invalid
    instance path, no placeholder, no closer without its opener (luaguard's linter)."""
    project, engine, scripts = setup
    tok = byte_level_tokenizer() if kind == "byte_level" else metaspace_tokenizer()
    model = random_gpt2(tok, seed=1)
    guard = Guard.for_model(tok, model.config.vocab_size, _contract())
    n = int(os.environ.get("LUAGUARD_PROPERTY_PER_PROMPT", "50"))
    t0 = time.perf_counter()
    pairs = _generate(model, tok, guard, PATH_PROMPTS, scripts, n=n, max_new=24, seed=100, do_sample=True, top_k=0)
    elapsed = time.perf_counter() - t0
    totals, bad = _count(engine, pairs)
    assert len(pairs) == n * len(PATH_PROMPTS)
    assert totals == {"paths": 0, "placeholders": 0, "closers": 0}, bad[:3]
    # the completions are real model output, not empty strings (a random model that starts a
    # name the guard cannot finish is cut back to nothing: ~10% of these prompts)
    assert sum(1 for _p, t in pairs if t.strip()) > 0.85 * len(pairs)
    print(f"\n{kind}: {len(pairs)} guarded generations in {elapsed:.1f}s")


@pytest.mark.parametrize("kind", ["byte_level", "metaspace"])
def test_property_check_first_generations_are_lint_clean(setup, kind) -> None:
    """luaguard's own decoding loop (``generate_ids``, which checks the model's choice first
    and masks only refused steps) with the same random-weights model: sampled and greedy
    generations from the path prompts break no rule either."""
    from luaguard.completion.generate import generate_ids

    project, engine, scripts = setup
    tok = byte_level_tokenizer() if kind == "byte_level" else metaspace_tokenizer()
    model = random_gpt2(tok, seed=1)
    guard = Guard.for_model(tok, model.config.vocab_size, _contract())
    n = int(os.environ.get("LUAGUARD_PROPERTY_CHECK_FIRST", "5"))
    pairs = []
    for i, p in enumerate(PATH_PROMPTS):
        prompt = PREFIX + p
        ids = tok(prompt).input_ids
        for j in range(n + 1):
            m = guard.matcher(prompt, scripts=scripts)
            res = generate_ids(model, ids, max_new_tokens=24, eos_ids=[tok.eos_token_id], matcher=m,
                               temperature=0.0 if j == n else 1.0, seed=1000 * i + j)
            pairs.append((prompt, guard.table.text_of(res.ids)))  # what the loop emitted
    totals, bad = _count(engine, pairs)
    assert totals == {"paths": 0, "placeholders": 0, "closers": 0}, bad[:3]
    assert sum(1 for _p, t in pairs if t.strip()) > 0.9 * len(pairs)


def test_same_model_without_the_guard_does_break_the_rules(setup) -> None:
    """The property test can fail: unguarded output of the same model breaks the rules."""
    _project, engine, _scripts = setup
    tok = byte_level_tokenizer()
    model = random_gpt2(tok, seed=1)
    pairs = []
    for i, p in enumerate(PATH_PROMPTS[:10]):
        prompt = PREFIX + p
        enc = tok(prompt, return_tensors="pt")
        torch.manual_seed(100 + i)
        rows = model.generate(**enc, num_return_sequences=20, max_new_tokens=24, pad_token_id=tok.eos_token_id,
                              do_sample=True, top_k=0)
        guard_free = [r[enc.input_ids.shape[1]:].tolist() for r in rows]
        pairs.extend((prompt, tok.decode([t for t in ids if t != tok.eos_token_id])) for ids in guard_free)
    totals, _bad = _count(engine, pairs)
    assert totals["paths"] > 0 and totals["closers"] > 0


def test_greedy_batches_and_beams(setup) -> None:
    project, engine, scripts = setup
    tok = byte_level_tokenizer()
    tok.padding_side = "left"
    model = random_gpt2(tok, seed=2)
    guard = Guard.for_model(tok, model.config.vocab_size, _contract())
    prompts = [PREFIX + "local x = Shared.", PREFIX + 'local s = game:GetService("']
    enc = tok(prompts, return_tensors="pt", padding=True)
    for kw in ({"do_sample": False}, {"do_sample": False, "num_beams": 3, "num_return_sequences": 2},
               {"do_sample": True, "top_k": 5, "num_return_sequences": 3}, {"do_sample": True, "num_beams": 2}):
        proc = GuardLogitsProcessor(guard, prompts, scripts=scripts)
        torch.manual_seed(0)
        rows = model.generate(**enc, logits_processor=LogitsProcessorList([proc]), max_new_tokens=16,
                              pad_token_id=tok.eos_token_id, **kw)
        per = rows.shape[0] // len(prompts)
        assert proc.rejected == 0
        for r, row in enumerate(rows):
            ids = row[enc.input_ids.shape[1]:].tolist()
            root = proc._roots[r // per]
            keep = guard.keep(root, ids)
            text = guard.table.text_of(ids[:keep])
            prompt = prompts[r // per]
            v = new_violations(engine, prompt, text, PATH)
            assert not any(v.values()), (kw, text, v)
            if r // per == 1 and keep:
                assert text.split('"')[0] in project.api.services or not text.strip('"'), text


def test_greedy_picks_the_best_allowed_token(setup) -> None:
    project, _engine, scripts = setup
    tok = byte_level_tokenizer()
    model = random_gpt2(tok, seed=3)
    guard = Guard.for_model(tok, model.config.vocab_size, _contract())
    prompt = PREFIX + "local x = Shared."
    enc = tok(prompt, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits[0, -1]
    mask = guard.matcher(prompt, scripts=scripts).mask()
    allowed = [i for i in range(len(tok)) if mask.allows(i)]
    best = max(allowed, key=lambda i: float(logits[i]))
    proc = GuardLogitsProcessor(guard, [prompt], scripts=scripts)
    out = model.generate(**enc, logits_processor=LogitsProcessorList([proc]), max_new_tokens=1, do_sample=False,
                         pad_token_id=tok.eos_token_id)
    assert int(out[0, -1]) == best
    assert int(torch.argmax(logits)) != best or mask.allows(int(torch.argmax(logits)))


def test_processor_rejects_mismatched_batches(setup) -> None:
    project, _engine, _scripts = setup
    tok = byte_level_tokenizer()
    guard = Guard.for_model(tok, len(tok), _contract())
    with pytest.raises(ValueError):
        GuardLogitsProcessor(guard, [])
    proc = GuardLogitsProcessor(guard, ["a", "b"])
    with pytest.raises(ValueError):
        proc(torch.zeros((3, 2), dtype=torch.long), torch.zeros((3, len(tok))))
