"""An embedder that runs the texts of concurrent callers through the model in one call.

A server embeds each request's texts on the request's own thread. One model call per
request leaves the model running many small batches, each paying the call's fixed cost;
:class:`BatchingEmbedder` queues the texts instead, and one thread gathers what the callers
queued (for up to ``window_s`` after the first arrives, or while the model is busy with the
previous batch) into one call of at most ``max_texts`` texts. Each caller waits only for the
call that holds its own texts and gets back exactly its rows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kenning.background import QueueThread
from kenning.embed.base import DelegatingEmbedder, Embedder, Matrix, check_texts
from kenning.errors import InvalidInput

__all__ = ["BatchingEmbedder"]


@dataclass(eq=False)
class _Request:
    texts: list[str]
    done: threading.Event = field(default_factory=threading.Event)
    vectors: Matrix | None = None
    error: BaseException | None = None

    def finish(self, vectors: Matrix | None = None, error: BaseException | None = None) -> None:
        self.vectors, self.error = vectors, error
        self.done.set()


class BatchingEmbedder(DelegatingEmbedder):
    """Embeds the texts of concurrent :meth:`embed` calls together, in one model call.

    Args:
        inner: the embedder that runs the model.
        window_s: how long the gathering thread waits, after the first text arrives, for
            other callers' texts (keyword-only; 0: only what queued while the model was busy
            with the previous call).
        max_texts: the most texts in one call (keyword-only); a caller's texts are never
            split across calls, so one caller with more texts gets a call of its own.

    A failure in a shared call is retried caller by caller, so one caller's bad text fails
    only that caller. :meth:`close` embeds what is queued, then stops the thread; a call
    after it runs inline.

    Raises:
        InvalidInput: *window_s* is negative or *max_texts* is not a positive int.

    Example:
        >>> from kenning.embed.minilm import MiniLMEmbedder
        >>> embedder = BatchingEmbedder(MiniLMEmbedder(), window_s=0.002, max_texts=16)
    """

    def __init__(self, inner: Embedder, *, window_s: float = 0.002, max_texts: int = 16) -> None:
        super().__init__(inner)
        if not 0 <= window_s <= 1:
            raise InvalidInput(f"window_s must be between 0 and 1 second, got {window_s!r}")
        if not isinstance(max_texts, int) or isinstance(max_texts, bool) or max_texts < 1:
            raise InvalidInput(f"max_texts must be a positive int, got {max_texts!r}")
        self._window_s = window_s
        self._max_texts = max_texts
        self._queue: list[_Request] = []
        self._worker = QueueThread("kenning-embed", self._gather)
        self._cond = self._worker.cond
        #: Model calls made and texts embedded (for the load bench and tests).
        self.calls = 0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Matrix:
        check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        request = _Request(list(texts))
        with self._cond:
            if self._worker.closed:
                return self.inner.embed(request.texts)
            self._queue.append(request)
            self._worker.start()
            self._cond.notify()
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors

    def close(self) -> None:
        """Embed what is queued, then stop the gathering thread (idempotent)."""
        self._worker.close()

    def _gather(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._worker.closed:
                    self._cond.wait()
                if not self._queue:
                    return
                deadline = time.monotonic() + self._window_s
                while not self._worker.closed and self._queued() < self._max_texts:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch = self._take()
            self._run(batch)

    def _queued(self) -> int:
        return sum(len(r.texts) for r in self._queue)

    def _take(self) -> list[_Request]:
        """The oldest requests that fit in one call (always at least one)."""
        taken, count = 0, 0
        for request in self._queue:
            if taken and count + len(request.texts) > self._max_texts:
                break
            taken += 1
            count += len(request.texts)
        batch, self._queue = self._queue[:taken], self._queue[taken:]
        return batch

    def _run(self, batch: list[_Request]) -> None:
        try:
            vectors = self._call([t for r in batch for t in r.texts])
        except Exception as exc:  # delivered to the callers; the thread goes on
            if len(batch) == 1:
                batch[0].finish(error=exc)
                return
            for request in batch:
                try:
                    request.finish(self._call(request.texts))
                except Exception as own:  # this caller's texts fail on their own
                    request.finish(error=own)
            return
        start = 0
        for request in batch:
            end = start + len(request.texts)
            request.finish(vectors[start:end])
            start = end

    def _call(self, texts: list[str]) -> Matrix:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)
