"""Namespaced documents (:class:`~kenning.store.protocol.DocumentStore`), on every SQL backend.

A mixin of the stores (:class:`~kenning.store.sql.database.SqlDatabase`). The rules (checking
namespaces and keys, filters, patterns, when a document expires) live once in
:mod:`kenning.records.documents`; this module only reads and writes rows.

Three tables: ``documents`` (one row per namespace and key, the namespace stored as text whose
prefixes are ranges), ``document_texts`` (what a document is found by, with each text's
vector) and ``document_state`` (per tenant: a version that every change of its documents
bumps, and the embedding model of their vectors). A ranked search scores a tenant's texts in
memory (:class:`~kenning.store.document_index.DocumentIndex`), built again when the version it
was built from is no longer the stored one, so every process sees every other's writes.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, InvalidScope
from kenning.records import Scope
from kenning.records.documents import (
    Document,
    DocumentQuery,
    Namespace,
    NamespaceQuery,
    check_key,
    check_namespace,
    decode_namespace,
    encode_namespace,
    expiry,
    is_expired,
    list_namespaces,
    prefix_range,
)
from kenning.store.document_index import DocumentIndex, IndexRow, vector_bytes
from kenning.store.records import DocumentCandidates, DocumentWrite
from kenning.store.sql.database import Erasure, SqlDatabase
from kenning.store.sql.dialect import Tx

__all__ = ["DocumentTables"]

_COLUMNS = (
    "id, tenant, namespace, key, value, created_at, updated_at, user_id, ttl_minutes, expires_at"
)
_CACHED_TENANTS = 64  # tenants whose search index a process keeps built


def _reader(scope: Scope) -> Scope:
    """The scope a document read or write runs in: a tenant's or a user's, never a session's."""
    if not isinstance(scope, Scope):
        raise InvalidInput("scope must be a kenning.Scope")
    if scope.session is not None:
        raise InvalidScope("documents belong to a tenant or a user, not to a session")
    return Scope(scope.tenant, scope.user)


class _IndexCache:
    """The search indexes a store keeps built, one per tenant, the newest version kept."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[str, DocumentIndex] = {}

    def get(self, tenant: str, version: int) -> DocumentIndex | None:
        with self._lock:
            found = self._indexes.get(tenant)
        return found if found is not None and found.version == version else None

    def put(self, tenant: str, index: DocumentIndex) -> None:
        with self._lock:
            if len(self._indexes) >= _CACHED_TENANTS and tenant not in self._indexes:
                self._indexes.pop(next(iter(self._indexes)))
            current = self._indexes.get(tenant)
            if current is None or current.version <= index.version:
                self._indexes[tenant] = index


_CREATING = threading.Lock()


class DocumentTables(SqlDatabase):
    """JSON documents under (namespace, key), their index texts and TTL."""

    _doc_cache: _IndexCache

    def _indexes(self) -> _IndexCache:
        # Created on first use: the backends' constructors do not chain through the mixins.
        found = self.__dict__.get("_doc_cache")
        if found is None:
            with _CREATING:
                found = self.__dict__.get("_doc_cache")
                if found is None:
                    found = self._doc_cache = _IndexCache()
        return found

    # -- writes ----------------------------------------------------------------------------

    def put_documents(
        self, scope: Scope, writes: Sequence[DocumentWrite], *, at: datetime,
        model: str | None = None,
    ) -> None:  # fmt: skip
        owner = _reader(scope)
        writes = list(writes)
        if not all(isinstance(w, DocumentWrite) for w in writes):
            raise InvalidInput("writes must be DocumentWrite records")
        if owner.user is not None and any(w.user != owner.user for w in writes):
            raise InvalidScope(f"a write in user {owner.user!r}'s scope must belong to them")
        vectors = any(t.vector is not None for w in writes for t in w.texts)
        if vectors and not model:
            raise InvalidInput("vectors were given without the model they belong to")
        if not writes:
            return
        deleted, kept = _net(writes)
        with self._write(Scope(owner.tenant)) as tx:
            self._bump(tx, owner.tenant, model if vectors else None)
            self._store_batch(tx, owner.tenant, deleted, kept, at)

    def _store_batch(
        self, tx: Tx, tenant: str, deleted: Sequence[tuple[str, str]],
        kept: Sequence[DocumentWrite], at: datetime,
    ) -> None:  # fmt: skip
        """Delete *deleted* (stored namespace, key), then store *kept* (each key once) with
        their texts, a statement for each step over the whole batch."""
        d = self._d
        where = "tenant = ? AND namespace = ? AND key = ?"
        if deleted:  # their texts go with them (ON DELETE CASCADE)
            tx.executemany(f"DELETE FROM documents WHERE {where}",
                           [(tenant, ns, key) for ns, key in deleted])  # fmt: skip
        if not kept:
            return
        rows = [(encode_namespace(w.namespace), w) for w in kept]
        now = d.time(at)
        tx.executemany(
            f"INSERT INTO documents ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (tenant, namespace, key) DO UPDATE SET value = excluded.value,"
            " updated_at = excluded.updated_at, user_id = excluded.user_id,"
            " ttl_minutes = excluded.ttl_minutes, expires_at = excluded.expires_at",
            [(doc_id, tenant, ns, w.key, d.json_text(w.value_json or "{}"), now, now, w.user,
              w.ttl_minutes, d.opt_time(expiry(at, w.ttl_minutes)))
             for doc_id, (ns, w) in zip(_new_ids(len(rows)), rows, strict=True)],
        )  # fmt: skip
        # A replaced document's old texts go; a new one has none.
        tx.executemany(f"DELETE FROM document_texts WHERE {where}",
                       [(tenant, ns, w.key) for ns, w in rows])  # fmt: skip
        texts = [(tenant, ns, w.key, n, t.path, t.text, vector_bytes(t.vector))
                 for ns, w in rows for n, t in enumerate(w.texts)]  # fmt: skip
        if texts:
            tx.executemany(
                "INSERT INTO document_texts (tenant, namespace, key, n, path, text, vec)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                texts,
            )

    def _bump(self, tx: Tx, tenant: str, model: str | None) -> None:
        """A new version of the tenant's documents (cached search indexes are stale); with
        *model*, check it is the model of the tenant's stored vectors (or becomes it)."""
        row = tx.execute(
            "INSERT INTO document_state (tenant, version, model) VALUES (?, 1, ?)"
            " ON CONFLICT (tenant) DO UPDATE SET version = document_state.version + 1"
            " RETURNING model",
            (tenant, model),
        ).fetchone()
        stored = row[0]
        if model is None or stored == model:
            return
        if (
            stored is not None
            and tx.execute(
                "SELECT 1 FROM document_texts WHERE tenant = ? AND vec IS NOT NULL LIMIT 1",
                (tenant,),
            ).fetchone()
        ):
            raise InvalidInput(
                f"tenant {tenant!r}'s documents are embedded with {stored!r}, not {model!r}: "
                "mixing models is refused (embed with the same model, or delete those "
                "documents first)"
            )
        tx.execute("UPDATE document_state SET model = ? WHERE tenant = ?", (model, tenant))

    # -- reads -----------------------------------------------------------------------------

    def _document(self, row: Sequence[Any]) -> Document:
        d = self._d
        return Document(
            id=row[0], tenant=row[1], namespace=decode_namespace(row[2]), key=row[3],
            value=d.read_json(row[4]), created_at=d.read_time(row[5]),
            updated_at=d.read_time(row[6]), user=row[7], ttl_minutes=row[8],
            expires_at=d.read_opt_time(row[9]),
        )  # fmt: skip

    def _owned(self, scope: Scope) -> tuple[str, list[Any]]:
        """The tenancy constraint of a document read: the tenant, and a user's own."""
        if scope.user is None:
            return "tenant = ?", [scope.tenant]
        return "tenant = ? AND user_id = ?", [scope.tenant, scope.user]

    def get_documents(
        self, scope: Scope, keys: Sequence[tuple[Namespace, str]], *,
        refresh_at: datetime | None = None, live_at: datetime | None = None,
    ) -> list[Document | None]:  # fmt: skip
        scope = _reader(scope)
        wanted = [(encode_namespace(check_namespace(ns)), check_key(key)) for ns, key in keys]
        owned, params = self._owned(scope)
        found: list[Document | None] = []
        with self._read(scope) as tx:
            for ns, key in wanted:
                row = tx.execute(
                    f"SELECT {_COLUMNS} FROM documents WHERE {owned} AND namespace = ? AND key = ?",
                    [*params, ns, key],
                ).fetchone()
                doc = None if row is None else self._document(row)
                found.append(None if doc is None or is_expired(doc, live_at) else doc)
        return self._refreshed(scope, found, refresh_at)

    def _refreshed(
        self, scope: Scope, docs: list[Document | None], at: datetime | None
    ) -> list[Document | None]:
        """*docs*, each with a time to live restarted at *at* (when given)."""
        due = [doc for doc in docs if doc is not None and doc.ttl_minutes is not None]
        if at is None or not due:
            return docs
        new = {doc.id: expiry(at, doc.ttl_minutes) for doc in due}
        with self._write(Scope(scope.tenant)) as tx:
            tx.executemany(
                "UPDATE documents SET expires_at = ? WHERE tenant = ? AND id = ?",
                [(self._d.opt_time(when), scope.tenant, doc_id) for doc_id, when in new.items()],
            )
        return [
            doc if doc is None or doc.id not in new else replace(doc, expires_at=new[doc.id])
            for doc in docs
        ]

    def _where(
        self, scope: Scope, prefix: Namespace, live_at: datetime | None
    ) -> tuple[str, list[Any]]:
        where, params = self._owned(scope)
        bounds = prefix_range(prefix)
        if bounds is not None:
            where += " AND namespace >= ? AND namespace < ?"
            params += list(bounds)
        if live_at is not None:
            where += " AND (expires_at IS NULL OR expires_at > ?)"
            params.append(self._d.time(live_at))
        return where, params

    def find_documents(
        self, scope: Scope, query: DocumentQuery, *, refresh_at: datetime | None = None
    ) -> list[Document]:
        scope = _reader(scope)
        d = self._d
        where, params = self._where(scope, query.prefix, query.live_at)
        sql = (
            f"SELECT {_COLUMNS} FROM documents WHERE {where}"
            f" ORDER BY updated_at DESC, {d.text_order('namespace')}, {d.text_order('key')}"
        )
        if not query.filter:
            sql += " LIMIT ? OFFSET ?"
            params += [query.limit, query.offset]
        rows = self._read_all(scope, sql, params)
        docs = [self._document(r) for r in rows]
        if query.filter:
            kept = [doc for doc in docs if query.filter.matches(doc.value)]
            docs = kept[query.offset : query.offset + query.limit]
        return [doc for doc in self._refreshed(scope, list(docs), refresh_at) if doc is not None]

    def documents_by_id(
        self, scope: Scope, ids: Sequence[str], *, refresh_at: datetime | None = None
    ) -> list[Document]:
        scope = _reader(scope)
        # Found by id, the tenant checked on each row (not scanned by: see the schemas).
        owned, params = self._owned(scope)
        owned = owned.replace("tenant = ?", f"{self._d.not_indexed('tenant')} = ?", 1)
        found: dict[str, Document] = {}
        with self._read(scope) as tx:
            for part in self._d.batches(list(dict.fromkeys(ids))):
                cond, more = self._d.one_of("id", part)
                for row in tx.execute(
                    f"SELECT {_COLUMNS} FROM documents WHERE {owned} AND {cond}", [*params, *more]
                ):
                    found[row[0]] = self._document(row)
        docs: list[Document | None] = [found[i] for i in ids if i in found]
        return [doc for doc in self._refreshed(scope, docs, refresh_at) if doc is not None]

    def document_namespaces(self, scope: Scope, query: NamespaceQuery) -> list[Namespace]:
        scope = _reader(scope)
        where, params = self._where(scope, query.literal_prefix(), query.live_at)
        rows = self._read_all(
            scope, f"SELECT DISTINCT namespace FROM documents WHERE {where}", params
        )
        return list_namespaces((decode_namespace(r[0]) for r in rows), query)

    # -- ranked search ---------------------------------------------------------------------

    def document_candidates(
        self, scope: Scope, query: DocumentQuery, *, text: str,
        vector: npt.NDArray[np.float32] | None = None, model: str | None = None,
        depth: int | None = None,
    ) -> DocumentCandidates:  # fmt: skip
        scope = _reader(scope)
        if vector is not None and not model:
            raise InvalidInput("a query vector was given without the model it belongs to")
        with self._read(scope) as tx:
            state = tx.execute(
                "SELECT version, model FROM document_state WHERE tenant = ?", (scope.tenant,)
            ).fetchone()
            version, stored = (0, None) if state is None else (int(state[0]), state[1])
            if vector is not None and stored is not None and stored != model:
                raise InvalidInput(
                    f"tenant {scope.tenant!r}'s documents are embedded with {stored!r}: a "
                    f"query vector of {model!r} cannot be compared with them"
                )
            index = self._document_index(tx, scope.tenant, version)
            # A prefix is a span of the index; filters, expiry and owners are read from rows.
            docs = (
                index.under(query.prefix)
                if not (query.filter or query.live_at or scope.user)
                else index.among(self._admitted(tx, scope, query))
            )
        limit = len(docs) if depth is None else depth
        lexical, nearest = index.candidates(text, vector, docs, limit)
        ranked = {c.id for c in lexical} | {c.id for c in nearest}
        # A page never reaches past `depth` documents: when the signals propose that many,
        # the unranked ones are not needed.
        rest = [] if len(ranked) >= limit else index.rest(docs, ranked)
        return DocumentCandidates(lexical, nearest, rest)

    def _admitted(self, tx: Tx, scope: Scope, query: DocumentQuery) -> list[str]:
        """The ids of the documents *query* admits in *scope* (its page aside)."""
        where, params = self._where(scope, query.prefix, query.live_at)
        value = ", value" if query.filter else ""
        rows = tx.execute(f"SELECT id{value} FROM documents WHERE {where}", params).fetchall()
        if query.filter:
            rows = [r for r in rows if query.filter.matches(self._d.read_json(r[1]))]
        return [str(r[0]) for r in rows]

    def _document_index(self, tx: Tx, tenant: str, version: int) -> DocumentIndex:
        """The tenant's search index as of *version* (built from *tx*'s rows if the cached
        one is of another version)."""
        cache = self._indexes()
        cached = cache.get(tenant, version)
        if cached is not None:
            return cached
        d = self._d
        rows = tx.execute(
            "SELECT d.id, d.namespace, d.updated_at, t.text, t.vec FROM documents d"
            " LEFT JOIN document_texts t ON t.tenant = d.tenant AND t.namespace = d.namespace"
            " AND t.key = d.key"
            f" WHERE d.tenant = ? ORDER BY {d.text_order('d.namespace')}, d.key, t.n",
            (tenant,),
        ).fetchall()
        built = DocumentIndex(
            version,
            [IndexRow(str(r[0]), str(r[1]), d.read_time(r[2]).timestamp(), r[3], _blob(r[4]))
             for r in rows],
        )  # fmt: skip
        cache.put(tenant, built)
        return built

    # -- expiry and erasure ----------------------------------------------------------------

    def sweep_documents(self, tenant: str, *, now: datetime) -> int:
        scope = Scope(tenant)
        with self._write(scope) as tx:
            swept = self._delete_expired(tx, tenant, now)
        if swept:
            self._after_erase(tenant, 0)
        return swept

    def _delete_expired(self, tx: Tx, tenant: str, now: datetime) -> int:
        """Delete the tenant's documents expired by *now* that no legal hold covers (a hold on
        the tenant covers all, a hold on a user that user's; documents have no session)."""
        held: list[str] = []
        for user, session in tx.execute(
            "SELECT user_id, session FROM legal_holds WHERE tenant = ?", (tenant,)
        ).fetchall():
            if not user and not session:
                return 0
            if user and not session:
                held.append(user)
        where = "tenant = ? AND expires_at <= ?"
        params: list[Any] = [tenant, self._d.time(now)]
        if held:
            cond, more = self._d.one_of("user_id", held)
            where += f" AND (user_id IS NULL OR NOT ({cond}))"
            params += more
        gone = tx.execute(f"DELETE FROM documents WHERE {where}", params).rowcount
        if gone:
            self._bump(tx, tenant, None)
        return int(gone)

    def _purge_more(self, tx: Tx, tenant: str, now: datetime) -> int:
        removed = super()._purge_more(tx, tenant, now)
        swept = self._delete_expired(tx, tenant, now)
        if swept:
            tx.execute(
                "INSERT INTO purge_log (tenant, at, kind, count) VALUES (?, ?, 'document', ?)",
                (tenant, self._d.time(now), swept),
            )
        return removed + swept

    def _forget_derived(self, tx: Tx, erasure: Erasure) -> None:
        """Erasing a whole tenant or user scope erases the documents it owns (a user's: those
        stored under their user; a tenant's: all of them)."""
        super()._forget_derived(tx, erasure)
        scope = erasure.scope
        if erasure.purge or not erasure.whole or scope.session is not None:
            return
        owned, params = self._owned(Scope(scope.tenant, scope.user))
        if tx.execute(f"DELETE FROM documents WHERE {owned}", params).rowcount:
            self._bump(tx, scope.tenant, None)


def _net(writes: Sequence[DocumentWrite]) -> tuple[list[tuple[str, str]], list[DocumentWrite]]:
    """What writes applied in order leave, as one batch: the keys to delete first (deleted,
    or deleted before being written again: the new document is a new one), and the last
    write of each key that stores a document."""
    last: dict[tuple[str, str], DocumentWrite] = {}
    deleted: dict[tuple[str, str], None] = {}
    for w in writes:
        key = (encode_namespace(w.namespace), w.key)
        if w.value is None:
            deleted[key] = None
        last[key] = w
    kept = [w for w in last.values() if w.value is not None]
    return list(deleted), kept


def _new_ids(count: int) -> list[str]:
    """Ids for *count* new documents: unique, 32 hex digits each. The time (in milliseconds)
    comes first, then 80 random bits: a batch's new ids sit side by side in the id index, so
    a write touches a page or two of it instead of a page per document."""
    at = f"{time.time_ns() // 1_000_000:012x}"
    bits = secrets.token_hex(10 * count)
    return [at + bits[n : n + 20] for n in range(0, 20 * count, 20)]


def _blob(value: Any) -> bytes | None:
    return None if value is None else bytes(value)
