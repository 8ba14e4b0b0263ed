"""Shared helpers for the guard tests and the guard benchmark: locally trained tokenizers,
a random-weights model, and counting the linter findings the guard must prevent.

Nothing is downloaded: tokenizers are trained with the ``tokenizers`` library on the
project's own sample Luau files, models are built from a config with random weights.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "place"


def sample_texts() -> list[str]:
    """The sample place's Luau sources, in path order."""
    return [p.read_text(encoding="utf-8") for p in sorted((SAMPLES / "src").rglob("*.luau"))]


@functools.cache
def byte_level_tokenizer(vocab_size: int = 1200):
    """A GPT-2 style byte-level BPE tokenizer trained on the samples (EOS ``<|endoftext|>``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tk.train_from_iterator(sample_texts(), trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>", pad_token="<|endoftext|>")


@functools.cache
def metaspace_tokenizer(vocab_size: int = 900):
    """A SentencePiece-style tokenizer (``▁`` for spaces, ``<0xNN>`` byte fallback) trained
    on the samples, with Llama's decoder chain (EOS ``</s>``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    base = Tokenizer(models.BPE(unk_token="<unk>"))
    base.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    base.train_from_iterator(sample_texts(), trainer)
    desc = json.loads(base.to_str())
    vocab: dict[str, int] = dict(desc["model"]["vocab"])
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in desc["model"]["merges"]]
    for b in range(256):
        name = f"<0x{b:02X}>"
        if name not in vocab:
            vocab[name] = len(vocab)
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    tk.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    tk.decoder = decoders.Sequence([
        decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0),
    ])
    tk.add_special_tokens(["<unk>", "<s>", "</s>"])
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="</s>", bos_token="<s>", unk_token="<unk>", pad_token="</s>")


def random_gpt2(tokenizer, *, seed: int = 0, n_embd: int = 32, n_layer: int = 1, n_positions: int = 512):
    """A GPT-2 with random weights (the worst hallucinator) over ``tokenizer``'s vocabulary."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=n_embd, n_layer=n_layer, n_head=2,
                     bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    model = GPT2LMHeadModel(cfg)
    # spread the logits so sampling is not uniform noise: larger output weights
    with torch.no_grad():
        model.transformer.wte.weight.mul_(float(os.environ.get("LG_WTE", "4")))
    model.eval()
    return model


#: Linter rules the guard makes impossible in generated text.
PATH_RULES = ("unknown_instance", "unknown_service")


def guarded_violations(engine, text: str, path: str, start: int) -> dict[str, list[str]]:
    """Findings of ``text`` (linted as ``path``) that lie at or after ``start`` and that the
    guard must prevent: invalid instance paths (``unknown_instance``, ``unknown_service``),
    placeholders, and closers without their opener: a ``)``/``]``/``}``/``end``/``until``
    that has no open frame (``Unexpected ')'``, ``no open block``) or meets another open
    frame (``Expected 'end' (to close 'function'), got ')'``).  Unclosed frames at the end
    of the text are not counted (generation may stop early).  Returns
    ``{"paths": [...], "placeholders": [...], "closers": [...]}``."""
    from luaguard.text import LineIndex

    lines = LineIndex(text)
    out: dict[str, list[str]] = {"paths": [], "placeholders": [], "closers": []}
    for f in engine.lint_text(text, path, mode="patch"):
        off = lines.offset(f.range.start)
        if off < start and f.rule != "unbalanced_bracket":
            continue
        if f.rule in PATH_RULES:
            out["paths"].append(f.message)
        elif f.rule == "placeholder":
            out["placeholders"].append(f.message)
        elif f.rule in ("unbalanced_bracket", "unclosed_block"):
            msg = f.message
            stray = msg.startswith("Unexpected '") or "there is no open" in msg
            wrong = any(f" got '{c}'" in msg for c in (")", "]", "}", "end", "until"))
            if (stray or wrong) and _detected_after(f, lines, start):
                out["closers"].append(msg)
    return out


def new_violations(engine, prompt: str, completion: str, path: str) -> dict[str, list[str]]:
    """:func:`guarded_violations` of ``prompt + completion`` minus those the prompt alone
    already has (a prompt ending in ``game.`` is itself incomplete: the parser's recovery
    name ``%error-id%`` is reported whether or not anything follows)."""
    full = guarded_violations(engine, prompt + completion, path, len(prompt))
    base = guarded_violations(engine, prompt, path, len(prompt))
    out: dict[str, list[str]] = {}
    for k, msgs in full.items():
        left = list(base[k])
        kept = []
        for m in msgs:
            if m in left:
                left.remove(m)
            else:
                kept.append(m)
        out[k] = kept
    return out


def _detected_after(f, lines, start: int) -> bool:
    span = f.data.get("span")
    if span is None:
        return lines.offset(f.range.start) >= start
    return span[1] >= start


def cpu_threads(n: int = 1) -> None:
    import torch

    torch.set_num_threads(n)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def replay(guard, tok, table, data: bytes, start: int, *, scripts=(), error_lines=frozenset(), mask_every: int = 0):
    """Feed ``data[start:]`` (UTF-8 Luau) token by token (``tok``'s encoding, ``table`` its
    :class:`~luaguard.guard.token_bytes.TokenTable`) through ``guard``, primed with
    ``data[:start]`` (``scripts``: the file's instances); after a refusal, go on from the
    next line, primed anew.  Every ``mask_every``-th token is also checked against the
    guard's mask (0: never).  Returns ``(misses, refusals, tokens, masks, note)``: misses
    as ``(line, token text, line text or what disagreed)`` for refusals on lines outside
    ``error_lines`` (0-based lines with an error finding) and for any mask that disagrees
    with the matcher; ``note`` says why the replay stopped early (a tokenizer that does not
    reproduce the text), else ``""``."""
    from luaguard.completion.context import encode_text

    misses: list[tuple[int, str, str]] = []
    refusals = tokens = masks = 0
    note = ""
    pos = start
    while pos < len(data):
        m = guard.matcher(data[:pos].decode("utf-8"), scripts=scripts)
        rest = data[pos:]
        ids = encode_text(tok, rest.decode("utf-8"))
        pieces = [table.token_bytes[i] or b"" for i in ids]
        joined = b"".join(pieces)
        shift = 0
        if joined != rest:
            if joined == b" " + rest:
                shift = 1  # a SentencePiece tokenizer's prefix space on the first token
            else:
                note = f"tokenizer does not reproduce the text from byte {pos}"
                break
        off = pos - shift
        bad = None
        for i, piece in zip(ids, pieces):
            banned = None
            if mask_every and tokens % mask_every == 0:
                banned = bool(m.mask().banned_row()[i])
                masks += 1
            ok = m.consume(i)
            if banned is not None and banned == ok:
                # the mask and the matcher disagree: a miss whatever the linter says
                line = data.count(b"\n", 0, max(off, pos))
                why = "mask bans the matcher's token" if ok else "mask allows a token the matcher refuses"
                misses.append((line + 1, piece.decode("utf-8", "replace"), why))
            if not ok:
                bad = (max(off, pos), piece)
                break
            tokens += 1
            off += len(piece)
        if bad is None:
            break
        refusals += 1
        b_off, piece = bad
        first_line = data.count(b"\n", 0, b_off)
        last_line = first_line + piece.count(b"\n")
        if not any(ln in error_lines for ln in range(first_line, last_line + 1)):
            line_text = data.split(b"\n")[first_line].decode("utf-8", "replace").strip()
            misses.append((first_line + 1, piece.decode("utf-8", "replace"), line_text[:120]))
        nxt = data.find(b"\n", b_off)
        if nxt < 0:
            break
        pos = nxt + 1
    return misses, refusals, tokens, masks, note
