"""Token tables and their vocabulary tries cached on disk, so a large vocabulary's guard
starts in well under a second instead of rebuilding them (1-3 s of CPU at 129k-248k ids).

**Key.**  :func:`table_key`: SHA-256 of what the table's bytes depend on - every token id's
vocabulary string, the added tokens (text, special or not), the special ids, the decoder,
pre-tokenizer and normalizer descriptions (how strings become bytes), the logits width, the
EOS ids and :data:`FORMAT` - so two tokenizers share an entry only when their tables are the
same.

**File.**  ``<cache dir>/tables/<key>.npz`` (numpy's archive of plain arrays, read with
``allow_pickle=False``): the token bytes (one byte string and the lengths), the trie's records
and per-node columns (:meth:`~.vocab.VocabTrie.to_arrays`) and a JSON header with the key,
the format, the table's fields and a SHA-256 digest of those fields and the arrays.  A file is used only when
its header names the key asked for and the digest matches (a truncated, foreign or corrupt
file is ignored and rebuilt); it is written to a temporary file in the same folder and
renamed into place (atomic), so concurrent processes never read a half-written file.

**Where.**  ``$LUAGUARD_CACHE_DIR`` (empty or ``off``: no disk cache), else
``$XDG_CACHE_HOME/luaguard``, else ``~/.cache/luaguard``.  Tables under :data:`MIN_IDS` ids
(built in well under 0.1 s) are not cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .token_bytes import TokenTable, build_table, default_eos_ids
from .vocab import VocabTrie

#: the file layout's version (part of every key)
FORMAT = 1
#: tables of fewer ids are built in memory, not cached on disk
MIN_IDS = 32_768
log = logging.getLogger("luaguard")


def cache_dir() -> Path | None:
    """The folder of cached tables, or ``None`` when disk caching is off."""
    env = os.environ.get("LUAGUARD_CACHE_DIR")
    if env is not None:
        if env.strip().lower() in ("", "off", "0", "none"):
            return None
        return Path(env).expanduser() / "tables"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "luaguard" / "tables"


def table_key(tokenizer: Any, width: int, eos: frozenset[int]) -> str:
    """The cache key of ``tokenizer``'s table at logits ``width`` with ``eos`` (see the module
    docstring).  ~0.1 s at 248k ids (``convert_ids_to_tokens`` over the ids, not the vocabulary
    dictionary, which costs several times more)."""
    h = hashlib.sha256()
    n = len(tokenizer)
    h.update(json.dumps({"format": FORMAT, "n": n, "width": width, "eos": sorted(eos)}).encode())
    for text in tokenizer.convert_ids_to_tokens(list(range(n))):
        h.update(b"\x00" if text is None else text.encode("utf-8", "surrogatepass") + b"\x01")
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    h.update(json.dumps(sorted((int(i), str(getattr(t, "content", t)), bool(getattr(t, "special", False)))
                               for i, t in added.items())).encode())
    h.update(json.dumps(sorted(int(i) for i in getattr(tokenizer, "all_special_ids", ()) or ())).encode())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    for part in ("decoder", "pre_tokenizer", "normalizer"):
        obj = getattr(backend, part, None)
        h.update(part.encode() + (obj.__getstate__() if obj is not None else b"null"))
    return h.hexdigest()


def _digest(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of the header's fields (but the digest) and of every array."""
    h = hashlib.sha256(json.dumps({k: v for k, v in header.items() if k != "digest"}, sort_keys=True).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.data)
    return h.hexdigest()


def save(key: str, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path | None:
    """Write one entry (atomically: a temporary file renamed into place); returns its path,
    ``None`` when caching is off or the folder cannot be written (logged, not raised)."""
    folder = cache_dir()
    if folder is None:
        return None
    head = dict(header, key=key, format=FORMAT)
    head["digest"] = _digest(head, arrays)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{key[:16]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, header=np.frombuffer(json.dumps(head).encode(), dtype=np.uint8), **arrays)
            os.replace(tmp, folder / f"{key}.npz")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        log.warning("luaguard: cannot cache the token table in %s: %s", folder, exc)
        return None
    return folder / f"{key}.npz"


def load(key: str) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """The header and arrays of entry ``key``, or ``None`` when there is none or it does
    not verify (wrong key or format, digest mismatch, unreadable: logged once, then rebuilt)."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{key}.npz"
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
        head = json.loads(arrays.pop("header").tobytes())
        if head.get("key") != key or head.get("format") != FORMAT or head.get("digest") != _digest(head, arrays):
            raise ValueError("the file does not match its key or digest")
    except Exception as exc:  # noqa: BLE001 - a bad cache file is rebuilt, never fatal
        log.warning("luaguard: ignoring the cached token table %s: %s", path, exc)
        return None
    return head, arrays


def save_table(table, trie) -> Path | None:
    """Cache ``table`` (a :class:`~.token_bytes.TokenTable` with its ``cache_key``) and its
    :class:`~.vocab.VocabTrie` (called once the trie is built)."""
    tb = table.token_bytes
    lengths = np.fromiter((-1 if b is None else len(b) for b in tb), dtype=np.int32, count=len(tb))
    data = np.frombuffer(b"".join(b for b in tb if b), dtype=np.uint8)
    arrays = {"tb_len": lengths, "tb_data": data}
    arrays.update({f"trie_{k}": v for k, v in trie.to_arrays().items()})
    header = {"size": table.size, "kind": table.kind, "eos": sorted(table.eos_ids), "synthetic": table.synthetic}
    return save(table.cache_key, header, arrays)


def table_from(key: str, header: dict[str, Any], arrays: dict[str, np.ndarray]):
    """The :class:`~.token_bytes.TokenTable` of a loaded entry, its trie already in place."""
    lengths = arrays["tb_len"]
    data = arrays["tb_data"].tobytes()
    ends = np.cumsum(np.maximum(lengths, 0)).tolist()
    starts = [0] + ends[:-1]
    tb: list[bytes | None] = [data[a:z] if n >= 0 else None for a, z, n in zip(starts, ends, lengths.tolist())]
    if len(tb) != header["size"] or (ends and ends[-1] != len(data)):
        raise ValueError("a cached token table whose sizes disagree")  # (the digest makes this a bug)
    table = TokenTable(size=int(header["size"]), token_bytes=tb, eos_ids=frozenset(header["eos"]),
                       kind=str(header["kind"]), synthetic=int(header["synthetic"]), cache_key=key)
    trie = VocabTrie.from_arrays({k[5:]: v for k, v in arrays.items() if k.startswith("trie_")})
    table._derived["vocab_trie"] = trie
    return table


def _store_trie(table: TokenTable, key: str, value: Any) -> None:
    """``TokenTable.on_derived`` of a keyed table: store it with its trie once that is built."""
    if key == "vocab_trie":
        save_table(table, value)


_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple, TokenTable]] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def token_table(tokenizer: Any, size: int | None = None, *, eos_ids: Sequence[int] | None = None) -> TokenTable:
    """The :class:`TokenTable` of a Hugging Face fast tokenizer (cached per tokenizer and size
    in memory, and from :data:`MIN_IDS` ids on disk with its vocabulary trie).

    Args:
        tokenizer: a ``PreTrainedTokenizerFast`` (anything with ``backend_tokenizer``).
        size: the model's logits width (``model.config.vocab_size`` or the output
            embedding's rows); default ``len(tokenizer)``.  Ids past the tokenizer get no bytes.
        eos_ids: ids that end generation; default the tokenizer's ``eos_token_id``.

    Raises:
        TokenizerKindError: a slow tokenizer, or a vocabulary that cannot be read.
    """
    n_tok = len(tokenizer)
    width = max(int(size or n_tok), n_tok)
    eos = frozenset(int(i) for i in (eos_ids if eos_ids is not None else default_eos_ids(tokenizer)) if i is not None)
    key = (width, eos)
    with _CACHE_LOCK:
        per = _CACHE.get(tokenizer)
        if per is not None and key in per:
            return per[key]
    table = _cached_or_built(tokenizer, width, eos)
    with _CACHE_LOCK:
        _CACHE.setdefault(tokenizer, {})[key] = table
    return table


def _cached_or_built(tokenizer: Any, width: int, eos: frozenset[int]) -> TokenTable:
    """The table from the disk cache when it holds it (its trie with it), else built (and
    keyed: stored with its trie once :func:`~.vocab.vocab_trie` has built that)."""
    key = None
    if width >= MIN_IDS and cache_dir() is not None and hasattr(tokenizer, "backend_tokenizer"):
        try:
            key = table_key(tokenizer, width, eos)
        except Exception:  # noqa: BLE001 - an odd tokenizer is built, not cached
            key = None
        got = load(key) if key is not None else None
        if got is not None:
            return table_from(key, *got)
    table = build_table(tokenizer, width, eos)
    table.cache_key = key
    if key is not None:
        table.on_derived = _store_trie
    return table
