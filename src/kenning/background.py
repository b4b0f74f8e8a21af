"""One background thread serving a queue that a condition guards: started on first use,
stopped by :meth:`QueueThread.close` once it has drained what was queued.

The owner keeps its queue and loop; it holds ``cond`` while it touches the queue, and its
loop returns when ``closed`` is set and nothing is left. What is shared is the lifecycle,
which is where such threads go wrong (a second start, a join from the thread itself, a
close that misses a sleeping loop).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["QueueThread"]


class QueueThread:
    """A daemon thread named *name* running *loop*, with the condition and flag it waits on."""

    def __init__(self, name: str, loop: Callable[[], None]) -> None:
        self.cond = threading.Condition()
        #: Set by :meth:`close`; read and written with ``cond`` held.
        self.closed = False
        self._name = name
        self._loop = loop
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread unless it runs already (call with ``cond`` held)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Set ``closed``, wake the loop and wait for it to return (idempotent; from the
        thread itself it does not wait)."""
        with self.cond:
            self.closed = True
            thread = self._thread
            self.cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
