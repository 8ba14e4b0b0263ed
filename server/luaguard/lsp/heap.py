"""The language server's garbage-collector policy around the project index.

CPython's cyclic collector traverses every tracked object on a full (generation 2)
collection, and starts one whenever a quarter more objects than at the last one have
survived.  A 50,000-file project's index, run-time-name tables and API data are a few
million long-lived objects: logged in the server under ``bench/scale.py`` at 50k files,
indexing ran six full collections of 28-180 ms (0.58 s in all), and one of 311-322 ms came
after indexing, where it can land inside the lint of a keystroke.  None of those objects is
garbage, so the server:

* builds an index with automatic collections paused and freezes what the build made
  (:func:`build_long_lived`): the next young collection does not wade through it, and
* once the new engine is in place, collects once and freezes what survives
  (:func:`settle_heap`, ``gc.freeze``): later collections skip the index entirely.  The
  completion feature does the same once the first completion has loaded the model (torch
  and transformers: 350k objects, a full collection of 190 ms, none once frozen).

Frozen objects are never collected, so :func:`settle_heap` unfreezes first: the index it
replaces (cycles of instances and their parents) and a superseded build are collected then.
Between two full indexes, the few instances an incremental update drops stay frozen until
the next one.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["build_long_lived", "settle_heap"]

T = TypeVar("T")
_LOCK = threading.Lock()  # freezing and settling never interleave (indexer vs completion worker)


def build_long_lived(build: Callable[..., T], *args: Any) -> T:
    """``build(*args)`` with automatic collections paused, then everything the process has
    allocated so far frozen (see the module docstring; :func:`settle_heap` must follow once
    the result is in use, to collect what it replaced).  The collector is restored as it
    was (left disabled if it was), also when ``build`` raises."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return build(*args)
    finally:
        with _LOCK:
            gc.freeze()
        if was_enabled:
            gc.enable()


def settle_heap() -> float:
    """Unfreeze, collect all garbage, then freeze every surviving object so that later
    automatic collections do not traverse it.  Returns the seconds it took (about 0.3 s
    with a 50k-file index; it holds the interpreter lock meanwhile)."""
    with _LOCK:
        t0 = time.perf_counter()
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        return time.perf_counter() - t0
