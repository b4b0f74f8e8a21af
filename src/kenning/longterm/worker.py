"""The in-process background reader of new events for facts.

The store keeps, per session, how far extraction got: the events themselves are the queue,
so nothing is lost across a crash or restart, and a session whose reader died is taken over
when its lease runs out. The thread runs only while there is work.
"""

from __future__ import annotations

import logging
import threading

from kenning.longterm.service import LongTermMemory

__all__ = ["FactWorker"]

log = logging.getLogger("kenning")


class FactWorker:
    """Drains pending extraction on one thread."""

    def __init__(self, facts: LongTermMemory) -> None:
        self._facts = facts
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._again = False
        self._closed = False
        self.failed = 0

    def wake(self) -> None:
        """Read new events soon (starts the thread if none is reading)."""
        with self._lock:
            if self._closed:
                return
            self._again = True
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._drain, name="kenning-facts", daemon=True
                )
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the reader is idle; True if it is."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self) -> None:
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            thread.join()

    def _drain(self) -> None:
        while True:
            with self._lock:
                if self._closed or not self._again:
                    self._thread = None  # a later wake starts a new reader
                    return
                self._again = False
            try:
                while not self._closed and self._facts.extract_next() is not None:
                    pass
            except Exception:  # the store is closing or broken: progress persists
                self.failed += 1
                log.exception("fact extraction stopped; it resumes with the next write")
                with self._lock:
                    self._thread = None
                return
