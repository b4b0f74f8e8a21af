"""Token counting: the :class:`Tokenizer` protocol and exact offline encodings."""

from kenning.tokens.base import Tokenizer

__all__ = ["Tokenizer"]
