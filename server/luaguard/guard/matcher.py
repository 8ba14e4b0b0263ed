"""The engine-neutral guard: per-sequence matchers over a shared automaton and mask cache.

Use from any decoding loop (Hugging Face ``generate``, a hand-written loop, a serving
engine's batch-level logits processor)::

    guard = Guard.for_model(tokenizer, vocab_size, project=index)   # once per model+project
    m = guard.matcher(prompt_text, scripts=index.instances_for_file(path))
    while True:
        mask = m.mask()                     # TokenMask for the next token
        mask.apply_(logits_row)             # banned ids -> -inf (or use mask.ids / mask.allow)
        token = pick(logits_row)
        if not m.consume(token):            # False only if the token was not allowed
            ...                             # (cannot happen after applying the mask)
        if m.finished: break                # EOS was consumed

    m.rollback(2)                           # undo the last two tokens (speculative decoding)

For batch engines (vLLM's batch-level logits processors) keep one :class:`Matcher` per
request: ``mask()`` is a dictionary lookup after the first time a state is seen, the
returned :class:`~.vocab.TokenMask` is immutable and shared, and ``consume``/``rollback``
touch only that request's matcher.  :class:`Cursor` is the immutable snapshot behind a
matcher (``Guard.advance(cursor, token)``), convenient for beam search where sequences fork.

**Priming.**  :meth:`Guard.start` reads the prompt: the linter's parser and resolver give
the prompt's locals bound to instance chains (:meth:`~.paths.PathSpace.analyze`),
the lexer gives the open brackets, and the automaton reads the last lines leniently (a
prompt may contain anything) to know exactly where the text stands (inside a name, a
string, a comment ...).

**Bindings.**  The automaton does not know variable names; at each token boundary inside
an identifier the matcher attaches the identifier's value (from the prompt bindings and the
locals the model declared so far), so the next ``.``/``:``/``[`` is checked against the
right instance.  An identifier that ends inside a token (``game:`` in one token of a
SentencePiece or large BPE vocabulary) is unknown to the mask walk, which therefore allows
what follows it; :meth:`Guard.mask` then re-reads, with the bindings, the allowed tokens in
which a bound name ends (found through an index of the vocabulary's identifier runs) and
bans those the exact reading refuses, so the mask and :meth:`Guard.advance` agree.
"""

from __future__ import annotations

import bisect
import itertools
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from ..contract import GuardContract
from ..luau import lexer as L
from ..luau.structure import EXPRESSION_PRECEDERS
from ..project.tree import Instance
from . import automaton as AU
from .automaton import GEN, LENIENT, Automaton, initial_state
from .bitmask import PackedMasks
from .brackets import prompt_frames
from .numbers import IdSet, collect_ids
from .paths import NOVAL, POISON, PathSpace, PrefixAnalysis
from .table_cache import token_table
from .token_bytes import TokenTable
from .vocab import MaskEngine, TokenMask

__all__ = ["Cursor", "Guard", "GuardOptions", "Matcher", "guard_for", "project_guard"]

_MAX_RESTART_LINES = 40


@dataclass(frozen=True)
class GuardOptions:
    """Guard switches.

    ``paths``: constrain instance paths; ``services``: constrain service names (off for
    a file outside the project's DataModel, where the linter reports unknown services as
    warnings: :meth:`~luaguard.project.index.ProjectIndex.outside_datamodel`);
    ``grounded_numbers``: constrain asset ids (:mod:`.numbers`); ``stop``: ``"balanced"``
    or ``"line"`` (see :class:`~.automaton.Automaton`).  Placeholders and brackets are
    always guarded.
    """

    paths: bool = True
    grounded_numbers: bool = False
    stop: str = "balanced"
    services: bool = True


class Cursor(NamedTuple):
    """Immutable matcher state after some tokens.

    ``state``: the automaton state; ``bindings``: variable name -> value (never mutated:
    a new dict is made on change); ``ident``: bytes of the identifier being read;
    ``names``: names of the ``local`` declaration being read; ``finished``: EOS consumed;
    ``generated``: bytes produced since priming; ``scopes``: ``(depth, name, value
    before)`` of the names bound inside blocks, by depth (see
    :meth:`~.paths.PathSpace.scoped_bindings`): when the automaton's frame stack falls
    below ``depth``, the name goes back to ``value before``.
    """

    state: tuple
    bindings: Mapping[str, int]
    ident: bytes = b""
    names: tuple[str, ...] = ()
    finished: bool = False
    generated: bytes = b""
    scopes: tuple = ()


class Guard:
    """Shared part of the guard for one (project, options, token table).

    Build it with :func:`guard_for` / :meth:`for_model` (cached), then create one
    :class:`Matcher` (or :class:`Cursor`) per sequence.  Thread-safe.
    """

    def __init__(self, automaton: Automaton, table: TokenTable) -> None:
        self.automaton = automaton
        self.space = automaton.space
        self.table = table
        self.engine = MaskEngine(automaton, table)
        self._primed: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        # (state, token id) -> what reading the token does (see _token_effect, plus the
        # token's bytes), None (rejected) or _EVENTS; bounded
        self._effects: dict[tuple[tuple, int], tuple | None] = {}
        # identifier runs that end inside tokens (see _MidIndex: one per token table, built
        # here, not inside a decoding step); the summaries of bindings objects; corrected masks
        self._mid_index: _MidIndex = _mid_index(table)
        self._mid_cands: dict[int, tuple[Mapping[str, int], tuple | None]] = {}
        self._mid_masks: dict[tuple, TokenMask] = {}
        self._packed: dict[tuple[str, int], PackedMasks] = {}

    @classmethod
    def for_model(cls, tokenizer: Any, vocab_size: int | None = None, contract: GuardContract | None = None, *,
                  options: GuardOptions | None = None, ids: Iterable[str] = (),
                  eos_ids: Sequence[int] | None = None) -> Guard:
        """The (cached) guard of ``tokenizer`` (logits width ``vocab_size``; ``eos_ids``:
        default the tokenizer's EOS) for ``contract`` (``Engine(root).guard_contract(path)``:
        the project, its run-time names and the file, as the linter sees them; ``None``: no
        project).  See :func:`project_guard`."""
        return project_guard(token_table(tokenizer, vocab_size, eos_ids=eos_ids), contract, options, ids)

    # -- sequences -------------------------------------------------------------------------
    def start(self, prompt: str, *, scripts: Sequence[Instance] = (), analysis: PrefixAnalysis | None = None,
              shift: int = 0) -> Cursor:
        """The cursor after reading ``prompt`` (the exact text the model continues).

        ``scripts`` are the instances of the file being completed (``script`` resolves to
        them).  ``analysis`` may pass an already made :meth:`~.paths.PathSpace.analyze` of
        the end of ``prompt`` that starts at offset ``shift`` (saves parsing it again).  The
        last 32 primed prompts are cached.  Never raises on any prompt text.
        """
        key = (hash(prompt), len(prompt), tuple(id(x) for x in scripts))
        with self._lock:
            got = self._primed.get(key)
            if got is not None and got[0] == prompt:
                self._primed.move_to_end(key)
                return got[1]
        cur = _prime(self, prompt, list(scripts), analysis, shift)
        with self._lock:
            self._primed[key] = (prompt, cur)
            while len(self._primed) > 32:
                self._primed.popitem(last=False)
        return cur

    def matcher(self, prompt: str, *, scripts: Sequence[Instance] = (), analysis: PrefixAnalysis | None = None,
                shift: int = 0) -> Matcher:
        """A new :class:`Matcher` primed with ``prompt`` (see :meth:`start`)."""
        return Matcher(self, self.start(prompt, scripts=scripts, analysis=analysis, shift=shift))

    def advance(self, cur: Cursor, token_id: int) -> Cursor | None:
        """The cursor after ``token_id``, or ``None`` when the guard does not allow it.

        EOS is allowed only where :meth:`eos_ok`; special tokens and ids without bytes never.
        What a token does from a state is cached (:func:`_token_effect`), so a token read
        before from the same state costs one look-up, not one automaton step per byte.
        """
        if cur.finished:
            return None
        # the look-up first: a token read before from this state (the common case inside the
        # decoding loop, where every Python statement costs ~0.4 us: bench/README.md §6) needs
        # none of the checks below, which a cached effect has passed
        key = (cur.state, token_id)
        eff = self._effects.get(key, _MISSING)
        if eff is _MISSING:
            table = self.table
            if token_id in table.eos_ids:
                return cur._replace(finished=True) if self.automaton.eos_ok(cur.state) else None
            if not 0 <= token_id < table.size:
                return None
            data = table.token_bytes[token_id]
            if not data:
                return None
            eff = _token_effect(self.automaton, cur.state, data)
            if eff is not None and eff is not _EVENTS:
                eff = eff + (data,)
            if len(self._effects) > 200_000:
                self._effects.clear()
            self._effects[key] = eff
        if eff is None:
            return None
        if eff is _EVENTS:
            return _feed(self, cur, self.table.token_bytes[token_id], GEN)
        st, how_ident, a, z, mids, low, data = eff
        scopes = cur.scopes
        if (mids and _any_bound(mids, cur)) or (scopes and low < scopes[-1][0]):
            # a bound name ends inside the token, or a block with names bound in it closes
            return _feed(self, cur, data, GEN)
        ident = cur.ident if how_ident == 0 else (cur.ident + data[:z] if how_ident == 1 else data[a:z])
        if st[0] == AU.M_IDENT:
            st = _attach(st, ident, cur.bindings)
        return _new_cursor(Cursor, (st, cur.bindings, ident, cur.names, False, cur.generated + data, scopes))

    def warm(self, sequences: Iterable[Sequence[int]], *, scripts: Sequence[Instance] = (),
             budget_s: float = 5.0) -> int:
        """Fill the mask cache by reading token id sequences (e.g. the project's own files,
        tokenized): each token's mask is computed, then the token is consumed; where the guard
        would not allow a token (an invalid path in the text), reading restarts after it from
        the text so far.  Stops after ``budget_s`` seconds; returns the tokens read."""
        import time

        deadline = time.monotonic() + budget_s
        n = 0
        for ids in sequences:
            cur = self.start("", scripts=scripts)
            for i, tok in enumerate(ids):
                if time.monotonic() > deadline:
                    return n
                self.mask(cur)
                n += 1
                nxt = self.advance(cur, tok)
                if nxt is None or nxt.finished:
                    nxt = self.start(self.table.text_of(ids[: i + 1]), scripts=scripts)
                cur = nxt
        return n

    def eos_ok(self, cur: Cursor) -> bool:
        """May the text stop after ``cur`` (EOS allowed)?"""
        return (not cur.finished) and self.automaton.eos_ok(cur.state)

    def complete_ok(self, cur: Cursor) -> bool:
        """Is every token finished and checked after ``cur`` (a safe point to cut a
        generation that hit its token or time limit)?"""
        return cur.finished or self.automaton.complete_ok(cur.state)

    def keep(self, start: Cursor, ids: Sequence[int]) -> int:
        """How many of ``ids`` (generated after ``start``) to keep: all when they end with
        EOS, else up to the last point where :meth:`complete_ok` holds."""
        cur: Cursor | None = start
        best = 0
        for n, tok in enumerate(ids, 1):
            cur = self.advance(cur, tok)
            if cur is None:
                return best
            if cur.finished:
                return n
            if self.automaton.complete_ok(cur.state):
                best = n
        return best

    def mask(self, cur: Cursor) -> TokenMask:
        """The :class:`~.vocab.TokenMask` for the token after ``cur``: the engine's mask of
        ``cur.state``, less the tokens in which a name bound in ``cur`` ends and that
        :meth:`advance` refuses (see the module docstring); such corrected masks are cached
        per (state, identifier read, values of the names concerned)."""
        m = self.engine.mask_after(cur.state)
        got = self._mid_candidates(cur)
        if got is None:
            return m
        key = (cur.state, got[0])
        fixed = self._mid_masks.get(key)
        if fixed is None:
            fixed = self._mid_fix(cur, m, got[1])
            if len(self._mid_masks) > 4096:
                self._mid_masks.clear()
            self._mid_masks[key] = fixed
        return fixed

    def mask_key(self, cur: Cursor) -> tuple:
        """What :meth:`mask` of ``cur`` depends on: two cursors with equal keys have the same
        mask (the automaton state, and the signature of the bound names that end inside
        tokens there).  Computes no mask."""
        got = self._mid_candidates(cur)
        return (cur.state, None if got is None else got[0])

    def packed(self, device: Any, width: int) -> PackedMasks:
        """The :class:`~.bitmask.PackedMasks` of this guard for logits ``width`` ids wide on
        ``device`` (one per device and width, made on first use)."""
        key = (str(device), int(width))
        got = self._packed.get(key)
        if got is None:
            with self._lock:
                got = self._packed.get(key)
                if got is None:
                    got = self._packed[key] = PackedMasks(self, device, width)
        return got

    def cached_mask(self, cur: Cursor) -> TokenMask | None:
        """The mask for the token after ``cur`` when the engine has it at hand (one look-up
        by full state, and one more where bound names end inside tokens), else ``None`` -
        nothing is computed."""
        m = self.engine.cached_after(cur.state)
        if m is None:
            return None
        got = self._mid_candidates(cur)
        if got is None:
            return m
        return self._mid_masks.get((cur.state, got[0]))

    def _mid_candidates(self, cur: Cursor) -> tuple[tuple, np.ndarray] | None:
        """``(signature, ids)``: the token ids in which a name bound (to a value other than
        :data:`~.paths.NOVAL`) in ``cur`` would end inside the token - the rest of the
        identifier being read followed by a non-identifier byte, or a whole identifier run
        inside the token - and the signature those ids and their reading depend on (the
        identifier read, where it matters, and the names' values); ``None`` when there is
        none.  Two dictionary look-ups: what a bindings object gives is summarised once
        (:meth:`_MidIndex.summary`)."""
        bindings = cur.bindings
        if not bindings:
            return None
        got = self._mid_cands.get(id(bindings))
        if got is None or got[0] is not bindings:
            got = (bindings, self._mid_index.summary(bindings))
            if len(self._mid_cands) > 1024:
                self._mid_cands.clear()
            self._mid_cands[id(bindings)] = got
        summary = got[1]
        if summary is None:
            return None
        whole, by_prefix = summary
        if cur.state[0] == AU.M_IDENT:
            return by_prefix.get(cur.ident, whole[1])
        return whole[0]

    def _mid_fix(self, cur: Cursor, m: TokenMask, cands: np.ndarray) -> TokenMask:
        """``m`` less the ids of ``cands`` it allows and :meth:`advance` refuses."""
        held = np.isin(cands, m.ids, assume_unique=True)
        allowed = cands[held] if m.allow else cands[~held]
        bad = [int(t) for t in allowed if self.advance(cur, int(t)) is None]
        if not bad:
            return m
        if m.n_allowed == len(bad) and not m.eos:
            # nothing left but EOS: a dead end, where the guard lets the model stop (as the
            # engine's masks do, see TokenMask.dead_end)
            eos = np.array(sorted(self.table.eos_ids), dtype=np.int64)
            return TokenMask(True, eos, m.size, len(eos), True, True)
        return m.banning(np.array(bad, dtype=np.int64))


class Matcher:
    """One sequence: ``consume(token_id)``, ``mask()`` for the next token, ``rollback(n)``.

    ``finished`` becomes True when EOS is consumed; ``text`` is the generated text so far
    (UTF-8, replacement characters for an incomplete multi-byte character).
    """

    def __init__(self, guard: Guard, cursor: Cursor) -> None:
        self.guard = guard
        self._history: list[Cursor] = [cursor]

    @property
    def cursor(self) -> Cursor:
        return self._history[-1]

    @property
    def finished(self) -> bool:
        return self._history[-1].finished

    @property
    def text(self) -> str:
        return self._history[-1].generated.decode("utf-8", "replace")

    def __len__(self) -> int:
        """Tokens consumed since priming."""
        return len(self._history) - 1

    def mask(self) -> TokenMask:
        """Allowed/banned ids for the next token (EOS included when the text may stop)."""
        return self.guard.mask(self._history[-1])

    def cached_mask(self) -> TokenMask | None:
        """:meth:`mask` when the guard has it at hand, else ``None`` (nothing is computed)."""
        return self.guard.cached_mask(self._history[-1])

    def eos_allowed(self) -> bool:
        return self.guard.eos_ok(self._history[-1])

    def complete_ok(self) -> bool:
        """True at a safe point to cut the generation (see :meth:`Guard.complete_ok`)."""
        return self.guard.complete_ok(self._history[-1])

    def consume(self, token_id: int) -> bool:
        """Advance by one token; False (and no change) when the token is not allowed."""
        nxt = self.guard.advance(self._history[-1], int(token_id))
        if nxt is None:
            return False
        self._history.append(nxt)
        return True

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` consumed tokens (``ValueError`` if fewer were consumed)."""
        if n < 0 or n > len(self._history) - 1:
            raise ValueError(f"cannot roll back {n} tokens, {len(self._history) - 1} consumed")
        if n:
            del self._history[-n:]

    def fork(self) -> Matcher:
        """An independent matcher at the same point (shares the immutable history)."""
        m = Matcher(self.guard, self._history[-1])
        return m


# ------------------------------------------------------------------------------------------
# feeding bytes
# ------------------------------------------------------------------------------------------


def _feed(guard: Guard, cur: Cursor, data: bytes, how: int) -> Cursor | None:
    """Run ``data`` through the automaton; process declaration events; attach bindings."""
    au = guard.automaton
    step = au.cached_step
    st = cur.state
    ident = cur.ident
    names = cur.names
    bindings = cur.bindings
    scopes = cur.scopes
    idchar = AU._IDCHAR
    fixed = au.ident_fixed
    n = len(data)
    i = 0
    while i < n:
        b = data[i]
        was_ident = st[0] == AU.M_IDENT
        if was_ident and idchar[b] and fixed(st):
            # the rest of the run of identifier bytes leaves the state as it is
            j = _ident_run_end(data, i)
            ident = ident + data[i:j]
            i = j
            continue
        i += 1
        if was_ident and not idchar[b]:
            # an identifier that ends inside the text gets its value (the mask walk leaves
            # it unknown and Guard.mask re-reads such tokens where the name is bound)
            st = _attach(st, ident, bindings)
        ns = step(st, b, how)
        if ns is None:
            return None
        if scopes and len(ns[AU.STACK]) < scopes[-1][0]:
            bindings, scopes = _leave(bindings, scopes, len(ns[AU.STACK]))
        if ns[AU.EV]:
            for ev in ns[AU.EV]:
                kind = ev[0]
                if kind == "start":
                    names = ()
                elif kind == "name" or kind == "param":
                    name = ident.decode("utf-8", "replace")
                    if kind == "name":
                        names = names + (name,)
                    bindings, scopes = _declare(bindings, scopes, name, ev[1])
                elif kind == "bind":
                    _idx, value, confused = ev[1], ev[2], ev[3]
                    targets = names if confused else names[_idx:_idx + 1]
                    if confused and value != NOVAL:
                        value = POISON
                    if targets:
                        bindings = _bind(bindings, targets, value)
            ns = ns[:AU.EV] + ((),)
        if ns[0] == AU.M_IDENT:
            ident = ident + bytes((b,)) if was_ident else bytes((b,))
        st = ns
    st = _attach(st, ident, bindings)
    gen = cur.generated + data if how & GEN else cur.generated
    return Cursor(st, bindings, ident, names, False, gen, scopes)


_KW_AT = AU._KW_AT
_MISSING = object()
_EVENTS = ("events",)  # a token whose reading emits declaration events: read by _feed
_new_cursor = tuple.__new__  # Cursor(...) without the named tuple's Python-level __new__


def _ident_run_end(data: bytes, i: int) -> int:
    """The end of the run of identifier bytes of ``data`` that starts at ``i`` (a reader
    skips it from a state :meth:`~.automaton.Automaton.ident_fixed` calls fixed)."""
    idchar = AU._IDCHAR
    n = len(data)
    i += 1
    while i < n and idchar[data[i]]:
        i += 1
    return i


def _token_effect(au: Automaton, state: tuple, data: bytes) -> tuple | None:
    """What reading generated token bytes ``data`` from ``state`` does, independently of the
    cursor's bindings and identifier: ``None`` (rejected), :data:`_EVENTS` (declaration
    events fire: :func:`_feed` must read it), or ``(state, how, a, z, mids, low)`` - the state
    before the boundary's value is attached and the identifier afterwards: the old one
    (``how`` 0), the old one + ``data[:z]`` (1) or ``data[a:z]`` (2), exactly as
    :func:`_feed` tracks it; ``mids``: the identifiers that end inside the token, as
    ``(lead, bytes)`` (``lead``: the identifier being read continues into ``bytes``), read
    here without their values: where one of them is bound, :func:`_feed` reads the token;
    ``low``: the fewest frames open at any point of the token (where that closes a block
    with names bound in it, :func:`_feed` reads the token).  Cached per (state, token) by :meth:`Guard.advance`: a generated token then
    costs one look-up instead of one automaton step per byte."""
    # (the automaton's own steps, not its memo: a new effect mostly meets new states, where
    # the memo's key - the whole state, hashed per byte - cost more than it saved: consume
    # over guard_eval's sampled sequences, cold, 44-47 -> 33-34 ms)
    step = au.step
    fixed = au.ident_fixed
    idchar = AU._IDCHAR
    st = state
    how_ident, a, z = 0, 0, 0
    mids: tuple = ()
    low = len(state[AU.STACK])
    n = len(data)
    i = 0
    while i < n:
        b = data[i]
        was_ident = st[0] == AU.M_IDENT
        if was_ident and idchar[b] and fixed(st):
            # the rest of the run of identifier bytes leaves the state as it is
            i = z = _ident_run_end(data, i)
            if how_ident == 0:
                how_ident = 1
            continue
        if was_ident and i and not idchar[b] and st[AU.PAY][0] not in _KW_AT:
            mids = mids + ((how_ident != 2, data[:z] if how_ident != 2 else data[a:z]),)
        ns = step(st, b, GEN)
        if ns is None:
            return None
        if ns[AU.EV]:
            return _EVENTS
        if ns[0] == AU.M_IDENT:
            if was_ident:
                z = i + 1
                if how_ident == 0:
                    how_ident = 1
            else:
                how_ident, a, z = 2, i, i + 1
        if len(ns[AU.STACK]) < low:
            low = len(ns[AU.STACK])
        st = ns
        i += 1
    return (st, how_ident, a, z, mids, low)


def _any_bound(mids: tuple, cur: Cursor) -> bool:
    """Is one of the identifiers ``mids`` of :func:`_token_effect` bound in ``cur``?"""
    bindings = cur.bindings
    if not bindings:
        return False
    for lead, raw in mids:
        name = (cur.ident + raw if lead else raw).decode("utf-8", "replace")
        if bindings.get(name, NOVAL) != NOVAL:
            return True
    return False


class _MidIndex:
    """The vocabulary's identifier runs that end inside a token, for :meth:`Guard.mask`.

    ``lead``: run of identifier bytes a token starts with and that a non-identifier byte of
    the token ends -> ids (``b"game"`` for ``game:``); ``inner``: identifier run (a letter
    or ``_`` after a non-identifier byte, up to a non-identifier byte) that starts and ends
    inside a token -> ids (``b"game"`` for `` game.``).  Over-approximate on purpose (a run
    inside a string or after ``.`` is listed too): every candidate is re-read exactly.
    Built in one pass over the token bytes (~0.1 s for 150k tokens).
    """

    _INNER = re.compile(rb"(?<=[^A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*(?=[^A-Za-z0-9_])")
    _LEAD = re.compile(rb"[A-Za-z0-9_]+(?=[^A-Za-z0-9_])")

    def __init__(self, token_bytes: Sequence[bytes | None]) -> None:
        lead: dict[bytes, list[int]] = {}
        inner: dict[bytes, list[int]] = {}
        for tid, data in enumerate(token_bytes):
            if not data or len(data) < 2:
                continue
            m = self._LEAD.match(data)
            if m is not None:
                lead.setdefault(m.group(), []).append(tid)
            for m in self._INNER.finditer(data):
                inner.setdefault(m.group(), []).append(tid)
        self.lead = lead
        self.inner = inner

    def summary(self, bindings: Mapping[str, int]) -> tuple | None:
        """What :meth:`Guard._mid_candidates` needs of ``bindings``: ``((outside,
        inner_only), by_prefix)`` - the candidates outside an identifier (inner runs and
        tokens that start with a bound name), those of inner runs alone (inside an
        identifier no bound name continues), and per identifier prefix ``p`` being read
        the candidates when a bound name is ``p`` + the lead run of a token; ``None`` when
        no bound name ends inside any token."""
        inner_ids: list[int] = []
        inner_sig: list[tuple[str, int]] = []
        lead0_ids: list[int] = []
        lead0_sig: list[tuple[str, int]] = []
        prefixed: dict[bytes, tuple[list[int], list[tuple[str, int]]]] = {}
        for name, value in bindings.items():
            if value == NOVAL:
                continue
            raw = name.encode("utf-8")
            got = self.inner.get(raw)
            if got:
                inner_ids.extend(got)
                inner_sig.append((name, value))
            got = self.lead.get(raw)
            if got:
                lead0_ids.extend(got)
                lead0_sig.append((name, value))
            for k in range(1, len(raw)):
                got = self.lead.get(raw[k:])
                if got:
                    ids, sig = prefixed.setdefault(raw[:k], ([], []))
                    ids.extend(got)
                    sig.append((name, value))
        if not inner_ids and not lead0_ids and not prefixed:
            return None

        def pack(ident, ids, sig):
            if not ids:
                return None
            return (ident, tuple(sorted(set(sig)))), np.unique(np.array(ids, dtype=np.int64))

        inner_only = pack(None, inner_ids, inner_sig)
        outside = pack(None, inner_ids + lead0_ids, inner_sig + lead0_sig)
        by_prefix = {p: pack(p, inner_ids + ids, inner_sig + sig) for p, (ids, sig) in prefixed.items()}
        return (outside, inner_only), by_prefix


_MID_INDEXES: dict[int, tuple[TokenTable, _MidIndex]] = {}
#: its own lock: :func:`guard_for` creates guards (and so indexes) while holding ``_LOCK``
_MID_LOCK = threading.Lock()


def _mid_index(table: TokenTable) -> _MidIndex:
    """The (cached) :class:`_MidIndex` of a token table (~0.13 s at 152k tokens)."""
    with _MID_LOCK:
        got = _MID_INDEXES.get(id(table))
        if got is not None and got[0] is table:
            return got[1]
    index = _MidIndex(table.token_bytes)
    with _MID_LOCK:
        if len(_MID_INDEXES) > 8:
            _MID_INDEXES.clear()
        _MID_INDEXES[id(table)] = (table, index)
    return index


def _bind(bindings: Mapping[str, int], names: Iterable[str], value: int) -> Mapping[str, int]:
    """Bind declared ``names`` (already in scope: see :func:`_declare`) to ``value``."""
    if value == NOVAL:
        return bindings
    out = dict(bindings)
    for name in names:
        out[name] = value
    return out


def _declare(bindings: Mapping[str, int], scopes: tuple, name: str, depth: int) -> tuple[Mapping[str, int], tuple]:
    """A local ``name`` comes into scope in the frame at ``depth`` (0: the chunk): it hides
    an outer binding of the name (its value, if any, is bound later by a ``bind`` event);
    inside a block, the binding before it is logged for :func:`_leave`."""
    old = bindings.get(name)
    if depth > 0:
        entry = (depth, name, old)
        if not scopes or scopes[-1][0] <= depth:
            scopes = scopes + (entry,)
        else:  # (kept in order of depth)
            at = bisect.bisect_right([e[0] for e in scopes], depth)
            scopes = scopes[:at] + (entry,) + scopes[at:]
    if old is not None:
        bindings = dict(bindings)
        del bindings[name]
    return bindings, scopes


def _leave(bindings: Mapping[str, int], scopes: tuple, depth: int) -> tuple[Mapping[str, int], tuple]:
    """Frames down to ``depth`` remain open: names bound in the blocks that closed get back
    the bindings they hid."""
    out = dict(bindings)
    while scopes and scopes[-1][0] > depth:
        _d, name, old = scopes[-1]
        scopes = scopes[:-1]
        if old is None:
            out.pop(name, None)
        else:
            out[name] = old
    return out, scopes


def _attach(st: tuple, ident: bytes, bindings: Mapping[str, int]) -> tuple:
    """At a token boundary inside an identifier, attach the identifier's value."""
    if st[0] != AU.M_IDENT:
        return st
    kw, _attach_v, juxt, tail = st[AU.PAY]
    decl = st[AU.DECL]
    if decl is not None and decl[0] == AU.D_EXPECT_NAME and len(st[AU.STACK]) == decl[3]:
        value = NOVAL  # a name being declared, not a reference
    else:
        value = bindings.get(ident.decode("utf-8", "replace"), NOVAL)
    return (AU.M_IDENT, (kw, value, juxt, tail)) + st[2:]


# ------------------------------------------------------------------------------------------
# priming
# ------------------------------------------------------------------------------------------

_CONT_START = frozenset({".", ":", "[", "(", "{", L.STRING, L.LONG_STRING, L.INTERP_BEGIN, L.INTERP_SIMPLE, "::", ".."})
_PREV_OF = {
    L.NAME: AU.P_NAME, ")": AU.P_CALLABLE, "]": AU.P_CALLABLE, L.STRING: AU.P_STRING,
    L.LONG_STRING: AU.P_STRING, L.INTERP_SIMPLE: AU.P_STRING, L.INTERP_END: AU.P_STRING,
    L.NUMBER: AU.P_VAL, "true": AU.P_VAL, "false": AU.P_VAL, "nil": AU.P_VAL, "...": AU.P_VAL, "}": AU.P_VAL,
    "local": AU.P_LOCAL, "function": AU.P_FUNCTION,
}


def _prev_class(tok: L.Token | None, expr_next: bool) -> int:
    if tok is None:
        return AU.P_NONE
    k = tok.kind
    if k in _PREV_OF:
        return _PREV_OF[k]
    if k in ("then", "else"):
        return AU.P_THEN_EXPR if expr_next else AU.P_THEN_STMT
    if k in EXPRESSION_PRECEDERS:
        return AU.P_PRE
    return AU.P_OTHER


def _read_whole(analysis: PrefixAnalysis) -> list[tuple[int, int]]:
    """The spans of the analysed text the automaton must read from their start, sorted: the
    parse's type regions (annotations, type aliases, function headers: it must know it
    reads a type) and the ``local`` declarations with values (it binds the names when the
    declaration ends, to the value it read: begun inside one, it would leave them as the
    prompt's end had them - ``local x = (`` then ``game.Workspace)`` - or unknown)."""
    return sorted([*analysis.type_regions, *((f.start, f.end) for f in analysis.locals if f.has_values)])


def _restart(text: str, lex: L.LexResult, regions: Sequence[tuple[int, int]] = ()) -> int:
    """A point near the end where the automaton can begin reading: a line start (or the
    start of a comment or string spanning it), not continuing an expression chain from the
    previous line (nor the text's end after a name or call the model may continue), and
    not inside one of ``regions`` (sorted spans it must read from their start: see
    :func:`_read_whole`).  Looks at the tokens near the end only (binary searches: the
    lexer's tokens and comments are in text order and do not overlap)."""
    tokens = lex.tokens  # (ends with the EOF token)
    comments = lex.comments
    n = len(tokens) - 1
    pos = len(text)
    cand = 0
    starts = [a for a, _z in regions]
    # furthest end of the regions so far; one that ends with the text's last token holds the
    # text's end too (what the model writes next may go on with it: `local x = (` + `a)`)
    last = tokens[n - 1].end if n else 0
    reach = list(itertools.accumulate((z if z < last else len(text) + 1 for _a, z in regions), max))
    lines = 0
    while lines < _MAX_RESTART_LINES:
        nl = text.rfind("\n", 0, pos)
        cand = nl + 1 if nl >= 0 else 0
        # a comment or a token (a multi-line string) spanning the line start: begin at its start
        j = bisect.bisect_left(comments, cand, key=_start) - 1
        if j >= 0 and comments[j].start < cand and (cand < comments[j].end or _open_at_end(comments[j], text)):
            cand = comments[j].start
        else:
            j = bisect.bisect_left(tokens, cand, 0, n, key=_start) - 1
            if j >= 0 and tokens[j].start < cand and (cand < tokens[j].end or _open_at_end(tokens[j], text)):
                cand = tokens[j].start
        r = bisect.bisect_left(starts, cand) - 1
        if r >= 0 and reach[r] > cand:
            pos = cand - 1  # inside a type region: further back, however far
            continue
        i = bisect.bisect_left(tokens, cand, 0, n, key=_start)
        if _fresh_line(tokens[i] if i < n else None, tokens[i - 1] if i > 0 else None):
            return cand
        if cand == 0:
            return 0
        pos = cand - 1
        lines += 1
    return cand


def _open_at_end(tok: L.Token, text: str) -> bool:
    """Is ``tok`` a long comment or long string the text ends inside (no closer yet)?"""
    if tok.end != len(text):
        return False
    t = tok.text
    m = _LONG_OPEN.match(t)
    return m is not None and not t.endswith("]" + m.group(1) + "]")


_LONG_OPEN = re.compile(r"(?:--)?\[(=*)\[")


def _fresh_line(first: L.Token | None, before: L.Token | None) -> bool:
    """May the automaton begin reading at a line start whose first token is ``first``, after
    token ``before``?  Not where the line goes on with an expression chain (``.Name``,
    ``:Method``, ``(args)``, a string call...) or the previous line ended with ``.``, ``:``
    or ``::``; nor at the text's end (no ``first``) after a name, ``)`` or ``]``: what the
    model writes next may go on with that chain (``:andThen(...)`` on a new line), whose
    value only a reading from its start knows."""
    if before is None:
        return first is None or first.kind not in _CONT_START
    if first is None:
        return before.kind not in _CHAIN_END
    return first.kind not in _CONT_START and before.kind not in (".", ":", "::")


_CHAIN_END = frozenset({L.NAME, ")", "]", ".", ":", "::"})


def _start(t: L.Token) -> int:
    return t.start


def _shared_lex(prompt: str, analysis: PrefixAnalysis | None, shift: int) -> L.LexResult | None:
    """The analysis' lexing of ``prompt[shift:]`` (``analysis.text``) when the guard may use
    it for the whole prompt: the analysed text is that tail and the part in front (the
    facts header) is line comments only, ending with a line break, so it adds no token,
    frame or open text."""
    if analysis is None or analysis.lex is None or analysis.text is None:
        return None
    if len(analysis.text) != len(prompt) - shift or not prompt.endswith(analysis.text):
        return None
    if shift:
        head = prompt[:shift]
        if not head.endswith("\n"):
            return None
        hl = L.tokenize(head)
        if len(hl.tokens) != 1 or hl.errors or any(c.text.startswith("--[") for c in hl.comments):
            return None
    return analysis.lex


def _prime(guard: Guard, prompt: str, scripts: list[Instance], analysis: PrefixAnalysis | None, shift: int) -> Cursor:
    space = guard.space
    lex = _shared_lex(prompt, analysis, shift) if analysis is not None else None
    rel = _restart(analysis.text, lex, _read_whole(analysis)) if lex is not None else 0
    if rel == 0:
        # the parse's facts (and the bindings) of the whole prompt (at the analysed text's
        # start the reading would go on into the header in front of it)
        analysis, shift = space.analyze(prompt, scripts), 0
        lex = analysis.lex
        rel = _restart(analysis.text, lex, _read_whole(analysis))
    text = analysis.text
    restart = shift + rel
    tokens = lex.tokens[:-1]  # (the lexer's tokens end with one EOF token; offsets into text)
    n_before = bisect.bisect_left(tokens, restart - shift, key=_start)  # tokens before the restart point
    stack, ifx, expr_next, openers = prompt_frames(tokens, n_before, analysis.if_expressions,
                                                   analysis.vararg_functions)
    scopes: tuple = ()
    if guard.automaton.paths:
        bindings, scopes = space.scoped_bindings(analysis, scripts, before=restart, shift=shift, openers=openers)
    else:
        bindings = {}
    before = tokens[n_before - 1] if n_before else None
    prev = _prev_class(before, expr_next)
    if before is not None and analysis.type_regions:
        prev = _after_region(text, analysis.type_regions, before, prev)
    val = POISON if prev in (AU.P_NAME, AU.P_CALLABLE) else NOVAL
    flags = AU.F_NL  # (a line start, or the text's start: no code before on the line)
    if _after_comment_line(text, lex, restart - shift, before):
        flags |= AU.F_CMT
    state = initial_state(prev, stack, val=val, flags=flags, ifx=ifx)
    cur = Cursor(state, bindings, scopes=scopes)
    tail = prompt[restart:].encode("utf-8")
    got = _feed(guard, cur, tail, LENIENT)
    assert got is not None  # lenient reading never rejects
    return got._replace(generated=b"")


def _after_region(text: str, regions: Sequence[tuple[int, int]], before: L.Token, prev: int) -> int:
    """The previous-token class where ``before`` ends a type region of the parse (offsets
    into ``text``): what the automaton resumes with after reading that region - a value
    after a cast ``x :: T``, a name after an annotation ``local x: T``, a finished
    statement after an alias, a function header's end (``P_PEND``, or after a return type
    ``P_OTHER``) - not the class of the region's last token (``>`` of ``Map<K, V>`` is no
    operator that an expression follows); ``prev`` where it ends none."""
    end = before.end
    for start, z in regions:
        if z == end:
            head = text[start:start + 2]
            if head == "::":
                return AU.P_VAL
            if head[:1] == ":":
                return AU.P_NAME
            if text.startswith(("type", "export"), start):
                return AU.P_OTHER
            return AU.P_PEND if before.kind == ")" else AU.P_OTHER
    return prev


def _after_comment_line(text: str, lex: L.LexResult, at: int, before: L.Token | None) -> bool:
    """Does a line comment end the line before offset ``at`` (a line start), with no token
    after it (the linter's comment-paragraph context, :data:`~.automaton.F_CMT`)?"""
    comments = lex.comments
    j = bisect.bisect_left(comments, at, key=_start) - 1
    if j < 0:
        return False
    c = comments[j]
    if c.kind != L.COMMENT or c.end > at or (before is not None and before.start > c.start):
        return False
    between = text[c.end:at]
    return not between.strip() and between.count("\n") <= 1 and ("\n" in between or "\r" in between)


# ------------------------------------------------------------------------------------------
# caches: kept on the project's snapshot (they die with it: a re-index or a change on disk
# gives a new snapshot, so nothing needs invalidating)
# ------------------------------------------------------------------------------------------

_LOCK = threading.Lock()
_EMPTY: list[PathSpace] = []
#: at most this many guards per path space (token tables x options)
_GUARDS_PER_SPACE = 16


def _snapshot_for(project, names):
    from ..analysis.snapshot import WorldNames, snapshot_of

    if isinstance(names, WorldNames) and names.snapshot is not None and names.snapshot.project is project:
        return names.snapshot
    return snapshot_of(project)


def path_space(project, runtime_names: Iterable[str] = (), *, services: bool = True) -> PathSpace:
    """The :class:`PathSpace` of ``project`` (``None``: the open empty project), the names
    its scripts create at run time (a :class:`~luaguard.analysis.snapshot.WorldNames`
    carrying the project's snapshot) and whether service names are checked: kept in the
    snapshot's :attr:`~luaguard.analysis.snapshot.Snapshot.memo`, one per ``services``
    (other names replace it)."""
    names = runtime_names if isinstance(runtime_names, frozenset) else frozenset(runtime_names)
    with _LOCK:
        if project is None:
            if not _EMPTY:
                _EMPTY.append(PathSpace(None))
            return _EMPTY[0]
        memo = _snapshot_for(project, names).memo
        key = ("path_space", services)
        got = memo.get(key)
        if got is not None and got.project is project and type(got.runtime_names) is type(names) \
                and got.runtime_names == names:
            return got
        sp = memo[key] = PathSpace(project, names, services=services)
        return sp


def project_guard(table: TokenTable, contract: GuardContract | None = None, options: GuardOptions | None = None,
                  ids: Iterable[str] = ()) -> Guard:
    """The guard of ``table`` with the linter's contract: the one constructor every front end
    uses (:meth:`Guard.for_model`, the language server's
    :class:`~luaguard.completion.generate.CompletionEngine`, the vLLM registry
    :class:`~luaguard.serving.registry.ServedProject`).

    ``contract`` comes from :meth:`luaguard.engine.Engine.guard_contract` (the project, the
    names its scripts create at run time, whether the file's service names are checked);
    ``options.services`` is taken from it.  The guard is cached (:func:`guard_for`): the
    same contract and options give the same guard."""
    c = contract if contract is not None else GuardContract()
    opts = options or GuardOptions()
    if opts.services != c.services:
        opts = replace(opts, services=c.services)
    return guard_for(table, c.project, opts, ids, c.runtime_names)


def guard_for(table: TokenTable, project=None, options: GuardOptions | None = None,
              ids: Iterable[str] = (), runtime_names: Iterable[str] = ()) -> Guard:
    """The cached :class:`Guard` for a token table, project and options.

    With ``options.grounded_numbers`` the allowed asset ids are those of the project's
    files plus ``ids`` (e.g. the digit runs of the prompt).  ``runtime_names``: the
    project's names carrying its snapshot (:class:`~luaguard.analysis.snapshot.WorldNames`),
    accepted where the linter accepts them.  The guard is kept with the path space on the
    project's snapshot: a new snapshot (a re-index, files changed on disk, a new index
    generation) gives new guards.
    """
    options = options or GuardOptions()
    space = path_space(project, runtime_names, services=options.services)
    au_space = space if options.paths else path_space(None)
    idset = None
    if options.grounded_numbers:
        root = getattr(project, "root_dir", None) if project is not None else None
        if project is None:
            project_ids = collect_ids(None, ())
        else:
            memo = space.snapshot.memo
            with _LOCK:
                project_ids = memo.get("asset_ids")
            if project_ids is None:
                project_ids = collect_ids(root, ())
                with _LOCK:
                    memo["asset_ids"] = project_ids
        idset = IdSet(project_ids | frozenset(ids))
    key = (id(table), options, idset.ids if idset is not None else None)
    with _LOCK:
        guards = space.guards
        g = guards.get(key)
        if g is None:
            if len(guards) >= _GUARDS_PER_SPACE:
                guards.clear()
            au = Automaton(au_space, ids=idset, stop=options.stop, paths=options.paths)
            g = Guard(au, table)
            g._keepalive = (space, table)  # the table's id in the key stays valid while cached
            guards[key] = g
        return g
