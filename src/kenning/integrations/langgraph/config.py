"""What a :class:`~kenning.integrations.langgraph.KenningStore` is configured with: LangGraph's
own ``IndexConfig`` and ``TTLConfig``, checked (an option kenning cannot honour is refused by
name, never ignored), and the embeddings that index documents.

The embeddings are the user's (a LangChain ``Embeddings`` object, a sync or async function or
a provider string, wrapped by LangGraph's own ``ensure_embeddings`` exactly as
``InMemoryStore`` wraps them), or, without ``embed``, the memory's own embedder (kenning's
local MiniLM model by default). Vectors are stored at unit length: search compares cosines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig, TTLConfig, ensure_embeddings, get_text_at_path
from langgraph.store.base.embed import EmbeddingsLambda, tokenize_path

from kenning.embed.base import Embedder
from kenning.errors import InvalidInput
from kenning.records.documents import check_ttl
from kenning.store.records import IndexText

__all__ = ["DocumentEmbedder", "IndexSettings", "TtlSettings", "index_settings", "ttl_settings"]

_INDEX_KEYS = ("dims", "embed", "fields")
_TTL_KEYS = ("refresh_on_read", "default_ttl", "sweep_interval_minutes", "omit_expired")

Matrix = npt.NDArray[np.float32]


def _unit(rows: Sequence[Sequence[float]] | Matrix, dims: int, what: str) -> Matrix:
    """The vectors *rows* at unit length (a zero vector stays zero); InvalidInput unless each
    has *dims* finite numbers."""
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != dims:
        shape = "x".join(str(n) for n in matrix.shape)
        raise InvalidInput(f"{what} returned vectors of shape {shape}; index dims is {dims}")
    if not np.isfinite(matrix).all():
        raise InvalidInput(f"{what} returned a vector that is not finite")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def _row(matrix: Matrix) -> npt.NDArray[np.float32]:
    row: npt.NDArray[np.float32] = matrix[0]
    return row


class DocumentEmbedder:
    """Embeds documents' texts and queries for one store: the user's embeddings or kenning's
    embedder, named by :attr:`model` (what the stored vectors are checked against)."""

    def __init__(self, *, model: str, dims: int, langchain: Embeddings | None = None,
                 kenning: Embedder | None = None) -> None:  # fmt: skip
        self.model = model
        self.dims = dims
        self._langchain = langchain
        self._kenning = kenning

    @property
    def sync(self) -> bool:
        """Whether embedding can run without an event loop (an async-only function cannot)."""
        return not (
            isinstance(self._langchain, EmbeddingsLambda)
            and getattr(self._langchain, "func", None) is None
        )

    def documents(self, texts: Sequence[str]) -> Matrix:
        if self._kenning is not None:
            return _unit(self._kenning.embed(list(texts)), self.dims, self.model)
        assert self._langchain is not None
        return _unit(self._langchain.embed_documents(list(texts)), self.dims, self.model)

    def query(self, text: str) -> npt.NDArray[np.float32]:
        if self._kenning is not None:
            return _row(self.documents([text]))
        assert self._langchain is not None
        return _row(_unit([self._langchain.embed_query(text)], self.dims, self.model))

    async def adocuments(self, texts: Sequence[str]) -> Matrix:
        if self._langchain is None:
            return self.documents(texts)
        return _unit(await self._langchain.aembed_documents(list(texts)), self.dims, self.model)

    async def aquery(self, text: str) -> npt.NDArray[np.float32]:
        if self._langchain is None:
            return self.query(text)
        return _row(_unit([await self._langchain.aembed_query(text)], self.dims, self.model))


def _model_name(embeddings: Embeddings, dims: int) -> str:
    """A name for the user's embeddings: their class (or function) and model, and dims."""
    if isinstance(embeddings, EmbeddingsLambda):
        func = getattr(embeddings, "func", None) or getattr(embeddings, "afunc", None)
        name = f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', 'function')}"
    else:
        kind = type(embeddings)
        name = f"{kind.__module__}.{kind.__qualname__}"
        model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
        if isinstance(model, str):
            name += f":{model}"
    return f"langgraph:{name}/{dims}"


@dataclass(frozen=True, slots=True)
class IndexSettings:
    """How documents are indexed: the embedder (None: BM25 only) and the default fields."""

    embedder: DocumentEmbedder | None
    fields: tuple[str, ...] = ("$",)

    def texts(self, value: Mapping[str, Any], fields: Sequence[str] | None) -> list[IndexText]:
        """The texts *value* is found by: those at each of *fields* (default: the store's),
        one per element where a path names several, as LangGraph's stores read them."""
        out: list[IndexText] = []
        for path in self.fields if fields is None else fields:
            tokens: str | list[str] = path if path == "$" else tokenize_path(path)
            found = get_text_at_path(value, tokens)
            if len(found) == 1:
                out.append(IndexText(path, found[0]))
            else:
                out += [IndexText(f"{path}.{i}", text) for i, text in enumerate(found)]
        return out


def index_settings(index: IndexConfig | None, embedder: Embedder | None) -> IndexSettings:
    """Check LangGraph's *index* config and build the store's indexing from it (*embedder*:
    the memory's, used when *index* gives no ``embed``)."""
    if index is None:
        return IndexSettings(_kenning_embedder(embedder, None))
    if not isinstance(index, Mapping):
        raise InvalidInput("index must be a LangGraph IndexConfig (a dict of dims, embed, fields)")
    unknown = sorted(set(index) - set(_INDEX_KEYS))
    if unknown:
        raise InvalidInput(
            f"KenningStore does not support the index option(s) {', '.join(map(repr, unknown))}: "
            f"it takes {', '.join(_INDEX_KEYS)} (search ranks by BM25 and cosine similarity)"
        )
    dims = index.get("dims")
    if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
        raise InvalidInput(f"index dims must be a positive integer, got {dims!r:.40}")
    fields = index.get("fields") or ["$"]
    if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
        raise InvalidInput("index fields must be a list of JSON paths")
    embed = index.get("embed")
    if embed is None:
        return IndexSettings(_kenning_embedder(embedder, dims), tuple(fields))
    if dims is None:
        raise InvalidInput("index needs dims (the length of the vectors embed returns)")
    embeddings = ensure_embeddings(embed)
    model = _model_name(embeddings, dims)
    return IndexSettings(DocumentEmbedder(model=model, dims=dims, langchain=embeddings),
                         tuple(fields))  # fmt: skip


def _kenning_embedder(embedder: Embedder | None, dims: int | None) -> DocumentEmbedder | None:
    if embedder is None:
        return None  # a memory opened without embeddings: BM25 alone
    if dims is not None and dims != embedder.dimension:
        raise InvalidInput(
            f"index dims is {dims}, but the memory's embedder ({embedder.model_id}) gives "
            f"{embedder.dimension}: give embed, or dims {embedder.dimension}"
        )
    return DocumentEmbedder(model=embedder.model_id, dims=embedder.dimension, kenning=embedder)


@dataclass(frozen=True, slots=True)
class TtlSettings:
    """LangGraph's ``TTLConfig``, checked: whether reads restart a document's clock by
    default, the default time to live of a put (minutes), how often the sweeper runs
    (minutes; None: no sweeper), and whether reads leave out expired documents."""

    refresh_on_read: bool = True
    default_ttl: float | None = None
    sweep_interval_minutes: float | None = None
    omit_expired: bool = False


def ttl_settings(ttl: TTLConfig | None) -> TtlSettings:
    """Check LangGraph's *ttl* config (an unknown option is refused by name)."""
    if ttl is None:
        return TtlSettings()
    if not isinstance(ttl, Mapping):
        raise InvalidInput("ttl must be a LangGraph TTLConfig (a dict)")
    unknown = sorted(set(ttl) - set(_TTL_KEYS))
    if unknown:
        raise InvalidInput(
            f"KenningStore does not support the ttl option(s) {', '.join(map(repr, unknown))}: "
            f"it takes {', '.join(_TTL_KEYS)}"
        )
    for flag in ("refresh_on_read", "omit_expired"):
        if flag in ttl and not isinstance(ttl[flag], bool):
            raise InvalidInput(f"ttl {flag} must be true or false")
    interval = ttl.get("sweep_interval_minutes")
    if interval is not None and (
        isinstance(interval, bool) or not isinstance(interval, int | float)
        or not math.isfinite(interval) or interval <= 0
    ):  # fmt: skip
        raise InvalidInput(f"ttl sweep_interval_minutes must be a number > 0, got {interval!r:.40}")
    return TtlSettings(
        refresh_on_read=ttl.get("refresh_on_read", True),
        default_ttl=check_ttl(ttl.get("default_ttl")),
        sweep_interval_minutes=None if interval is None else float(interval),
        omit_expired=ttl.get("omit_expired", False),
    )
