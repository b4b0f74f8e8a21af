"""The embedder protocol every embedding model implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput

__all__ = ["DelegatingEmbedder", "Embedder", "Matrix", "check_texts"]

Matrix = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text.

    ``model_id`` names the model and its preprocessing exactly: a store refuses vectors whose
    ``model_id`` or ``dimension`` differ from those it already holds.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Return an ``(len(texts), dimension)`` float32 array of unit vectors."""
        ...


def check_texts(texts: Sequence[str]) -> None:
    """Refuse what ``embed`` cannot take: a single string (a sequence of characters) or a
    sequence holding anything but strings.

    Raises:
        InvalidInput: naming the first wrong item.
    """
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidInput("embed() takes a sequence of strings; wrap one text in a list")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInput(f"texts[{i}] is {type(text).__name__}, expected str")


class DelegatingEmbedder:
    """Wraps another embedder and keeps its identity; subclasses override :meth:`embed`
    (to count, cache or instrument calls) and call ``self.inner.embed``."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self.inner.embed(texts)
