"""Embedding models: the :class:`Embedder` protocol and the local MiniLM default.

Importing this package loads no model and imports neither onnxruntime nor tokenizers.
"""

from kenning.embed.base import Embedder
from kenning.embed.minilm import MiniLMEmbedder, default_embedder

__all__ = ["Embedder", "MiniLMEmbedder", "default_embedder"]
