"""A single background thread that runs submitted callables one at a time.

The engine is not thread-safe, so every call that touches it goes through one
:class:`Worker`.  Jobs run by ``priority`` (lower first), in submission order within a
priority: the language server gives settings/index jobs priority 0, lints of ordinary
documents 1 and lints of very large ones 2, so one huge buffer does not hold back the
others (a job already running is never interrupted).  The thread is a daemon: a long
lint never keeps the server process alive after ``exit``.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
from concurrent.futures import Future
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_STOP = object()


class Worker:
    """Priority-then-FIFO executor backed by one daemon thread (started on first use).

    :meth:`submit` returns a :class:`concurrent.futures.Future`; :meth:`run` awaits the
    result from asyncio code.  An exception raised by a job is set on its future and
    never ends the thread.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.PriorityQueue = queue.PriorityQueue()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopped = False

    def submit(self, fn: Callable[..., T], *args: Any, priority: int = 0) -> "Future[T]":
        """Queue ``fn(*args)``.  Raises ``RuntimeError`` after :meth:`stop`."""
        if self._stopped:
            raise RuntimeError(f"worker {self.name} is stopped")
        fut: Future = Future()
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._thread.start()
        self._queue.put((priority, next(self._order), (fut, fn, args)))
        return fut

    async def run(self, fn: Callable[..., T], *args: Any, priority: int = 0) -> T:
        """Run ``fn(*args)`` on the worker thread and return its result (or raise its
        exception) in the calling event loop."""
        return await asyncio.wrap_future(self.submit(fn, *args, priority=priority))

    def stop(self) -> None:
        """Let the thread finish the queued jobs and end; later submits raise."""
        self._stopped = True
        self._queue.put((float("inf"), next(self._order), _STOP))

    def _loop(self) -> None:
        while True:
            _, _, item = self._queue.get()
            if item is _STOP:
                return
            fut, fn, args = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - reported through the future
                fut.set_exception(exc)
            else:
                fut.set_result(result)
