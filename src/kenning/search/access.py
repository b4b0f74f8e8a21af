"""Records which search results were returned (the access bonus reads it), off the search path.

Access statistics are soft data: a search never waits for them. Returned ids are queued and a
background thread writes them in batches, so a store whose file lock is held by another
process slows the recorder, never the search. Closing flushes what is queued.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from datetime import datetime

from kenning.records import Scope
from kenning.store.protocol import SearchIndex

__all__ = ["AccessRecorder"]

log = logging.getLogger("kenning")

_STOP = object()
_MAX_BATCH = 256
_Access = tuple[Scope, tuple[str, ...], datetime]


class AccessRecorder:
    """Queues ``(scope, ids, at)`` accesses and writes them with ``SearchIndex.touch``."""

    def __init__(self, index: SearchIndex) -> None:
        self._index = index
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    def record(self, scope: Scope, ids: Sequence[str], *, at: datetime) -> None:
        """Queue an access to *ids* (returns at once)."""
        if not ids:
            return
        with self._lock:
            if self._closed:
                return
            self._queue.put((scope, tuple(ids), at))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._drain, name="kenning-access", daemon=True
                )
                self._thread.start()

    def flush(self) -> None:
        """Write everything queued so far, on the caller's thread."""
        batch, _ = self._take([])
        self._write(batch)

    def close(self) -> None:
        """Stop the thread after it wrote what is queued."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(_STOP)
            thread.join()

    def _take(self, batch: list[object]) -> tuple[list[_Access], bool]:
        """*batch* plus what is queued (up to a batch), and whether the stop mark came."""
        while len(batch) < _MAX_BATCH:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        stop = any(b is _STOP for b in batch)
        return [b for b in batch if isinstance(b, tuple)], stop

    def _write(self, batch: list[_Access]) -> None:
        merged: dict[tuple[Scope, datetime], list[str]] = {}
        for scope, ids, at in batch:
            merged.setdefault((scope, at), []).extend(ids)
        for (scope, at), returned in merged.items():
            try:
                self._index.touch(scope, returned, at=at)
            except Exception as exc:  # soft data: a failed write loses a count, nothing else
                log.warning("could not record access to %d results: %s", len(returned), exc)

    def _drain(self) -> None:
        while True:
            batch, stop = self._take([self._queue.get()])
            self._write(batch)
            if stop:
                return
