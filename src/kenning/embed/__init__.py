"""Embedding models: the :class:`Embedder` protocol and the local MiniLM default."""

from kenning.embed.base import Embedder

__all__ = ["Embedder"]
