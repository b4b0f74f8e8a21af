"""kenning's memory API as protocols, written once: what an agent calls on a memory, embedded
(:class:`kenning.Memory`) or served (:class:`kenning.Client`).

``Memory`` and ``Client`` both implement :class:`MemoryAPI` and inherit its docstrings, and
mypy checks both signatures against it (``AsyncClient`` offers the same calls, awaitable). Its
parts are the protocols of ``memory.context`` (:mod:`kenning.context.api`) and of the
long-term APIs (:mod:`kenning.longterm.api`); the agent tools take the parts they use
(:class:`~kenning.tools.MemoryTarget`). :class:`DocumentsAPI` is the namespaced documents of
a memory (LangGraph's store keeps its items in them), embedded
(:class:`kenning.search.documents.Documents`) or served (``client.documents``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, Literal, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from kenning.context.api import WindowAPI
from kenning.records import Event, NewEvent, Scope
from kenning.records.core import ModelInfo
from kenning.records.documents import Document, DocumentWrite, Namespace, ScoredDocument
from kenning.search.hits import SearchResults

__all__ = ["DocumentsAPI", "EventLike", "MemoryAPI", "MemoryParts", "ReadsAPI"]

C = TypeVar("C")
F = TypeVar("F")
P = TypeVar("P")
R = TypeVar("R")

#: An event to write: a :class:`~kenning.records.NewEvent`, or a mapping of its fields.
EventLike = NewEvent | Mapping[str, Any]


class ReadsAPI(Protocol):
    """Reading a memory: a session's events, and search."""

    def get_session(self, scope: Scope, *, after_seq: int | None = None) -> list[Event]:
        """The events of the session of *scope*, in sequence order (only those after
        *after_seq*, a sequence number from 0 to 2**63 - 1, when given).

        Raises :class:`~kenning.errors.InvalidInput` for an *after_seq* out of that range.
        """
        ...

    def search(
        self,
        scope: Scope,
        query: str,
        *,
        k: int = 10,
        min_score: float = 0.0,
        filters: Mapping[str, object] | None = None,
        kinds: Iterable[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        now: datetime | None = None,
    ) -> SearchResults:
        """Hybrid search (BM25 + vector cosine, fused, lifted by session and conversational
        partner, with an access bonus; see :class:`~kenning.search.fusion.FusionConfig`).

        Only records inside *scope* are ever scored: a tenant-only scope searches the tenant,
        a user scope that user's sessions, a session scope that session. Facts among the hits
        are weighed by how recently they were mentioned or used (``memory.facts.weigh``).

        Raises :class:`~kenning.errors.InvalidInput` for an empty or oversized query, a bad
        ``k`` or ``min_score``, and :class:`~kenning.errors.InvalidFilter` for bad filters.
        """
        ...


class MemoryAPI(ReadsAPI, WindowAPI, Protocol):
    """What an agent calls on a memory on every turn: add events, search, assemble a window,
    forget. The objects that own the rest are a memory's :class:`MemoryParts`."""

    def add_events(self, scope: Scope, events: Iterable[EventLike]) -> list[Event]:
        """Append events to the session of *scope*, atomically, and index them for search.

        Returns the events written; an event whose ``idempotency_key`` the session already
        holds is skipped (not returned), so a retry adds nothing twice. Pins extracted from
        the events are committed with them.

        Raises :class:`~kenning.errors.InvalidInput` (nothing is written) if any event is
        invalid. If the embedding model is unavailable the events are still recorded and the
        search over them is lexical until :meth:`kenning.Memory.reindex` embeds them.
        """
        ...

    def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        """Append events of several sessions (used by bulk import); returns the events
        written, in order, an event whose ``idempotency_key`` its session already holds
        skipped."""
        ...

    def forget(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        before: datetime | str | float | None = None,
    ) -> int:
        """Erase records in *scope* from every index (text, FTS, vectors, caches), and what
        derives from them: pins they were the source of, summaries covering them, token totals;
        erasing a whole session, user or tenant also erases its pins, summaries, task state,
        compaction jobs and audit log.

        With no options everything in *scope* is erased: a tenant, a user's data, or one
        session. Returns the number of records erased.
        """
        ...


class MemoryParts(Generic[C, F, P, R]):
    """The objects that own the rest of a memory's API, documented once for the embedded
    facade and both clients (each gives its own)."""

    def __init__(self, context: C, facts: F, procedures: P, retention: R) -> None:
        self._context = context
        self._facts = facts
        self._procedures = procedures
        self._retention = retention

    @property
    def context(self) -> C:
        """Pins, task state, summaries and compaction of sessions
        (:class:`~kenning.context.api.ContextAPI`)."""
        return self._context

    @property
    def facts(self) -> F:
        """Long-term facts of users: reads as of a time, history, remember, revoke; profiles
        and consent (:class:`~kenning.longterm.api.FactsAPI`). Extraction from new events
        runs in the background, where the memory is (``Settings.longterm.extract``)."""
        return self._facts

    @property
    def procedures(self) -> P:
        """Versioned playbooks bound to their tool schemas, drift reported
        (:class:`~kenning.longterm.api.ProceduresAPI`)."""
        return self._procedures

    @property
    def retention(self) -> R:
        """Tenant policies (consent defaults, retention), legal holds, and the purge
        (:class:`~kenning.longterm.api.RetentionAPI`; served, changes need the admin
        credential)."""
        return self._retention


class DocumentsAPI(Protocol):
    """JSON documents under (namespace, key) inside a tenant, as an application reaches them
    embedded or served: times are the memory's clock (the server's, served), and texts and
    queries given without vectors are embedded with the memory's own model.

    A scope is a tenant's (all its documents) or a user's (the documents that user owns);
    a session scope is refused. The rules are :class:`~kenning.store.protocol.DocumentStore`'s.
    """

    def embedding(self, scope: Scope) -> ModelInfo | None:
        """The model the memory embeds texts and queries with (None: it has none, and
        documents given without vectors are found by BM25 alone)."""
        ...

    def put(
        self, scope: Scope, writes: Sequence[DocumentWrite], *, model: str | None = None
    ) -> None:
        """Apply *writes* in order, in one transaction (a value of None deletes). With
        *model*, every text carries its vector of that model (stored at unit length, under the
        model's name and dims, ``name/dims``); without, the memory embeds the texts.

        Raises :class:`~kenning.errors.InvalidInput` (nothing written) for a vector of
        another length or model than the tenant's stored ones, or a text without its vector.
        """
        ...

    def get(
        self, scope: Scope, keys: Sequence[tuple[Namespace, str]], *, refresh: bool = False,
        omit_expired: bool = False,
    ) -> list[Document | None]:  # fmt: skip
        """The document under each (namespace, key), None where there is none (or it has
        expired, with *omit_expired*); *refresh* restarts the time to live of those found."""
        ...

    def search(
        self, scope: Scope, prefix: Namespace = (), *, filter: Mapping[str, Any] | None = None,
        limit: int = 10, offset: int = 0, query: str | None = None,
        vector: Sequence[float] | npt.NDArray[np.float32] | None = None,
        model: str | None = None, refresh: bool = False, omit_expired: bool = False,
    ) -> list[ScoredDocument]:  # fmt: skip
        """The page of documents in *prefix* (or below) that *filter* admits
        (:func:`~kenning.records.documents.parse_document_filter`): with a *query*, ranked by
        kenning's hybrid search (BM25 and the cosine to *vector* of *model*, or to the
        query embedded by the memory), each with its score; without, most recently updated
        first, unscored."""
        ...

    def namespaces(
        self, scope: Scope, *,
        conditions: Iterable[tuple[Literal["prefix", "suffix"], Namespace]] = (),
        max_depth: int | None = None, limit: int = 100, offset: int = 0,
        omit_expired: bool = False,
    ) -> list[Namespace]:  # fmt: skip
        """The page of namespaces holding a document that every prefix or suffix pattern of
        *conditions* matches (``"*"`` matching any one label), cut to *max_depth*."""
        ...

    def sweep(self, tenant: str) -> int:
        """Delete the tenant's documents whose time to live has run out (a legal hold keeps
        what it covers); return how many."""
        ...
