"""Token-byte tables (luaguard.guard.token_bytes) for locally trained tokenizers of both kinds."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

from guard_support import byte_level_tokenizer, metaspace_tokenizer, sample_texts
from luaguard.guard.table_cache import token_table
from luaguard.guard.token_bytes import (
    TokenizerKindError,
    bytes_to_unicode,
    pad_table,
)

SNIPPETS = [
    'local Players = game:GetService("Players")\n',
    "\tfor i, v in ipairs(list) do\n\t\tprint(`{i}: {v}`)\n\tend\n",
    "local s = [==[ long ]] string ]==] -- comment with ünïcödé and emoji 🎮\n",
    "x = 0x1F + 1e-3 // 2 .. 'q\\n'\r\n",
    "  \t  leading spaces and trailing   ",
]


def _random_texts(n: int = 20) -> list[str]:
    rng = random.Random(3)
    texts = sample_texts()
    out = []
    for _ in range(n):
        t = rng.choice(texts)
        a = rng.randrange(len(t))
        out.append(t[a: a + rng.randrange(1, 400)])
    return out


def test_bytes_to_unicode_is_a_bijection_over_bytes() -> None:
    m = bytes_to_unicode()
    assert sorted(m) == list(range(256))
    assert len(set(m.values())) == 256
    assert m[ord("A")] == "A" and m[ord(" ")] == "\u0120"  # GPT-2 writes a space as 'Ġ'


def test_byte_level_table_spells_every_encoding_exactly() -> None:
    tok = byte_level_tokenizer()
    table = token_table(tok)
    assert table.kind == "byte_level"
    assert table.size == len(tok)
    for text in SNIPPETS + _random_texts():
        ids = tok(text, add_special_tokens=False).input_ids
        assert b"".join(table.token_bytes[i] for i in ids) == text.encode("utf-8")
        assert table.text_of(ids) == text


def test_metaspace_table_spells_encodings_with_the_dummy_prefix_space() -> None:
    tok = metaspace_tokenizer()
    table = token_table(tok)
    assert table.kind == "metaspace"
    byte_tokens = [i for i in range(table.size) if tok.convert_ids_to_tokens(i).startswith("<0x")]
    assert len(byte_tokens) == 256
    assert all(table.token_bytes[i] is not None and len(table.token_bytes[i]) == 1 for i in byte_tokens)
    for text in SNIPPETS + _random_texts():
        ids = tok(text, add_special_tokens=False).input_ids
        got = b"".join(table.token_bytes[i] for i in ids)
        # SentencePiece prepends one "▁" to a text that does not start with a space
        want = text if text.startswith(" ") else " " + text
        assert got == want.encode("utf-8"), (text, got)


def test_special_tokens_and_padding_ids_have_no_bytes() -> None:
    tok = byte_level_tokenizer()
    table = token_table(tok, len(tok) + 7)
    assert table.size == len(tok) + 7
    assert table.eos_ids == frozenset({tok.eos_token_id})
    for i in tok.all_special_ids:
        assert table.token_bytes[i] is None
    assert all(b is None for b in table.token_bytes[len(tok):])
    ms = metaspace_tokenizer()
    mt = token_table(ms)
    for name in ("<s>", "</s>", "<unk>"):
        assert mt.token_bytes[ms.convert_tokens_to_ids(name)] is None


def test_tables_are_cached_per_tokenizer_and_size() -> None:
    tok = byte_level_tokenizer()
    assert token_table(tok) is token_table(tok)
    assert token_table(tok, len(tok) + 1) is not token_table(tok)


def test_pad_table_adds_synthetic_tokens() -> None:
    table = token_table(byte_level_tokenizer())
    big = pad_table(table, table.size + 10, [b"ab", b"cd"])
    assert big.size == table.size + 10 and big.synthetic == 10
    assert big.token_bytes[table.size] == b"ab" and big.token_bytes[table.size + 1] == b"cd"
    with pytest.raises(ValueError):
        pad_table(table, table.size - 1, [b"x"])


def test_slow_or_foreign_tokenizer_is_refused() -> None:
    class NotFast:
        def __len__(self) -> int:
            return 3

    with pytest.raises(TokenizerKindError):
        token_table(NotFast())
