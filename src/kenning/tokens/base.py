"""The tokenizer protocol used for every token count in kenning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens for one encoding.

    ``exact`` is False only for the labelled approximate fallback used for model families with
    no public tokenizer; everything that reports counts must surface that flag.
    """

    @property
    def name(self) -> str: ...

    @property
    def exact(self) -> bool: ...

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...
