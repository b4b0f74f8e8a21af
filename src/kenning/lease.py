"""A held lease on background work, renewed on a timer (compaction jobs, fact extraction).

The store decides who holds a job (a claim writes a fresh token; renewing names the token);
this helper only keeps renewing while the work runs and remembers when a renewal found the
token gone, so the worker can stop between steps. Writes are fenced by the store itself, in
the write's own transaction, not by this flag.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = ["Lease"]

log = logging.getLogger("kenning")


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
