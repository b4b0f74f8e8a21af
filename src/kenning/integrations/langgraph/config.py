"""What a :class:`~kenning.integrations.langgraph.KenningStore` is configured with: LangGraph's
own ``IndexConfig`` and ``TTLConfig``, checked (an option kenning cannot honour is refused by
name, never ignored), and the embeddings that index documents.

The embeddings are the user's (a LangChain ``Embeddings`` object, a sync or async function or
a provider string, wrapped by LangGraph's own ``ensure_embeddings`` exactly as
``InMemoryStore`` wraps them), embedded where the store runs; or, without ``embed``, the
memory's own model (kenning's local MiniLM model by default; a served kenning's model, on the
server). Vectors are stored at unit length: search compares cosines.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig, TTLConfig, ensure_embeddings, get_text_at_path
from langgraph.store.base.embed import EmbeddingsLambda, tokenize_path

from kenning.errors import InvalidInput
from kenning.records.documents import check_ttl
from kenning.search.documents import unit_vectors
from kenning.store.records import IndexText, ModelInfo

__all__ = ["DocumentEmbedder", "IndexSettings", "TtlSettings", "index_settings", "ttl_settings"]

_INDEX_KEYS = ("dims", "embed", "fields")
_TTL_KEYS = ("refresh_on_read", "default_ttl", "sweep_interval_minutes", "omit_expired")

Matrix = npt.NDArray[np.float32]


def _row(matrix: Matrix) -> npt.NDArray[np.float32]:
    row: npt.NDArray[np.float32] = matrix[0]
    return row


class DocumentEmbedder:
    """Embeds documents' texts and queries for one store with the user's embeddings, named
    by :attr:`model` (what the stored vectors are checked against)."""

    def __init__(self, *, model: str, dims: int, langchain: Embeddings) -> None:
        self.model = model
        self.dims = dims
        self._langchain = langchain

    @property
    def sync(self) -> bool:
        """Whether embedding can run without an event loop (an async-only function cannot)."""
        return not (
            isinstance(self._langchain, EmbeddingsLambda)
            and getattr(self._langchain, "func", None) is None
        )

    def documents(self, texts: Sequence[str]) -> Matrix:
        return unit_vectors(self._langchain.embed_documents(list(texts)), self.dims, self.model)

    def query(self, text: str) -> npt.NDArray[np.float32]:
        return _row(unit_vectors([self._langchain.embed_query(text)], self.dims, self.model))

    async def adocuments(self, texts: Sequence[str]) -> Matrix:
        return unit_vectors(
            await self._langchain.aembed_documents(list(texts)), self.dims, self.model
        )

    async def aquery(self, text: str) -> npt.NDArray[np.float32]:
        return _row(unit_vectors([await self._langchain.aembed_query(text)], self.dims, self.model))


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
    """How documents are indexed: the user's embedder (None: the memory embeds them with its
    own model, if it has one) and the default fields."""

    embedder: DocumentEmbedder | None
    fields: tuple[str, ...] = ("$",)

    def texts(self, value: Mapping[str, Any], fields: Sequence[str] | None) -> list[IndexText]:
        """The texts *value* is found by: those at each of *fields* (default: the store's),
        one per element where a path names several, as LangGraph's stores read them."""
        out: list[IndexText] = []
        for path in self.fields if fields is None else fields:
            found = get_text_at_path(value, _tokens(path))
            if len(found) == 1:
                out.append(IndexText(path, found[0]))
            else:
                out += [IndexText(f"{path}.{i}", text) for i, text in enumerate(found)]
        return out


@functools.lru_cache(maxsize=256)
def _tokens(path: str) -> str | list[str]:
    """*path* as LangGraph's readers take it (``$``, else its tokens), read once per path:
    the same few paths index every put (the list is only read, never changed)."""
    return path if path == "$" else tokenize_path(path)


def _check_options(
    config: object, name: str, expected: str, keys: tuple[str, ...], note: str
) -> None:
    """Refuse a LangGraph *name* config that is not a dict, or names an option KenningStore
    does not take (each unknown one by name, with those it takes)."""
    if not isinstance(config, Mapping):
        raise InvalidInput(f"{name} must be a LangGraph {expected}")
    unknown = sorted(set(config) - set(keys))
    if unknown:
        raise InvalidInput(
            f"KenningStore does not support the {name} option(s) "
            f"{', '.join(map(repr, unknown))}: it takes {', '.join(keys)}{note}"
        )


def index_settings(index: IndexConfig | None, own: ModelInfo | None) -> IndexSettings:
    """Check LangGraph's *index* config and build the store's indexing from it (*own*: the
    memory's model, which embeds when *index* gives no ``embed``)."""
    if index is None:
        return IndexSettings(None)
    _check_options(index, "index", "IndexConfig (a dict of dims, embed, fields)", _INDEX_KEYS,
                   " (search ranks by BM25 and cosine similarity)")  # fmt: skip
    dims = index.get("dims")
    if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
        raise InvalidInput(f"index dims must be a positive integer, got {dims!r:.40}")
    fields = index.get("fields") or ["$"]
    if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
        raise InvalidInput("index fields must be a list of JSON paths")
    embed = index.get("embed")
    if embed is None:
        _check_own(own, dims)
        return IndexSettings(None, tuple(fields))
    if dims is None:
        raise InvalidInput("index needs dims (the length of the vectors embed returns)")
    embeddings = ensure_embeddings(embed)
    model = _model_name(embeddings, dims)
    return IndexSettings(DocumentEmbedder(model=model, dims=dims, langchain=embeddings),
                         tuple(fields))  # fmt: skip


def _check_own(own: ModelInfo | None, dims: int | None) -> None:
    """Refuse *dims* other than those of the memory's own model (with none, BM25 alone)."""
    if own is not None and dims is not None and dims != own.dimension:
        raise InvalidInput(
            f"index dims is {dims}, but the memory's embedder ({own.model_id}) gives "
            f"{own.dimension}: give embed, or dims {own.dimension}"
        )


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
    _check_options(ttl, "ttl", "TTLConfig (a dict)", _TTL_KEYS, "")
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
