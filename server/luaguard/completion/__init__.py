"""The completion product: a causal LM's guarded completions at a cursor.

Built on the guard (:mod:`luaguard.guard`: tables, automaton, mask engine, matcher), which
never imports this package: :mod:`.loading` (the model: a local folder, the Hugging Face
cache or the shipped demonstration model), :mod:`.hub` (``luaguard model pull/list``),
:mod:`.context` and :mod:`.fim` (the prompt: project facts, fill-in-the-middle formats),
:mod:`.generate` (the generation loop with the guard's mask at every step),
:mod:`.requests` (a request and its completion, plain data) and :mod:`.client` (a remote
OpenAI-compatible endpoint serving the guard, for the same requests).  Everything but
:mod:`.requests` and :mod:`.client` needs the ``guard`` extra
(:func:`luaguard.guard.missing_dependencies`).
"""
