"""What every SQL store is built on: transactions per scope, the session-owner and erase
checks, and the hooks through which one concern's writes reach another's tables.

A backend subclasses :class:`SqlDatabase` with its connections (``_read``/``_write``) and its
:class:`~kenning.store.sql.dialect.Dialect`; the concerns (:mod:`kenning.store.sql.context`
and the others) are mixins over it, written once for every backend.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Self, TypeVar

import numpy as np
import numpy.typing as npt

from kenning.errors import ScopeConflict, StaleWrite
from kenning.records import Event, Scope
from kenning.store.records import EventWrite, ModelInfo
from kenning.store.sql.cross import CrossTenant
from kenning.store.sql.dialect import Dialect, Tx
from kenning.telemetry import span, tenant_attribute

__all__ = [
    "Erasure", "SqlDatabase", "check_generation", "check_owner", "erase_generation", "traced_tx",
]  # fmt: skip

G = TypeVar("G", bound=Callable[..., Iterator[Any]])


def traced_tx(name: str) -> Callable[[G], G]:
    """Trace a backend's transaction generator (under ``@contextmanager``) as the span *name*
    (``kenning.store.read``, ``kenning.store.write``): a child of the operation that opened
    it, with the backend's name and the scope's tenant (hashed)."""

    def wrap(function: G) -> G:
        @functools.wraps(function)
        def inner(self: SqlDatabase, scope: Scope | None, *args: Any, **kwargs: Any) -> Any:
            attributes = {"db.system.name": self._d.name}
            if scope is not None:
                attributes["kenning.tenant"] = tenant_attribute(scope.tenant)
            with span(name, attributes):
                yield from function(self, scope, *args, **kwargs)

        return inner  # type: ignore[return-value]

    return wrap


def check_owner(
    tx: Tx, d: Dialect, scope: Scope | None, *, claim: bool = False, lock: bool = False
) -> None:
    """Raise ScopeConflict if *scope*'s session belongs to another user of its tenant; with
    *claim*, a session nobody owns yet becomes *scope*'s user's; with *lock*, the session's
    row stays locked until the transaction ends (writes to one session are serial)."""
    if scope is None or scope.session is None or (scope.user is None and not lock):
        return
    sql = "SELECT user_id FROM sessions WHERE tenant = ? AND session = ?"
    if lock:
        sql += d.for_update
    key = (scope.tenant, scope.session)
    row = tx.execute(sql, key).fetchone()
    if row is None and claim and scope.user is not None:
        tx.execute(
            "INSERT INTO sessions (tenant, session, user_id, last_seq, created_at)"
            " VALUES (?, ?, ?, 0, ?) ON CONFLICT DO NOTHING",
            (*key, scope.user, d.time(datetime.now(UTC))),
        )
        # A concurrent claim may have won: whoever owns it now decides.
        row = tx.execute(sql, key).fetchone()
    if row is not None and scope.user is not None and row[0] != scope.user:
        raise ScopeConflict(
            f"session {scope.session!r} belongs to another user of tenant {scope.tenant!r}; "
            "session ids are unique within a tenant"
        )


def check_owner_once(tx: Tx, d: Dialect, scope: Scope | None, checked: set[Scope]) -> None:
    """:func:`check_owner` for a read, once per scope in one read transaction: its answer
    cannot change inside the transaction's snapshot, and a window's reads ask it often."""
    if scope is None or scope in checked:
        return
    check_owner(tx, d, scope)
    checked.add(scope)


def erase_generation(tx: Tx, tenant: str) -> int:
    """The tenant's newest entry in the log of erased rows (0 before any erase); a closed
    fact leaving the search partitions ('hide') erases nothing."""
    row = tx.execute(
        "SELECT coalesce(max(id), 0) FROM index_log WHERE tenant = ? AND op = 'erase'", (tenant,)
    ).fetchone()
    return 0 if row is None else int(row[0])


def check_generation(tx: Tx, tenant: str, generation: int | None) -> None:
    """Raise StaleWrite if records of *tenant* were erased since *generation* was read."""
    if generation is not None and erase_generation(tx, tenant) != generation:
        raise StaleWrite(
            f"records of tenant {tenant!r} were erased while this write was prepared; "
            "nothing was written (prepare it again from what is left)"
        )


@dataclass(frozen=True, slots=True)
class Erasure:
    """What one erase or purge removed, for the concerns whose records derive from it."""

    scope: Scope
    #: (id, session, seq) of each erased record; seq is None for a record outside a
    #: session's sequence (a fact).
    records: Sequence[tuple[str, str | None, int | None]]
    #: The sessions removed entirely.
    sessions: Sequence[str]
    #: The records expired under retention rather than being erased on request.
    purge: bool = False
    #: The whole scope was erased (not some ids, nor what came before a time).
    whole: bool = False


class SqlDatabase(ABC):
    """Transactions over one database, and the hooks between the store's concerns (each
    mixin overrides its own and calls ``super()``)."""

    _d: ClassVar[Dialect]
    _cross: ClassVar[CrossTenant]
    #: Columns a backend's own indexes need in a new item row (their values:
    #: :meth:`_item_extras`).
    _extra_item_columns: ClassVar[tuple[str, ...]] = ()

    _closed: bool

    @property
    def backend(self) -> str:
        """The backend's name (``sqlite``, ``postgresql``)."""
        return self._d.name

    def close(self) -> None:
        """Stop index builds (a file's complete HNSW graphs are saved first) and close the
        connections; later calls raise ``StoreError``. Closing twice is harmless."""
        if self._closed:
            return
        self._release_all()
        self._close_connections()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def _release_all(self) -> None:
        """Stop every partition's index work."""

    @abstractmethod
    def _close_connections(self) -> None:
        """Close the database connections for good."""

    @abstractmethod
    def _read(self, scope: Scope | None) -> AbstractContextManager[Tx]:
        """A read transaction for *scope* (None: the store's own bookkeeping, no tenant
        data): every statement inside sees one committed state, and the scope's session
        belongs to the scope's user."""

    @abstractmethod
    def _write(
        self, scope: Scope | None, *, claim: bool = False, exclusive: bool = False
    ) -> AbstractContextManager[Tx]:
        """One atomic transaction for *scope*: commit on success, roll back on any exception.
        The scope's session must belong to its user (with *claim* a new session becomes the
        user's); *exclusive*: no other write of the tenant runs meanwhile (erasure)."""

    @abstractmethod
    def _model_in(self, tx: Tx) -> ModelInfo | None:
        """The stored embedding model as *tx* sees it (a backend may remember it: the row is
        written once and never changed)."""

    @contextmanager
    def reading(self, scope: Scope) -> Iterator[None]:
        """A block whose reads for *scope* on this thread see one committed state
        (``SearchIndex.reading``, ``DocumentStore.reading``)."""
        # The calls inside find this thread's open read transaction and join it.
        with self._read(scope):
            yield

    def _read_all(self, scope: Scope | None, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one statement, read in a transaction of its own for *scope*."""
        with self._read(scope) as tx:
            return tx.execute(sql, params).fetchall()

    def _read_one(self, scope: Scope | None, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first row of one statement (None for none), read as :meth:`_read_all` reads."""
        with self._read(scope) as tx:
            return tx.execute(sql, params).fetchone()

    def _enter_tenant(self, tx: Tx, tenant: str) -> None:
        """Inside a write opened without a scope, act for *tenant* from here on (a server
        backend points row-level security at it and takes its lock)."""

    def _serialize(self, tx: Tx, tenant: str, name: str) -> None:
        """Writers of one thing of *tenant* (a user's facts, a playbook's versions) go one at
        a time until the transaction ends (a single-writer backend has this for free)."""

    # -- what backends write their own way -------------------------------------------------

    def _item_extras(self, scope: Scope, role: str, kind: str) -> tuple[object, ...]:
        """The values of :attr:`_extra_item_columns` for a new item."""
        return ()

    def _log_removed(
        self, tx: Tx, tenant: str, rowids: Sequence[int], *, op: str = "erase"
    ) -> None:
        """Record items that leave *tenant*'s search partitions: erased rows (``erase``),
        closed facts whose rows stay for their history (``hide``), or events whose index rows
        were rebuilt (``reindex``: they come back from their new rows). Every process's
        partitions follow this log by delta."""
        if rowids:
            tx.executemany(
                "INSERT INTO index_log (tenant, item, op) VALUES (?, ?, ?)",
                [(tenant, rowid, op) for rowid in rowids],
            )

    def _store_vectors(
        self, tx: Tx, tenant: str, vectors: Mapping[str, npt.NDArray[np.float32]]
    ) -> None:
        """Store checked unit vectors by the hash of their text (one already stored stays)."""
        tx.executemany(
            "INSERT INTO vectors (tenant, hash, vec) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [(tenant, digest, self._d.vector(vec)) for digest, vec in vectors.items()],
        )

    # -- hooks between the store's concerns ------------------------------------------------

    def _after_append(self, tenants: set[str]) -> None:
        """Called after events of *tenants* were committed (search partitions catch up)."""

    def _after_forget(self, tenant: str) -> None:
        """Called after records of *tenant* were erased and committed."""

    def _after_erase(self, tenant: str, erased: int) -> None:
        """Called after every erase or purge of *tenant* committed, *erased* records or none:
        what the backend keeps of erased text outside its tables goes too (SQLite's
        full-text segments and write-ahead log)."""

    def _after_reindex(self, tenant: str) -> None:
        """Called after events of *tenant* got new index rows (search partitions follow)."""

    def _derive_from_events(
        self, tx: Tx, written: Sequence[tuple[EventWrite, Event]], at: datetime
    ) -> None:
        """Inside the events' transaction: write what derives from them (their pins)."""

    def _before_erase(self, tx: Tx, scope: Scope) -> None:
        """Inside an erase's transaction, before anything is deleted (legal holds refuse)."""

    def _forget_derived(self, tx: Tx, erasure: Erasure) -> None:
        """Inside an erase's transaction: erase what derives from the erased records, and all
        state of the sessions it removed."""

    def _purge_more(self, tx: Tx, tenant: str, now: datetime) -> int:
        """Inside a purge's transaction: remove what else of *tenant* had expired by *now*
        (documents past their time to live), except what a legal hold covers; return how
        many."""
        return 0
