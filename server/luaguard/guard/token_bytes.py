"""Token-byte tables: the exact bytes every vocabulary entry appends to the text.

The decoding guard checks candidate tokens byte by byte, so it needs, once per tokenizer,
the byte string of every token id.  Nothing here runs inside a decoding step: the table is
built once (:func:`~.table_cache.token_table` caches it per tokenizer object, and on disk) and the guard never
calls ``decode``/``encode`` afterwards.

Three vocabulary kinds are recognised from the fast tokenizer's own description
(``tokenizer.backend_tokenizer.to_str()``, the ``tokenizers`` JSON format):

* **byte-level BPE** (GPT-2, Llama-3, Qwen, StarCoder ...; decoder ``ByteLevel``): each
  vocabulary string is written in GPT-2's printable alphabet for bytes
  (``bytes_to_unicode`` in OpenAI's GPT-2 ``encoder.py``); mapping every character back
  gives the bytes;
* **metaspace / SentencePiece** (Llama-2, Mistral, T5 ...; decoder ``Metaspace`` or a
  ``Sequence`` with ``Replace("▁", " ")`` and ``ByteFallback``): ``▁`` stands for a space
  and ``<0xNN>`` tokens stand for the raw byte ``NN``; other characters are UTF-8 encoded;
* anything else: the bytes are found by decoding each token after a fixed reference token
  and removing the reference's text (done once, at table-build time).

Special tokens (``tokenizer.all_special_ids``: EOS, BOS, padding, fill-in-the-middle
markers ...) and ids past the tokenizer's vocabulary (models often pad their embedding
matrix) have no bytes (``None``): the guard bans them, except EOS which it allows only when
the text may stop.  Added tokens that are not special (extra whitespace tokens of some code
tokenizers) keep their literal text as bytes.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TokenTable", "TokenizerKindError", "build_table", "bytes_to_unicode", "default_eos_ids", "pad_table"]

_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
_METASPACE = "\u2581"


class TokenizerKindError(Exception):
    """The tokenizer is not a fast (``tokenizers``-backed) tokenizer, or its vocabulary cannot be read."""


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (256 entries).

    Printable Latin-1 bytes map to themselves; the other 68 bytes map to code points from
    U+0100 upward, in byte order (the scheme of OpenAI's GPT-2 ``encoder.py``, which every
    byte-level BPE tokenizer uses).
    """
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    mapping: dict[int, str] = {}
    extra = 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


_UNICODE_TO_BYTE = {ch: b for b, ch in bytes_to_unicode().items()}


@dataclass(eq=False)
class TokenTable:
    """Bytes of every token id of one tokenizer (and model width).

    ``size`` is the number of logits the model produces (>= the tokenizer's vocabulary);
    ``token_bytes[i]`` the bytes token ``i`` appends to the text, or ``None`` for special
    tokens and unused ids; ``eos_ids`` the ids that end generation; ``kind`` is
    ``"byte_level" | "metaspace" | "decoded"`` (how the bytes were derived);
    ``synthetic`` counts ids appended by :func:`pad_table` (benchmarks only).
    """

    size: int
    token_bytes: list[bytes | None]
    eos_ids: frozenset[int]
    kind: str
    synthetic: int = 0
    #: the disk cache's key of this table (:mod:`.table_cache`; ``None``: not cached)
    cache_key: str | None = None
    #: called as ``on_derived(table, key, value)`` once :meth:`derived` has built a value
    #: (:mod:`.table_cache` stores a keyed table with its trie then)
    on_derived: Callable[["TokenTable", str, Any], None] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _derived: dict[str, Any] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return self.size

    def text_of(self, ids: Sequence[int]) -> str:
        """The text a sequence of token ids spells (bytes joined, then UTF-8 decoded with
        replacement characters for incomplete sequences); special tokens add nothing."""
        return b"".join(self.token_bytes[i] or b"" for i in ids if 0 <= i < self.size).decode("utf-8", "replace")

    def derived(self, key: str, build):
        """A structure derived from this table (the vocabulary trie ...), built once, thread-safe."""
        value = self._derived.get(key)
        if value is None:
            with self._lock:
                value = self._derived.get(key)
                if value is None:
                    value = build(self)
                    self._derived[key] = value
                    if self.on_derived is not None:
                        self.on_derived(self, key, value)
        return value


def default_eos_ids(tokenizer: Any) -> list[int]:
    """The ids that end generation by default: the tokenizer's ``eos_token_id`` (one or several)."""
    eos = getattr(tokenizer, "eos_token_id", None)
    if eos is None:
        return []
    return list(eos) if isinstance(eos, (list, tuple)) else [eos]


def _kind(desc: dict[str, Any]) -> str:
    def types(node: Any) -> list[dict]:
        if not isinstance(node, dict):
            return []
        if node.get("type") == "Sequence":
            out: list[dict] = []
            for key in ("decoders", "pretokenizers", "normalizers"):
                for child in node.get(key) or ():
                    out.extend(types(child))
            return out
        return [node]

    decoders = types(desc.get("decoder"))
    pre = types(desc.get("pre_tokenizer"))
    if any(d.get("type") == "ByteLevel" for d in decoders + pre):
        return "byte_level"
    if any(d.get("type") == "Metaspace" for d in decoders + pre):
        return "metaspace"
    for d in decoders:
        if d.get("type") == "Replace":
            pattern = d.get("pattern") or {}
            if pattern.get("String") == _METASPACE:
                return "metaspace"
    return "decoded"


def _description(backend: Any) -> dict[str, Any]:
    """The decoder and pre-tokenizer of a ``tokenizers`` backend in its JSON format (each
    serialised alone: the whole tokenizer's JSON, merges included, costs ~1 s at 248k ids)."""
    out: dict[str, Any] = {}
    for part in ("decoder", "pre_tokenizer"):
        obj = getattr(backend, part, None)
        out[part] = json.loads(obj.__getstate__()) if obj is not None else None
    return out


def build_table(tokenizer: Any, width: int, eos: frozenset[int]) -> TokenTable:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise TokenizerKindError(f"{type(tokenizer).__name__}: not a fast tokenizer (no backend_tokenizer)")
    try:
        desc = _description(backend)
        vocab: dict[str, int] = tokenizer.get_vocab()
    except Exception as exc:
        raise TokenizerKindError(f"cannot read the tokenizer's vocabulary: {exc}") from exc
    kind = _kind(desc)
    special = {int(i) for i in getattr(tokenizer, "all_special_ids", ()) or ()}
    added: dict[int, Any] = dict(getattr(tokenizer, "added_tokens_decoder", {}) or {})
    for i, tok in added.items():
        if getattr(tok, "special", False):
            special.add(int(i))
    out: list[bytes | None] = [None] * width
    decoded_ids: list[int] = []
    for text, i in vocab.items():
        if not 0 <= i < width or i in special:
            continue
        if i in added:
            out[i] = str(getattr(added[i], "content", text)).encode("utf-8")
            continue
        if kind == "byte_level":
            try:
                out[i] = bytes(_UNICODE_TO_BYTE[ch] for ch in text)
            except KeyError:  # a character outside the byte alphabet: decode it instead
                decoded_ids.append(i)
        elif kind == "metaspace":
            m = _BYTE_FALLBACK.match(text)
            out[i] = bytes([int(m.group(1), 16)]) if m else text.replace(_METASPACE, " ").encode("utf-8")
        else:
            decoded_ids.append(i)
    if decoded_ids:
        _fill_by_decoding(tokenizer, out, decoded_ids, special)
    for i in range(width):
        if out[i] == b"":
            out[i] = None
    return TokenTable(size=width, token_bytes=out, eos_ids=eos, kind=kind)


def _fill_by_decoding(tokenizer: Any, out: list[bytes | None], ids: list[int], special: set[int]) -> None:
    """Bytes of ``ids`` from ``decode([ref, id])`` minus ``decode([ref])`` (table-build time only)."""
    ref = None
    for candidate in ("a", "x", "0"):
        enc = tokenizer.convert_tokens_to_ids(candidate)
        if isinstance(enc, int) and enc not in special and enc != getattr(tokenizer, "unk_token_id", None):
            ref = enc
            break
    base = tokenizer.decode([ref], clean_up_tokenization_spaces=False) if ref is not None else ""
    for i in ids:
        seq = [ref, i] if ref is not None else [i]
        text = tokenizer.decode(seq, clean_up_tokenization_spaces=False)
        if base and text.startswith(base):
            text = text[len(base):]
        out[i] = text.encode("utf-8") if "\ufffd" not in text else None


def pad_table(table: TokenTable, size: int, extra: Sequence[bytes]) -> TokenTable:
    """A copy of ``table`` widened to ``size`` ids, the new ids spelling ``extra`` (cycled).

    For benchmarks: it models a real code model's vocabulary size (152k for Qwen2.5-Coder)
    with tokens whose bytes look like real ones (``extra`` is typically made of
    concatenations of real tokens).  Raises ``ValueError`` when ``size`` is smaller.
    """
    if size < table.size:
        raise ValueError(f"pad_table: size {size} is smaller than the table ({table.size})")
    if not extra and size > table.size:
        raise ValueError("pad_table: no byte strings to pad with")
    out = list(table.token_bytes)
    for k in range(size - table.size):
        out.append(extra[k % len(extra)])
    return TokenTable(size=size, token_bytes=out, eos_ids=table.eos_ids, kind=table.kind, synthetic=size - table.size)
