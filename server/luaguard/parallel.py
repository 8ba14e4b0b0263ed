"""Spreading ``luaguard check``'s files over worker processes, results in the order given.

A lint is pure Python and holds the interpreter lock, so threads do not help; processes do.
The parent builds everything shared first - the project indexes and the text scans of
every script (:meth:`warm`) - then forks: each worker starts with that state (copy on
write, never rebuilt) and lints the files it is handed.  Results come back in the order of
the input, so the output is the one a single process prints.  Each worker keeps its own
lazily computed facts about other files (the run-time world), as one process would: a
verdict never depends on which files a process linted before.

Workers are forked (``fork`` start method): where the platform has none, or on macOS
(where forking a process that may hold system frameworks is unsafe), the work runs in the
calling process.  ``jobs`` of 1 (``luaguard check --jobs 1``) does too.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
from typing import Callable, Iterator, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["default_jobs", "map_ordered", "warm"]

#: below this many files a single process is as fast (a fork and its results cost ~10 ms)
MIN_FILES = 4

# the work of the current pool, inherited by its forked workers: (function, items)
_WORK: tuple[Callable, Sequence] | None = None


def default_jobs() -> int:
    """The CPUs this process may run on (its affinity mask; ``os.cpu_count()`` where the
    platform has none), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _can_fork() -> bool:
    return sys.platform != "darwin" and "fork" in multiprocessing.get_all_start_methods()


def _run(i: int):
    fn, items = _WORK  # type: ignore[misc]
    return fn(items[i])


def map_ordered(fn: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[R]:
    """``fn(item)`` for each of ``items``, yielded in their order, computed by up to
    ``jobs`` forked worker processes (see the module docstring).  ``fn`` runs in the
    workers with the state the caller had when the first result was asked for; what it
    returns must pickle.  With ``jobs`` <= 1, fewer than :data:`MIN_FILES` items or no
    ``fork``, runs in this process.  An exception in ``fn`` is raised here."""
    global _WORK
    n = len(items)
    jobs = min(jobs, n)
    if jobs <= 1 or n < MIN_FILES or not _can_fork() or _WORK is not None:
        for item in items:
            yield fn(item)
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # (a forked worker must not inherit half-written output)
        except (AttributeError, ValueError, OSError):
            pass
    _WORK = (fn, items)
    # what the parent built stays shared: keep the workers' collector off those pages
    gc.collect()
    gc.freeze()
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        # small chunks: files differ a lot in cost, and the order is restored anyway
        yield from pool.map(_run, range(n), chunksize=2)
    except BrokenProcessPool as exc:
        raise RuntimeError("a worker process ended abruptly (killed, or out of memory); "
                           "--jobs 1 checks in one process") from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _WORK = None
        gc.unfreeze()


def warm(projects) -> None:
    """Build, before forking, what every worker would otherwise build again: each
    project's index and the text scans of its scripts (a
    :class:`~luaguard.projects.ProjectSet` or an :class:`~luaguard.engine.Engine`)."""
    engines = getattr(projects, "engines", None) or [projects]
    for engine in engines:
        if engine.project is None:
            continue
        snapshot = engine.snapshot
        snapshot.scans.pool()  # (reads and scans every script once)
        snapshot.scans.lookup_counts()
