"""Per-key debouncing on an asyncio event loop.

``schedule(key, delay, callback)`` runs ``callback`` once, ``delay`` seconds after the
last ``schedule`` for the same key; earlier pending calls for the key are dropped.  The
diagnostics feature keys by document URI, so a burst of ``didChange`` notifications
produces one lint.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Hashable


class Debouncer:
    """Delays callbacks per key.  Must be used from the thread running ``loop``.

    A callback may be a plain function or a coroutine function (it is then run as a
    task, kept referenced until done).  Exceptions raised by callbacks go to
    ``on_error`` (default: the loop's exception handler).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None,
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        self._loop = loop
        self._handles: dict[Hashable, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()
        self._on_error = on_error

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop timers run on (the running loop, taken on first use)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def schedule(self, key: Hashable, delay: float, callback: Callable[[], Any]) -> None:
        """Run ``callback()`` after ``delay`` seconds (>= 0) unless rescheduled or
        cancelled for ``key`` before then."""
        self.cancel(key)
        self._handles[key] = self.loop.call_later(max(0.0, delay), self._fire, key, callback)

    def cancel(self, key: Hashable) -> bool:
        """Drop the pending call for ``key``; True when there was one."""
        handle = self._handles.pop(key, None)
        if handle is None:
            return False
        handle.cancel()
        return True

    def cancel_all(self) -> None:
        """Drop every pending call."""
        for key in list(self._handles):
            self.cancel(key)

    def pending(self, key: Hashable) -> bool:
        """Whether a call for ``key`` is waiting to run."""
        return key in self._handles

    def _fire(self, key: Hashable, callback: Callable[[], Any]) -> None:
        self._handles.pop(key, None)
        try:
            result = callback()
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(self._task_done)
        except Exception as exc:  # noqa: BLE001
            self._report(exc)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._report(task.exception())

    def _report(self, exc: BaseException) -> None:
        if self._on_error is not None:
            self._on_error(exc)
        else:
            self.loop.call_exception_handler({"message": "debounced callback failed", "exception": exc})
