"""``KenningStore``: LangGraph's ``BaseStore`` over kenning's namespaced documents.

Each batch runs in two steps, as LangGraph's ``InMemoryStore`` runs it: reads (``GetOp``,
``SearchOp``, ``ListNamespacesOp``) see the state before the batch, then its writes
(``PutOp``; the last one of a namespace and key wins) are applied in one transaction. Texts
are embedded before the transaction, queries before the searches: with the user's ``embed``
where the store runs, otherwise by the memory with its own model (on the server, served).

The store reaches the documents through :class:`kenning.api.DocumentsAPI`: embedded, the
memory's store (:class:`kenning.search.documents.Documents`); served, ``client.documents``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from kenning.api import DocumentsAPI
from kenning.client import Client
from kenning.errors import InvalidInput, StoreError
from kenning.integrations.langgraph.config import (
    IndexSettings,
    TtlSettings,
    index_settings,
    ttl_settings,
)
from kenning.memory import Memory
from kenning.records import Scope, validate_id
from kenning.records.documents import Document, check_ttl
from kenning.search.documents import Documents
from kenning.store.records import DocumentWrite, IndexText

__all__ = ["KenningStore"]

logger = logging.getLogger(__name__)

Vector = npt.NDArray[np.float32]


@dataclass(slots=True)
class _Vectors:
    """A batch's embeddings: of its writes' texts, and of its search queries."""

    texts: dict[str, Vector] = field(default_factory=dict)
    queries: dict[str, Vector] = field(default_factory=dict)


@dataclass(slots=True)
class _Plan:
    """One batch's operations: the reads by position, the writes (last per key), and what
    must be embedded first."""

    ops: list[Op]
    puts: dict[tuple[tuple[str, ...], str], tuple[PutOp, list[IndexText]]] = field(
        default_factory=dict
    )
    queries: list[str] = field(default_factory=list)

    def texts(self) -> list[str]:
        """The distinct texts of the writes, to embed in one call."""
        return list(dict.fromkeys(t.text for _, texts in self.puts.values() for t in texts))


class KenningStore(BaseStore):
    """A LangGraph store whose items are kenning documents of one tenant.

    *memory* is a :class:`kenning.Memory` (SQLite file or PostgreSQL), or a
    :class:`kenning.Client` of a served kenning whose API key belongs to *tenant*
    (``InvalidScope`` otherwise; writes need its ``write`` scope). Namespaces are tuples of
    any depth inside *tenant*; with *user_at*, the namespace's label at that position names
    the user who owns the item, so ``memory.forget(Scope(tenant, user))`` and a legal hold on
    the user reach it (otherwise items belong to the tenant). *index* is LangGraph's
    ``IndexConfig``; without ``embed``, items are embedded by the memory with its own model
    (kenning's local MiniLM model by default; the server's, served). Search ranks by
    kenning's fusion of BM25 and cosine. *ttl* is LangGraph's ``TTLConfig``; with
    ``sweep_interval_minutes`` a background thread deletes expired items until
    :meth:`close`. Options kenning cannot honour raise ``InvalidInput`` (a ``ValueError``)
    naming them.

    >>> from kenning import Memory
    >>> with KenningStore(Memory.open(":memory:", embedder=None), tenant="acme",
    ...                   own_memory=True) as store:
    ...     store.put(("users", "dana"), "prefs", {"text": "prefers email"})
    ...     [item.key for item in store.search(("users",), query="email")]
    ['prefs']
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory | Client,
        *,
        tenant: str,
        user_at: int | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        own_memory: bool = False,
    ) -> None:
        if not isinstance(memory, Memory | Client):
            raise InvalidInput(
                "KenningStore needs a kenning.Memory (Memory.open(...)) or a kenning.Client"
            )
        self._memory = memory
        self._own = own_memory
        try:
            self._configure(tenant, user_at, index, ttl)
        except BaseException:
            if own_memory:  # a store that could not be made closes what it was to own
                memory.close()
            raise
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="kenning-store")
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        if self._ttl.sweep_interval_minutes is not None:
            self._sweeping = self.start_ttl_sweeper()

    def _configure(
        self, tenant: str, user_at: int | None, index: IndexConfig | None, ttl: TTLConfig | None
    ) -> None:
        if user_at is not None and (
            isinstance(user_at, bool) or not isinstance(user_at, int) or user_at < 0
        ):
            raise InvalidInput(
                f"user_at is a label position (an integer >= 0), got {user_at!r:.20}"
            )
        self._docs = _documents(self._memory)
        self._scope = Scope(tenant)
        self._user_at = user_at
        # Served, this is the first call: a key of another tenant is refused here.
        self._index: IndexSettings = index_settings(index, self._docs.embedding(self._scope))
        self._ttl: TtlSettings = ttl_settings(ttl)
        self.index_config = index
        self.ttl_config = ttl

    @classmethod
    def open(cls, location: str | Path, *, tenant: str, **options: Any) -> KenningStore:
        """A store over a memory it opens at *location* (a SQLite file or a PostgreSQL URL)
        and closes with itself; *options* as the constructor's."""
        return cls(Memory.open(location), tenant=tenant, own_memory=True, **options)

    @property
    def memory(self) -> Memory | Client:
        """The memory the documents live in (a client, served)."""
        return self._memory

    # -- the two primitives ----------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        plan = self._plan(ops)
        embedder = self._index.embedder
        vectors = _Vectors()
        if embedder is not None:
            texts = plan.texts()
            if texts:
                vectors.texts.update(zip(texts, embedder.documents(texts), strict=True))
            for query in dict.fromkeys(plan.queries):
                vectors.queries[query] = embedder.query(query)
        return self._run(plan, vectors)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """As :meth:`batch`, on the store's own thread: calls made concurrently are applied
        in the order they were made (an async-only embedding function is awaited first, so
        such calls are applied in the order their embeddings arrive)."""
        loop = asyncio.get_running_loop()
        embedder = self._index.embedder
        if embedder is None or embedder.sync:
            return await loop.run_in_executor(self._worker, self.batch, list(ops))
        plan = self._plan(ops)
        vectors = _Vectors()
        texts = plan.texts()
        if texts:
            vectors.texts.update(zip(texts, await embedder.adocuments(texts), strict=True))
        for query in dict.fromkeys(plan.queries):
            vectors.queries[query] = await embedder.aquery(query)
        return await loop.run_in_executor(self._worker, self._run, plan, vectors)

    # -- planning --------------------------------------------------------------------------

    def _plan(self, ops: Iterable[Op]) -> _Plan:
        plan = _Plan(list(ops))
        for op in plan.ops:
            if not isinstance(op, GetOp | SearchOp | ListNamespacesOp | PutOp):
                raise InvalidInput(f"unknown operation {type(op).__name__}: KenningStore runs "
                                   "GetOp, PutOp, SearchOp and ListNamespacesOp")  # fmt: skip
            validate_op_namespace(op)
            if isinstance(op, PutOp):
                namespace = tuple(op.namespace)
                plan.puts.pop((namespace, op.key), None)  # the last write of a key wins
                plan.puts[(namespace, op.key)] = (op, self._texts(op))
            elif isinstance(op, SearchOp) and op.query and op.query.strip():
                plan.queries.append(op.query)
        return plan

    def _texts(self, op: PutOp) -> list[IndexText]:
        if op.value is None or op.index is False:
            return []
        if op.index is not None and (
            isinstance(op.index, str) or not all(isinstance(p, str) for p in op.index)
        ):
            raise InvalidInput("index is False, None or a list of JSON paths")
        fields = None if op.index is None else list(op.index)
        return self._index.texts(op.value, fields)

    # -- running ---------------------------------------------------------------------------

    def _run(self, plan: _Plan, vectors: _Vectors) -> list[Result]:
        results: list[Result] = []
        gets = [op for op in plan.ops if isinstance(op, GetOp)]
        found = iter(self._get(gets))
        for op in plan.ops:
            if isinstance(op, GetOp):
                results.append(next(found))
            elif isinstance(op, SearchOp):
                results.append(self._search(op, vectors))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list(op))
            else:
                results.append(None)
        self._write(plan, vectors)
        return results

    def _get(self, ops: Sequence[GetOp]) -> list[Item | None]:
        out: list[Item | None] = [None] * len(ops)
        # Reads that restart the time to live and reads that do not: one call each.
        for refresh in (True, False):
            picked = [n for n, op in enumerate(ops) if bool(op.refresh_ttl) is refresh]
            if not picked:
                continue
            docs = self._docs.get(
                self._scope, [(tuple(ops[n].namespace), ops[n].key) for n in picked],
                refresh=refresh, omit_expired=self._ttl.omit_expired,
            )  # fmt: skip
            for n, doc in zip(picked, docs, strict=True):
                out[n] = None if doc is None else _item(doc)
        return out

    def _search(self, op: SearchOp, vectors: _Vectors) -> list[SearchItem]:
        query = op.query if op.query and op.query.strip() else None
        # The user's embeddings embedded the query; without them, the memory embeds it.
        vector = None if query is None else vectors.queries.get(query)
        embedder = self._index.embedder
        hits = self._docs.search(
            self._scope, tuple(op.namespace_prefix), filter=op.filter, limit=op.limit,
            offset=op.offset, query=query, vector=vector,
            model=None if vector is None or embedder is None else embedder.model,
            refresh=bool(op.refresh_ttl), omit_expired=self._ttl.omit_expired,
        )  # fmt: skip
        return [_search_item(hit.document, hit.score) for hit in hits]

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = [(c.match_type, tuple(c.path)) for c in op.match_conditions or ()]
        return self._docs.namespaces(
            self._scope, conditions=conditions, max_depth=op.max_depth, limit=op.limit,
            offset=op.offset, omit_expired=self._ttl.omit_expired,
        )  # fmt: skip

    def _write(self, plan: _Plan, vectors: _Vectors) -> None:
        if not plan.puts:
            return
        writes = []
        for (namespace, key), (op, texts) in plan.puts.items():
            embedded = tuple(IndexText(t.path, t.text, vectors.texts.get(t.text)) for t in texts)
            writes.append(
                DocumentWrite(
                    namespace, key, op.value,
                    user=None if op.value is None else self._owner(namespace),
                    texts=embedded, ttl_minutes=check_ttl(op.ttl),
                )
            )  # fmt: skip
        embedder = self._index.embedder
        self._docs.put(self._scope, writes, model=None if embedder is None else embedder.model)

    def _owner(self, namespace: tuple[str, ...]) -> str | None:
        """The user an item of *namespace* belongs to (None: the tenant)."""
        if self._user_at is None:
            return None
        if len(namespace) <= self._user_at:
            raise InvalidInput(
                f"namespace {namespace!r:.80} has no label at position {self._user_at} to name "
                f"its user (KenningStore(user_at={self._user_at}))"
            )
        return validate_id(namespace[self._user_at], "user")

    # -- time to live ----------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete the tenant's expired items now (a legal hold keeps what it covers); return
        how many."""
        return self._docs.sweep(self._scope.tenant)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items every *sweep_interval_minutes* (default: the ttl config's, else
        5) on a background thread, until :meth:`stop_ttl_sweeper` or :meth:`close`. The
        future is done when the sweeper stops; cancelling it stops the sweeper."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        if self._sweeper is not None and self._sweeper.is_alive():
            return future  # one sweeper per store
        minutes = sweep_interval_minutes or self._ttl.sweep_interval_minutes or 5.0
        if isinstance(minutes, bool) or not isinstance(minutes, int | float) or not minutes > 0:
            raise InvalidInput("sweep_interval_minutes must be a number > 0")
        self._stop.clear()
        self._sweeper = threading.Thread(
            target=self._sweep_loop, args=(minutes * 60, future), daemon=True,
            name="kenning-ttl-sweeper",
        )  # fmt: skip
        self._sweeper.start()
        return future

    def _sweep_loop(self, interval_s: float, future: concurrent.futures.Future[None]) -> None:
        while not self._stop.wait(interval_s):
            try:
                swept = self.sweep_ttl()
            except StoreError:  # the store is down or closed: try again next time
                logger.exception("kenning TTL sweep failed")
                continue
            if swept:
                logger.info("kenning TTL sweep deleted %d expired items", swept)
        if not future.done():
            future.set_result(None)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True once it has stopped (or was not running)."""
        sweeper = self._sweeper
        if sweeper is None:
            return True
        self._stop.set()
        sweeper.join(timeout)
        if sweeper.is_alive():
            return False
        self._sweeper = None
        return True

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the sweeper and the store's thread; close the memory if the store opened it."""
        self.stop_ttl_sweeper()
        self._worker.shutdown(wait=True)
        if self._own:
            self._memory.close()

    def __enter__(self) -> KenningStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _documents(memory: Memory | Client) -> DocumentsAPI:
    """The namespaced documents of *memory*: served, the client's; embedded, the memory's
    store at its clock, embedded with its embedder and ranked with its fusion settings."""
    if isinstance(memory, Client):
        return memory.documents
    return Documents(memory.documents, embedder=memory.embedder, fusion=memory.settings.fusion)


def _item(doc: Document) -> Item:
    return Item(value=dict(doc.value), key=doc.key, namespace=doc.namespace,
                created_at=doc.created_at, updated_at=doc.updated_at)  # fmt: skip


def _search_item(doc: Document, score: float | None) -> SearchItem:
    return SearchItem(doc.namespace, doc.key, dict(doc.value), doc.created_at, doc.updated_at,
                      score=score)  # fmt: skip
