"""Leased background work: a lease renewed on a timer, and a bounded pool of threads that
drains a leased queue (compaction jobs, fact extraction).

The store decides who holds a job (a claim writes a fresh token; renewing names the token);
:class:`Lease` only keeps renewing while the work runs and remembers when a renewal found the
token gone, so the worker can stop between steps. Writes are fenced by the store itself, in
the write's own transaction, not by this flag. :class:`LeasedPool` runs at most ``threads``
jobs at once; the rest wait in the store (backpressure without loss), and threads run only
while there is work.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, Literal, TypeVar

__all__ = ["Lease", "LeasedPool"]

log = logging.getLogger("kenning")

J = TypeVar("J")


class Lease:
    """Calls *renew* every third of *lease_s* until :meth:`release`; ``lost`` turns True
    (and renewing stops) once *renew* answers False or fails."""

    def __init__(self, renew: Callable[[], bool], lease_s: float, *, what: str) -> None:
        self._renew = renew
        self._interval = lease_s / 3
        self._what = what
        self._done = threading.Event()
        self.lost = False
        self._thread = threading.Thread(target=self._run, name="kenning-lease", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self._interval):
            try:
                held = self._renew()
            except Exception:  # the store is closing: the work stops at its next check
                log.exception("could not renew the lease of %s", self._what)
                held = False
            if not held:
                self.lost = True
                return

    def release(self) -> None:
        """Stop renewing (the work ended); waits for the timer thread."""
        self._done.set()
        self._thread.join()


class LeasedPool(ABC, Generic[J]):
    """Drains a store's leased queue on at most *threads* threads at once.

    Subclasses claim a job (:meth:`_claim`, None when the queue is empty) and run it
    (:meth:`_run`, False when the thread should stop); they count outcomes in ``completed``,
    ``failed`` and ``lost`` (taken over by another worker).
    """

    def __init__(self, *, threads: int, name: str, what: str, settle_s: float = 0.0) -> None:
        self._size = max(1, threads)
        self._name = name
        self._what = what
        self._settle_s = settle_s
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._threads: list[threading.Thread] = []
        self._settling = 0  # threads pausing after a job (see _settle)
        self._waiters = 0  # callers in wait() or close(): no thread pauses meanwhile
        self._again = False
        self._closed = False
        self.completed = 0
        self.failed = 0
        self.lost = 0

    @property
    def threads(self) -> int:
        """The pool's size."""
        return self._size

    @property
    def busy(self) -> int:
        """Threads working now (not those pausing between jobs)."""
        with self._lock:
            return len(self._threads) - self._settling

    @property
    def closed(self) -> bool:
        return self._closed

    def wake(self) -> None:
        """New work may be waiting: start threads up to the pool's size."""
        with self._lock:
            if self._closed:
                return
            # A thread about to find the queue empty looks once more instead of leaving, so
            # work queued just as it looked is not left waiting for the next wake.
            self._again = True
            while len(self._threads) < self._size:
                thread = threading.Thread(target=self._drain, name=self._name, daemon=True)
                self._threads.append(thread)
                thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every thread is idle (or *timeout*); True if they are."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._waiters += 1
            self._cond.notify_all()  # a thread pausing after a job goes on now
        try:
            while True:
                with self._lock:
                    threads = list(self._threads)
                if not threads:
                    return True
                for thread in threads:
                    left = None if deadline is None else max(0.0, deadline - time.monotonic())
                    thread.join(left)
                if deadline is not None and time.monotonic() >= deadline:
                    with self._lock:
                        return not self._threads
        finally:
            with self._lock:
                self._waiters -= 1

    def close(self) -> None:
        """Stop taking work; waits for the running jobs to stop at their next step."""
        with self._cond:
            self._closed = True
            threads = list(self._threads)
            self._cond.notify_all()
        for thread in threads:
            thread.join()

    def _count(self, outcome: Literal["completed", "failed", "lost"]) -> None:
        with self._lock:
            setattr(self, outcome, getattr(self, outcome) + 1)

    @abstractmethod
    def _claim(self) -> J | None:
        """Lease the next job, or None when nothing waits."""

    @abstractmethod
    def _run(self, job: J) -> bool:
        """Run one claimed job; False when this thread should stop."""

    def _settle(self) -> None:
        """Pause up to ``settle_s`` after a job, so that the work queued meanwhile (the next
        turns of a loop that keeps writing) is claimed as one job: a job's fixed cost (its
        claim, lease, reads and the model calls it makes) is then paid once for all of it. A
        caller of :meth:`wait` or :meth:`close` ends the pause."""
        if self._settle_s <= 0:
            return
        with self._cond:
            self._settling += 1
            try:
                self._cond.wait_for(lambda: self._closed or self._waiters > 0, self._settle_s)
            finally:
                self._settling -= 1

    def _drain(self) -> None:
        me = threading.current_thread()
        try:
            while not self._closed:
                try:
                    job = self._claim()
                except Exception:  # the store is closing or broken: the queue persists
                    log.exception("%s could not read its queue", self._what)
                    return
                if job is None:
                    with self._lock:
                        if self._again and not self._closed:
                            self._again = False
                            continue
                        # Leave under the lock a wake takes: it then starts a new thread.
                        self._threads.remove(me)
                        return
                if not self._run(job):
                    return
                self._settle()
        finally:
            with self._lock:
                if me in self._threads:
                    self._threads.remove(me)
