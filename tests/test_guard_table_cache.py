"""Token tables cached on disk (luaguard.guard.table_cache): keyed by the tokenizer's
vocabulary and special tokens, verified on load, written atomically (concurrent processes),
the same table and trie as a fresh build; and the vLLM processor builds them when it starts,
never inside update_state/apply."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

from guard_support import byte_level_tokenizer

import luaguard.guard.table_cache as C
from luaguard.guard.vocab import VocabTrie, vocab_trie

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """A private cache folder, every table cached (the small test tokenizers included)."""
    monkeypatch.setenv("LUAGUARD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(C, "MIN_IDS", 0)
    monkeypatch.setattr(C, "_CACHE", type(C._CACHE)())
    return tmp_path / "tables"


def _same(a: VocabTrie, b: VocabTrie) -> None:
    x, y = a.to_arrays(), b.to_arrays()
    assert x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)
    for attr in ("lo", "hi", "own", "proj", "plain", "maxpops", "ends", "children", "groups", "inner", "first",
                 "layer_sizes", "roots", "nodes", "n_real", "size", "maxpops_all", "ends_all"):
        assert getattr(a, attr) == getattr(b, attr), attr


def test_a_cached_table_is_the_built_one(cache) -> None:
    tok = byte_level_tokenizer()
    built = C.token_table(tok, len(tok) + 5)
    assert built.cache_key is not None and not list(cache.glob("*.npz"))  # saved with its trie
    trie = vocab_trie(built)
    (entry,) = cache.glob("*.npz")
    assert entry.stem == built.cache_key and not list(cache.glob("*.tmp"))
    C._CACHE.clear()
    loaded = C.token_table(tok, len(tok) + 5)
    assert loaded is not built and loaded.cache_key == built.cache_key
    assert (loaded.token_bytes, loaded.eos_ids, loaded.kind, loaded.size) == (built.token_bytes, built.eos_ids,
                                                                               built.kind, built.size)
    assert "vocab_trie" in loaded._derived  # (not built again)
    _same(vocab_trie(loaded), trie)


def test_the_key_follows_the_vocabulary_specials_width_and_eos() -> None:
    tok = byte_level_tokenizer()
    key = C.table_key(tok, len(tok), frozenset({0}))
    assert key == C.table_key(tok, len(tok), frozenset({0}))
    assert key != C.table_key(tok, len(tok) + 1, frozenset({0}))
    assert key != C.table_key(tok, len(tok), frozenset({1}))
    other = byte_level_tokenizer(1000)  # another vocabulary
    assert key != C.table_key(other, len(tok), frozenset({0}))
    from transformers import PreTrainedTokenizerFast

    special = PreTrainedTokenizerFast(tokenizer_object=tok.backend_tokenizer, eos_token="<|endoftext|>",
                                      additional_special_tokens=["<fim_middle>"])
    plain = PreTrainedTokenizerFast(tokenizer_object=tok.backend_tokenizer, eos_token="<|endoftext|>")
    assert C.table_key(special, len(tok), frozenset({0})) != C.table_key(plain, len(tok), frozenset({0}))


def test_a_corrupt_or_foreign_file_is_rebuilt(cache, caplog) -> None:
    tok = byte_level_tokenizer()
    table = C.token_table(tok)
    vocab_trie(table)
    (entry,) = cache.glob("*.npz")
    good = entry.read_bytes()
    for bad in (good[: len(good) // 2], b"not a zip", good.replace(b"byte_level", b"metaspac_e", 1)):
        entry.write_bytes(bad)
        assert C.load(table.cache_key) is None
    assert "ignoring the cached token table" in caplog.text
    C._CACHE.clear()
    rebuilt = C.token_table(tok)
    assert "vocab_trie" not in rebuilt._derived and rebuilt.token_bytes == table.token_bytes
    vocab_trie(rebuilt)  # written anew
    assert C.load(table.cache_key) is not None
    # a header edited in a well-formed file (its digest no longer matches) is refused
    head, arrays = C.load(table.cache_key)
    with open(entry, "wb") as f:
        np.savez(f, header=np.frombuffer(C.json.dumps(dict(head, kind="metaspace")).encode(), dtype=np.uint8), **arrays)
    assert C.load(table.cache_key) is None
    # another key's file renamed into place is refused too
    other = cache / f"{'0' * 64}.npz"
    entry.rename(other)
    assert C.load("0" * 64) is None


def test_concurrent_processes_share_one_valid_file(cache, tmp_path) -> None:
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        import luaguard.guard.table_cache as C
        C.MIN_IDS = 0
        from guard_support import byte_level_tokenizer
        from luaguard.guard.table_cache import token_table
        from luaguard.guard.vocab import vocab_trie
        t = token_table(byte_level_tokenizer())
        vocab_trie(t)
        print(t.cache_key)
    """)
    env = {"LUAGUARD_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "TOKENIZERS_PARALLELISM": "false"}
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env) for _ in range(3)]
    keys = {p.communicate(timeout=300)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs) and len(keys) == 1
    assert [e.stem for e in cache.glob("*.npz")] == [keys.pop().decode()] and not list(cache.glob("*.tmp"))


def test_caching_off(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LUAGUARD_CACHE_DIR", "off")
    assert C.cache_dir() is None and C.save("k", {}, {}) is None and C.load("k") is None
