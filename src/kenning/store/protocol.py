"""The storage protocols, one per concern, and ``Store``, the backend that offers them all.

A store offers a few batched primitives; everything convenient is built on top of them in the
engines (:mod:`kenning.search`, :mod:`kenning.context`, :mod:`kenning.compaction`). Every read
takes a :class:`~kenning.records.Scope` and constrains by it inside the backend's query; there
is no read path without one. Callers depend on the narrowest protocol they use.

- :class:`EventLog`: the append-only episodic record, its vectors, and erasure.
- :class:`SearchIndex`: candidates of each search signal, whole-session scores, access stats.
- :class:`VectorBacklog`: vectors written after their events (texts still to embed).
- :class:`ContextState`: pins, summaries and their audit, task state, the token ledger.
- :class:`JobQueue`: the persisted compaction queue.
- :class:`FactStore`: long-term facts with validity, and the progress of fact extraction.
- :class:`PolicyStore`: consent, tenant policy, legal holds, the retention purge.
- :class:`ProcedureStore`: versioned playbooks bound to their tool schemas.
- :class:`Directory`: a tenant's users with their sessions' counts and activity (what an
  operator browses, e.g. the inspector page); not part of :class:`Store`.
- :class:`Credentials`: the server's API keys (hashed) and tenants' stored volume; not part
  of :class:`Store` (a backend offers it to be served).
- :class:`Archive`: a tenant's or a user's records exported and imported whole
  (``kenning-export``, :mod:`kenning.records.archive`); not part of :class:`Store`.
- :class:`DocumentStore`: JSON documents under namespaced keys (the LangGraph store's
  concern, :mod:`kenning.integrations.langgraph`); not part of :class:`Store`: both backends
  offer it, reached as ``memory.documents`` (:func:`documents_of`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kenning.errors import StoreError, Unsupported
from kenning.records import (
    ApiKey,
    AuditEntry,
    CompactionJob,
    Event,
    Fact,
    FactStatus,
    Filters,
    JobStatus,
    LegalHold,
    Pin,
    PinDraft,
    Procedure,
    ProcedureStatus,
    QueueStats,
    Quota,
    Scope,
    Summary,
    TaskState,
    TenantPolicy,
    TenantUsage,
    UserSettings,
)
from kenning.records.archive import ArchiveRecord, Exported
from kenning.records.documents import Document, DocumentQuery, Namespace, NamespaceQuery
from kenning.store.records import (
    Candidate,
    ContextSnapshot,
    DocumentCandidates,
    DocumentWrite,
    EventWrite,
    ExtractionJob,
    FactChanges,
    IndexChange,
    IndexLayout,
    Item,
    ModelInfo,
    SessionCandidate,
    SessionInfo,
    StoreStats,
    Usage,
    UserInfo,
)

__all__ = [
    "Archive",
    "ContextState",
    "Credentials",
    "Directory",
    "DocumentStore",
    "EventLog",
    "FactStore",
    "JobQueue",
    "PolicyStore",
    "ProcedureStore",
    "Reindexing",
    "SearchIndex",
    "Store",
    "VectorBacklog",
    "archive_of",
    "documents_of",
]


@runtime_checkable
class EventLog(Protocol):
    """Sessions' events in order, the vectors of their embedded texts, and erasure.

    Writes are atomic: a batch is committed whole or not at all.
    """

    def model(self) -> ModelInfo | None:
        """The embedding model the stored vectors belong to, or None before the first vector."""
        ...

    def missing_vectors(self, tenant: str, model: ModelInfo, hashes: Sequence[str]) -> list[str]:
        """Return the hashes among *hashes* that have no stored vector for *model* yet."""
        ...

    def append_events(
        self, writes: Sequence[EventWrite], *, model: ModelInfo | None = None,
        vectors: Mapping[tuple[str, str], npt.NDArray[np.float32]] | None = None,
        quota: Quota | None = None, pending: Mapping[tuple[str, str], str] | None = None,
    ) -> list[Event]:  # fmt: skip
        """Append events (assigning per-session sequence numbers), their pins and new
        vectors, in one transaction; return the events written, in order.

        *pending* maps ``(tenant, hash)`` to the text of a vector that is written later
        (:meth:`VectorBacklog.put_vectors`): each written event whose index rows use one of
        those hashes is recorded as waiting for it, in the same transaction.

        A write whose idempotency key its session already holds (or an earlier write of the
        batch carries) is skipped. *vectors* maps ``(tenant, embed_hash)`` to a unit vector of
        *model*. The events written are counted in each tenant's usage in the same
        transaction; with *quota*, a batch that would take a tenant past it raises
        ``QuotaExceeded`` and nothing is written (concurrent writers, in any process, pass
        the check one at a time).
        """
        ...

    def events(
        self, scope: Scope, *, ids: Sequence[str] | None = None, after_seq: int | None = None,
        limit: int | None = None, tail: int | None = None, tools: bool = False,
    ) -> list[Event]:  # fmt: skip
        """Events in *scope* in order (seq in a session; time across sessions).

        Optionally only *ids*, those after a sequence number, the first *limit*, or the last
        *tail* (still returned in order); with *tools*, only tool calls and results (events
        with a tool name, or of role ``tool``).
        """
        ...

    def user_sessions(self, scope: Scope) -> list[SessionInfo]:
        """The sessions of the user of *scope*, oldest first."""
        ...

    def session_owners(self, tenant: str, sessions: Sequence[str]) -> dict[str, str]:
        """The user who owns each of *sessions* of *tenant* (sessions nobody has written to
        are left out): one read for many sessions, e.g. to refuse a batch before writing."""
        ...

    def items(self, scope: Scope, ids: Sequence[str]) -> list[Item]:
        """The searchable items with these ids inside *scope* (unknown ids are left out)."""
        ...

    def token_counts(self, scope: Scope, ids: Sequence[str], encoding: str) -> dict[str, int]:
        """Cached token counts of these records for *encoding* (missing ones are left out)."""
        ...

    def put_token_counts(self, scope: Scope, encoding: str, counts: Mapping[str, int]) -> None:
        """Cache token counts of records for *encoding*."""
        ...

    def erase_generation(self, tenant: str) -> int:
        """A number that changes whenever records of *tenant* are erased: a writer that
        derives state from events reads it first and passes it to the write, which is refused
        (``StaleWrite``) if an erase came in between."""
        ...

    def forget(self, scope: Scope, *, ids: Sequence[str] | None = None,
               before: datetime | None = None) -> int:  # fmt: skip
        """Erase records in *scope* (all, or *ids*, or those before a time) from every index,
        with what derives from them (pins, summaries, ledgers, jobs of emptied sessions).

        Returns the number of records erased.
        """
        ...


@runtime_checkable
class SearchIndex(Protocol):
    """Ranked candidates of each signal; only records inside the scope and filters are scored."""

    def lexical(
        self, scope: Scope, query: str, *, filters: Filters, limit: int,
        also: Sequence[Filters] = (), also_limit: int | None = None,
    ) -> list[Candidate]:  # fmt: skip
        """BM25-ranked candidates for the words of *query*: the best *limit* under *filters*,
        then the best *also_limit* (default *limit*) under each of *also* that are not listed
        yet (e.g. the time a query names, whose records may match too weakly to be among the
        best of the scope).
        Each candidate of a session's turn carries its ``position`` (session, sequence number,
        author, whether it asks): the search lifts a question and its answer with it before
        loading either; a candidate without one takes no part in that lift."""
        ...

    def nearest(
        self, scope: Scope, vector: npt.NDArray[np.float32], *, model: ModelInfo, filters: Filters,
        limit: int, also: Sequence[Filters] = (), also_limit: int | None = None,
    ) -> list[Candidate]:  # fmt: skip
        """Cosine-ranked candidates, with positions as :meth:`lexical` gives them; only vectors
        inside *scope* and *filters* are scored, and those under *also* are added as
        :meth:`lexical` adds them. A store opened with a reply weight scores an answer to
        someone else's question by its vector mixed with the question's
        (:mod:`kenning.store.replies`)."""
        ...

    def sessions(
        self, scope: Scope, query: str, vector: npt.NDArray[np.float32] | None, *,
        model: ModelInfo | None, sessions: Sequence[str | None], filters: Filters,
    ) -> list[SessionCandidate]:  # fmt: skip
        """The given *sessions* that lie inside *scope*, each scored as a whole document made
        of its records that *filters* admit (nothing a filter excludes moves a score)."""
        ...

    def touch(self, scope: Scope, ids: Sequence[str], *, at: datetime) -> None:
        """Record an access to these items (for the access bonus)."""
        ...

    def reading(self, scope: Scope) -> AbstractContextManager[None]:
        """A block whose calls to this store for *scope*, made by this thread, read one
        committed state: a search's candidates, session scores and records agree, and the
        store opens one read transaction instead of one per call. Nothing is written inside
        (``touch`` comes after). Raises ``ScopeConflict`` as the calls inside would."""
        ...


@runtime_checkable
class VectorBacklog(Protocol):
    """Vectors written after their events: the texts committed events wait for, and the
    write that delivers them (:mod:`kenning.vectors`)."""

    def pending_texts(self, tenant: str, *, limit: int) -> dict[str, str]:
        """Up to *limit* texts (by hash) that the tenant's committed events still wait for:
        those of a writer that has not delivered yet, failed, or died."""
        ...

    def put_vectors(
        self, tenant: str, model: ModelInfo, vectors: Mapping[str, npt.NDArray[np.float32]]
    ) -> int:
        """Store the vectors (hash -> unit vector of *model*) that the tenant's events wait
        for, in one transaction, and return how many events got them. A vector nothing waits
        for any more (its events were erased, or another writer delivered it) is not stored.
        Every process's search partition indexes those events again with their vectors."""
        ...


@runtime_checkable
class Reindexing(Protocol):
    """Rebuilding events' index rows in place: after the settings that decide what is embedded
    change (sentence units, a turn's context, chunk size), or for events stored while the
    embedding model was down."""

    def index_layouts(self, tenant: str, *, after: int, limit: int) -> list[IndexLayout]:
        """Up to *limit* of the tenant's events whose cursor is above *after*, in cursor
        order, each with how it is indexed now (a session's events come in sequence order)."""
        ...

    def reindex_events(
        self, tenant: str, changes: Sequence[IndexChange], *, model: ModelInfo | None = None,
        vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
    ) -> int:  # fmt: skip
        """Replace the index rows of the tenant's events named by *changes*, with the new
        *vectors* (hash -> unit vector of *model*), in one transaction; return how many
        events were rewritten. An event erased since it was read is skipped. Every process's
        search partition indexes those events again from the new rows (and the answers mixed
        with one of them, :mod:`kenning.store.replies`)."""
        ...


@runtime_checkable
class ContextState(Protocol):
    """A session's working-context state: pins, summaries and their audit log, task state and
    the running token totals of its messages."""

    def reading(self, scope: Scope) -> AbstractContextManager[None]:
        """A block whose reads for *scope*, made by this thread through this store, see one
        committed state in one read transaction (a window's pins, summaries, tail and
        profile agree). A write inside commits on its own and is not seen by the reads
        that follow it in the block. Raises ``ScopeConflict`` as the reads inside would."""
        ...

    def put_pins(
        self, scope: Scope, drafts: Sequence[PinDraft], *, at: datetime,
        mode: Literal["add", "set"] = "set", generation: int | None = None,
    ) -> list[Pin]:  # fmt: skip
        """Write pins of the session of *scope* atomically; return the versions written.

        ``mode="set"``: a draft whose key exists with another value or status becomes a new
        version (the old one stays in history). ``mode="add"`` (extraction): existing keys are
        left alone, so re-extracting old text never reopens a closed pin. With *generation*
        (see ``EventLog.erase_generation``) the write is refused if an erase came since.
        """
        ...

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        """Current pins in *scope* (with *history*, every version), in write order."""
        ...

    def put_summary(
        self, summary: Summary, *, replaces: Sequence[str] = (),
        guard_pins: Sequence[PinDraft] = (), audit: Sequence[AuditEntry] = (),
        generation: int | None = None,
    ) -> Summary:  # fmt: skip
        """In one transaction: add the amnesia guard's pins, the summary, retire the summaries
        it *replaces*, and append the audit entries. With *generation* the write is refused
        (``StaleWrite``) if records of the tenant were erased since it was read."""
        ...

    def summaries(self, scope: Scope, *, include_replaced: bool = False) -> list[Summary]:
        """Active summaries in *scope*, by session and covered range."""
        ...

    def audit(self, entries: Sequence[AuditEntry]) -> None:
        """Append entries to the compaction audit log."""
        ...

    def audit_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        """The latest *limit* audit entries in *scope*, oldest first."""
        ...

    def task_state(self, scope: Scope) -> TaskState:
        """The session's task state (an empty one, version 0, if never set)."""
        ...

    def put_task_state(
        self, scope: Scope, state: TaskState, *, expected: int, at: datetime
    ) -> bool:
        """Store *state* if the stored version is still *expected*; False (nothing written)
        if another writer got there first. The merge rules live above the store."""
        ...

    def ledger_head(self, scope: Scope, encoding: str) -> tuple[int, int]:
        """(last counted sequence number, total message tokens through it) of the session."""
        ...

    def extend_ledger(self, scope: Scope, encoding: str, counts: Sequence[tuple[int, int]]) -> None:
        """Append ``(seq, message tokens)`` of newer events to the session's running totals."""
        ...

    def ledger_cum(self, scope: Scope, encoding: str, seq: int) -> int:
        """Message tokens of the session's events through *seq*."""
        ...

    def context_snapshot(
        self, scope: Scope, encoding: str, *, room: int, summarized: bool = True
    ) -> ContextSnapshot:
        """Task state, current pins, active summaries, the ledger's total and the tokens the
        summaries cover, and the tail after them that fits in *room* — one consistent read.
        With *summarized* False the session is read as if nothing were summarized: no
        summaries, and a tail that may reach back to its first event."""
        ...

    def ledger_tail(
        self, scope: Scope, encoding: str, *, room: int, after_seq: int = 0
    ) -> list[tuple[int, int]]:
        """``(seq, tokens)`` of the newest events after *after_seq* that fit in *room*."""
        ...

    def add_usage(
        self, scope: Scope, model: str, *, input_tokens: int, output_tokens: int, cost: float,
        calls: int = 1,
    ) -> None:  # fmt: skip
        """Add to the session's running token usage (and cost) with *model*."""
        ...

    def usage(self, scope: Scope) -> list[Usage]:
        """The session's running token usage, per model."""
        ...


@runtime_checkable
class JobQueue(Protocol):
    """The persisted queue of compaction jobs: at most one open job per session, leased."""

    def enqueue_compaction(
        self, scope: Scope, *, model: str, budget: int, reason: str, at: datetime
    ) -> CompactionJob | None:
        """Queue a compaction of the session; None if one is already pending or running."""
        ...

    def claim_compaction(self, *, at: datetime, lease_s: float) -> CompactionJob | None:
        """Take the oldest pending job, or a running one whose lease expired (its worker died),
        under a fresh lease token (``job.lease``) valid for *lease_s* seconds.

        Two workers, in one process or several, never hold the same job. The queue is the
        store's own machinery, not a read of tenant data, so it has no scope.
        """
        ...

    def renew_compaction(self, job_id: int, *, lease: str, at: datetime, lease_s: float) -> bool:
        """Extend a held lease to *at* + *lease_s*; False if *lease* no longer holds the job
        (it expired and another worker took it over): the caller must stop."""
        ...

    def finish_compaction(
        self, job_id: int, *, status: JobStatus, at: datetime, error: str | None = None,
        lease: str | None = None,
    ) -> bool:  # fmt: skip
        """Record how a claimed job ended (``pending`` hands it back to the queue).

        With *lease*, only while that lease still holds the job; returns whether it was
        recorded.
        """
        ...

    def compaction_jobs(self, scope: Scope) -> list[CompactionJob]:
        """Every job of *scope*, oldest first."""
        ...

    def pending_compactions(self) -> int:
        """Jobs pending or running, over the whole store."""
        ...

    def queue_stats(self) -> QueueStats:
        """Jobs pending and running over the whole store, and the oldest pending job's age."""
        ...


@runtime_checkable
class Directory(Protocol):
    """Who a tenant holds, for browsing: read-only, always inside one tenant."""

    def tenant_users(
        self, tenant: str, *, contains: str | None = None, limit: int = 100
    ) -> list[UserInfo]:
        """The users of *tenant* with sessions, the most recently active first (ties by id),
        at most *limit*; with *contains*, only users whose id holds it (any case)."""
        ...


@runtime_checkable
class Credentials(Protocol):
    """The server's API keys and tenants' usage. Keys are looked up by id (the server's auth
    machinery, not a read of tenant data); only a hash of a key's secret is stored."""

    def put_api_key(self, key: ApiKey, *, secret_hash: str) -> None:
        """Store a new key (its id must be new)."""
        ...

    def api_key(self, key_id: str) -> tuple[ApiKey, str] | None:
        """The key *key_id* and its secret's hash, revoked or not; None if unknown."""
        ...

    def api_keys(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (of *tenant*), oldest first."""
        ...

    def revoke_api_key(self, key_id: str, *, at: datetime) -> ApiKey | None:
        """Revoke the key (revoking twice keeps the first time); None if unknown."""
        ...

    def tenant_usage(self, tenant: str) -> TenantUsage:
        """The tenant's stored events and content characters (its counter, which every
        append and erase keeps in their transaction)."""
        ...


@runtime_checkable
class FactStore(Protocol):
    """Long-term facts of a tenant's users: consolidated writes, reads, extraction progress."""

    def apply_facts(
        self, scope: Scope, changes: FactChanges, *, at: datetime, model: ModelInfo | None = None,
        vectors: Mapping[str, npt.NDArray[np.float32]] | None = None, generation: int | None = None,
        lease: str | None = None,
    ) -> list[Fact]:  # fmt: skip
        """Apply one consolidation step atomically for the user of *scope* (the session is the
        facts' source); StaleWrite if the expected active facts changed, or (with
        *generation*) if records of the tenant were erased since. *vectors* maps the hash of
        a new fact's statement to its vector. With *lease* (an extraction claim's token, see
        :meth:`claim_extraction`), ``LeaseLost`` and nothing written unless that claim still
        holds the session's extraction, checked in the same transaction. Returns the facts
        written or changed."""
        ...

    def facts(
        self, scope: Scope, *, ids: Sequence[str] | None = None, subject: str | None = None,
        keys: Sequence[tuple[str, str, str]] | None = None, as_of: datetime | None = None,
        statuses: Sequence[FactStatus] | None = (FactStatus.ACTIVE,), limit: int | None = None,
        sources: Sequence[str] | None = None,
    ) -> list[Fact]:  # fmt: skip
        """Facts in *scope* (a tenant, a user, or facts sourced from one session), oldest
        first: active ones by default, any *statuses*, or what was valid *as_of* a time; with
        *sources*, only facts stated in one of these events."""
        ...

    def fact_history(self, scope: Scope, fact_id: str) -> list[Fact]:
        """Every version of the fact's subject, attribute and qualifier, oldest first."""
        ...

    def pending_extractions(self, *, limit: int = 100) -> list[ExtractionJob]:
        """Sessions with events not yet read for facts."""
        ...

    def claim_extraction(self, *, at: datetime, lease_s: float) -> ExtractionJob | None:
        """Lease a session with unread events (or one whose reader's lease ran out) under a
        fresh token (``job.lease``) valid for *lease_s* seconds. Two readers, in one process
        or several, never hold the same session."""
        ...

    def renew_extraction(self, job: ExtractionJob, *, at: datetime, lease_s: float) -> bool:
        """Extend *job*'s lease to *at* + *lease_s*; False if its token no longer holds the
        session (another reader took it over): the caller must stop."""
        ...

    def finish_extraction(self, job: ExtractionJob, *, done_seq: int) -> bool:
        """Record the session's events through *done_seq* as read and drop the lease; when
        *job* carries a lease token, only while that token still holds the session. Returns
        whether it was recorded."""
        ...

    def extraction_stats(self) -> QueueStats:
        """Sessions with unread events over the whole store: ``pending`` (no reader holds
        them), ``running`` (a reader's lease, live or expired), and when the oldest unread
        event was written (``oldest_pending``)."""
        ...


@runtime_checkable
class PolicyStore(Protocol):
    """What a tenant allows, what each user agreed to, and what may not be erased."""

    def tenant_policy(self, tenant: str) -> TenantPolicy: ...

    def put_tenant_policy(self, tenant: str, policy: TenantPolicy) -> None: ...

    def user_settings(self, scope: Scope) -> UserSettings:
        """The choices of the user of *scope* (None fields: the tenant's default)."""
        ...

    def put_user_settings(self, scope: Scope, settings: UserSettings) -> None: ...

    def holds(self, tenant: str) -> list[LegalHold]: ...

    def put_hold(self, scope: Scope, reason: str) -> LegalHold:
        """Hold a tenant, a user or a session: erase and purge of it are refused."""
        ...

    def release_hold(self, scope: Scope) -> bool: ...

    def purge(self, tenant: str, *, now: datetime, episodes_before: datetime | None) -> int:
        """Remove the tenant's expired records (and events before *episodes_before*) from
        every index, except what a legal hold covers; return how many."""
        ...

    def purge_log(self, tenant: str) -> dict[str, int]:
        """What the purge removed over the tenant's life, by kind."""
        ...

    def stats(self, scope: Scope, *, now: datetime) -> StoreStats:
        """Counts of what *scope* (a tenant or a user) holds."""
        ...


@runtime_checkable
class ProcedureStore(Protocol):
    """Versioned playbooks of a tenant, each bound to the hash of its tool schemas."""

    def put_procedure(self, procedure: Procedure) -> Procedure:
        """Store *procedure* as the next version of its name (the version is assigned)."""
        ...

    def procedures(
        self, tenant: str, *, name: str | None = None,
        statuses: Sequence[ProcedureStatus] | None = None,
    ) -> list[Procedure]:  # fmt: skip
        """The tenant's procedures, by name and version."""
        ...

    def set_procedure_status(
        self, tenant: str, procedure_id: str, status: ProcedureStatus
    ) -> Procedure:
        """Change a version's status; activating one retires its name's other active ones."""
        ...


@runtime_checkable
class Store(
    EventLog, SearchIndex, Reindexing, VectorBacklog, ContextState, JobQueue, FactStore,
    PolicyStore, ProcedureStore, Protocol,
):  # fmt: skip
    """A backend that offers every protocol over one database.

    Writes are atomic: a batch is committed whole or not at all. Reads take a scope and never
    return a record outside it.
    """

    @property
    def backend(self) -> str:
        """The backend's name (``sqlite``)."""
        ...

    def close(self) -> None:
        """Release the backend's connections and threads; later calls raise ``StoreError``."""
        ...


@runtime_checkable
class DocumentStore(Protocol):
    """JSON documents under (namespace, key) inside a tenant, with the texts search finds them
    by (:mod:`kenning.records.documents` holds the rules every backend shares).

    Every call takes a scope: a tenant's scope reads all its documents, a user's scope only
    the documents that user owns (a session scope is refused). Writes are atomic. A document
    is erased by ``forget`` of its tenant or its owner, by the retention purge and the sweep
    once its time to live has run out (unless a legal hold covers it), and by a delete.
    """

    def put_documents(
        self, scope: Scope, writes: Sequence[DocumentWrite], *, at: datetime,
        model: str | None = None,
    ) -> None:  # fmt: skip
        """Apply *writes* as if in order, in one transaction: store each document (replacing
        one keeps its ``id`` and ``created_at``; ``updated_at`` becomes *at*) with its index
        texts, or delete it (value None). *model* names the embedding model of the texts'
        vectors; a tenant's vectors all come from one model (another is refused with
        ``InvalidInput`` while vectors of the first remain)."""
        ...

    def get_documents(
        self, scope: Scope, keys: Sequence[tuple[Namespace, str]], *,
        refresh_at: datetime | None = None, live_at: datetime | None = None,
    ) -> list[Document | None]:  # fmt: skip
        """The document under each (namespace, key), None where there is none (or, with
        *live_at*, it had expired by then). With *refresh_at*, the time to live of each
        document found restarts at that time."""
        ...

    def find_documents(
        self, scope: Scope, query: DocumentQuery, *, refresh_at: datetime | None = None
    ) -> list[Document]:
        """The page of documents *query* admits, most recently updated first (ties by
        namespace and key); *refresh_at* as :meth:`get_documents`."""
        ...

    def document_candidates(
        self, scope: Scope, query: DocumentQuery, *, text: str,
        vector: npt.NDArray[np.float32] | None = None, model: str | None = None,
        depth: int | None = None,
    ) -> DocumentCandidates:  # fmt: skip
        """What a ranked search for *text* (and its unit *vector* of *model*) scores among
        the documents *query* admits (its page is not applied: ranking comes first): those
        the best *depth* of either signal proposes (None: all), each with its score in every
        signal it has one in, and the others unranked (left out when the signals already
        propose *depth*). BM25 statistics are the tenant's own. A vector of another model than
        the tenant's raises ``InvalidInput``."""
        ...

    def documents_by_id(
        self, scope: Scope, ids: Sequence[str], *, refresh_at: datetime | None = None
    ) -> list[Document]:
        """The documents with these ids in *scope*, in the order of *ids* (unknown ids are
        left out); *refresh_at* as :meth:`get_documents`."""
        ...

    def reading(self, scope: Scope) -> AbstractContextManager[None]:
        """A block whose reads for *scope* on this thread see one committed state (a search's
        candidates and the documents it loads agree); as :meth:`SearchIndex.reading`."""
        ...

    def document_namespaces(self, scope: Scope, query: NamespaceQuery) -> list[Namespace]:
        """The page of namespaces holding a document that *query* lists."""
        ...

    def sweep_documents(self, tenant: str, *, now: datetime) -> int:
        """Delete the tenant's documents whose time to live had run out by *now*, except
        what a legal hold covers; return how many."""
        ...


def documents_of(store: object) -> DocumentStore:
    """*store* as a :class:`DocumentStore`; ``StoreError`` if its backend offers none."""
    if not isinstance(store, DocumentStore):
        raise StoreError(f"{type(store).__name__} does not store namespaced documents")
    return store


@runtime_checkable
class Archive(Protocol):
    """A tenant's (or one user's) records as ``kenning-export`` records, and such records
    written back whole (:mod:`kenning.records.archive`)."""

    def export_records(self, scope: Scope, *, vectors: bool = False) -> Exported:
        """Every record of *scope* (a tenant, or a user of it), read in one transaction; with
        *vectors*, the vectors of its records too."""
        ...

    def import_records(
        self, tenant: str, records: Sequence[ArchiveRecord], *, model: ModelInfo | None = None,
        document_model: str | None = None,
    ) -> dict[str, int]:  # fmt: skip
        """Write *records* into *tenant* in one transaction, keeping their ids and times;
        rows already there are left alone (importing twice adds nothing). Returns the rows
        added per kind."""
        ...


def archive_of(store: object) -> Archive:
    """*store* as an :class:`Archive`; ``Unsupported`` if its backend offers none."""
    if not isinstance(store, Archive):
        raise Unsupported(f"{type(store).__name__} cannot export or import records")
    return store
