"""An embedder that remembers the vectors of texts it embedded lately."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from kenning.embed.base import DelegatingEmbedder, Embedder, Matrix

__all__ = ["CachedEmbedder"]


class CachedEmbedder(DelegatingEmbedder):
    """Embeds only the texts it has not embedded among the last *size* (least recently used
    first out); safe to share between threads. For callers that embed the same short texts
    again and again (fact consolidation compares each new statement with the user's held
    facts, whose texts repeat from one batch to the next).

    >>> from kenning.embed.base import DelegatingEmbedder
    >>> class Counting(DelegatingEmbedder):
    ...     calls = 0
    ...     def embed(self, texts):
    ...         Counting.calls += len(texts)
    ...         return np.eye(4, dtype=np.float32)[: len(texts)]
    ...     model_id, dimension, max_tokens = "m", 4, 8
    >>> cached = CachedEmbedder(Counting(None), size=2)  # type: ignore[arg-type]
    >>> _ = cached.embed(["a", "b"]); _ = cached.embed(["b", "a"]); Counting.calls
    2
    """

    def __init__(self, inner: Embedder, *, size: int = 4096) -> None:
        super().__init__(inner)
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Matrix:
        with self._lock:
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
            for text in known:
                self._vectors.move_to_end(text)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            fresh = dict(zip(missing, self.inner.embed(missing), strict=True))
            known.update(fresh)
            with self._lock:
                self._vectors.update(fresh)
                while len(self._vectors) > self._size:
                    self._vectors.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)
