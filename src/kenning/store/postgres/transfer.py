"""Copy a SQLite store into a PostgreSQL store: every table, vectors included, tenant by tenant.

Each tenant is copied in one transaction that holds the tenant's exclusive lock, so a tenant
is in the destination whole or not at all. Rows keep their ids, sequence numbers, times and
vectors (nothing is embedded again); rows already in the destination are left alone, so the
copy can be re-run after an interruption, or to bring over what the file gained since. The
counts of both sides are compared per tenant and table afterwards.

A mixin of :class:`~kenning.store.postgres.store.PostgresStore`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from kenning.errors import InvalidInput, ScopeConflict, StoreError
from kenning.records import Scope
from kenning.store.postgres.database import Conn, Database
from kenning.store.postgres.events import EventTables, copy_rows
from kenning.store.postgres.sql import ROUTED, jsonb
from kenning.store.records import ModelInfo
from kenning.store.sql.usage import recount_usage
from kenning.store.sql.vectors import check_model

__all__ = ["TableCount", "TransferTables"]


@dataclass(frozen=True, slots=True)
class TableCount:
    """One tenant's rows of one table on both sides; ``ok`` when every source row is in the
    destination (it may hold more: rows written to it since)."""

    tenant: str
    table: str
    source: int
    destination: int
    ok: bool


def _ts(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _json(text: str | None) -> Any:
    return None if text is None else jsonb(json.loads(text))


# Destination table -> (SQLite query of one tenant's rows, destination columns, conflict rule).
# Rows of item-keyed tables carry the source item rowid first; it is mapped on the way.
_COPIES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "sessions": (
        "SELECT tenant, session, user_id, last_seq, created_at, first_at, last_at FROM sessions"
        " WHERE tenant = ?",
        ("tenant", "session", "user_id", "last_seq", "created_at", "first_at", "last_at"),
        "ON CONFLICT (tenant, session) DO UPDATE SET last_seq ="
        " greatest(sessions.last_seq, excluded.last_seq),"
        " first_at = least(sessions.first_at, excluded.first_at),"
        " last_at = greatest(sessions.last_at, excluded.last_at)",
    ),
    "items": (
        "SELECT rowid, tenant, id, kind, user_id, session, agent, seq, role, label, text, at, tags,"
        " metadata, version, content_hash, embed_hash, idem_key, created_at, expires_at"
        " FROM items WHERE tenant = ? ORDER BY rowid",
        (
            "ord",
            "tenant",
            "id",
            "kind",
            "user_id",
            "session",
            "agent",
            "seq",
            "role",
            "label",
            "text",
            "at",
            "tags",
            "metadata",
            "version",
            "content_hash",
            "embed_hash",
            "idem_key",
            "created_at",
            "expires_at",
        ),
        "ON CONFLICT (tenant, id) DO NOTHING",
    ),
    "facts": (
        "SELECT item, tenant, user_id, subject, attribute, qualifier, value, source, confidence,"
        " category, status, valid_from, valid_to, superseded_by, expires_at, pinned,"
        " reinforced, last_seen, sources, source_event_id FROM facts WHERE tenant = ?",
        (
            "item",
            "tenant",
            "user_id",
            "subject",
            "attribute",
            "qualifier",
            "value",
            "source",
            "confidence",
            "category",
            "status",
            "valid_from",
            "valid_to",
            "superseded_by",
            "expires_at",
            "pinned",
            "reinforced",
            "last_seen",
            "sources",
            "source_event_id",
        ),
        "ON CONFLICT DO NOTHING",
    ),
    "event_details": (
        "SELECT d.item, i.tenant, d.tool_name, d.tool_args, d.tool_result FROM event_details d"
        " JOIN items i ON i.rowid = d.item WHERE i.tenant = ?",
        ("item", "tenant", "tool_name", "tool_args", "tool_result"),
        "ON CONFLICT DO NOTHING",
    ),
    "item_chunks": (
        "SELECT c.item, i.tenant, c.n, c.start, c.stop, c.embed_hash, c.lexical"
        " FROM item_chunks c JOIN items i ON i.rowid = c.item WHERE i.tenant = ?",
        ("item", "tenant", "n", "start", "stop", "embed_hash", "lexical"),
        "ON CONFLICT DO NOTHING",
    ),
    "token_counts": (
        "SELECT t.item, i.tenant, t.encoding, t.n FROM token_counts t"
        " JOIN items i ON i.rowid = t.item WHERE i.tenant = ?",
        ("item", "tenant", "encoding", "n"),
        "ON CONFLICT DO NOTHING",
    ),
    # Texts still to embed (a process with deferred vectors stopped before writing them):
    # the next search on the database embeds them.
    "pending_vectors": (
        "SELECT item, tenant, hash, text FROM pending_vectors WHERE tenant = ?",
        ("item", "tenant", "hash", "text"),
        "ON CONFLICT DO NOTHING",
    ),
    "item_access": (
        "SELECT a.item, i.tenant, a.count, a.last FROM item_access a"
        " JOIN items i ON i.rowid = a.item WHERE i.tenant = ?",
        ("item", "tenant", "count", "last"),
        "ON CONFLICT DO NOTHING",
    ),
    "pins": (
        "SELECT id, tenant, user_id, session, kind, key, version, value, amount, currency, status,"
        " source_event_id, metadata, created_at, closed_at, current FROM pins WHERE tenant = ?"
        " ORDER BY rowid",
        (
            "id",
            "tenant",
            "user_id",
            "session",
            "kind",
            "key",
            "version",
            "value",
            "amount",
            "currency",
            "status",
            "source_event_id",
            "metadata",
            "created_at",
            "closed_at",
            "current",
        ),
        "ON CONFLICT DO NOTHING",
    ),
    "summaries": (
        "SELECT id, tenant, user_id, session, level, first_seq, last_seq, text, body, summarizer,"
        " created_at, active FROM summaries WHERE tenant = ? ORDER BY rowid",
        (
            "id",
            "tenant",
            "user_id",
            "session",
            "level",
            "first_seq",
            "last_seq",
            "text",
            "body",
            "summarizer",
            "created_at",
            "active",
        ),
        "ON CONFLICT DO NOTHING",
    ),
    "compaction_log": (
        "SELECT tenant, user_id, session, at, action, first_seq, last_seq, tokens_before,"
        " tokens_after, summary_id, summarizer, detail FROM compaction_log WHERE tenant = ?"
        " ORDER BY rowid",
        (
            "tenant",
            "user_id",
            "session",
            "at",
            "action",
            "first_seq",
            "last_seq",
            "tokens_before",
            "tokens_after",
            "summary_id",
            "summarizer",
            "detail",
        ),
        "",
    ),
    "compaction_jobs": (
        "SELECT tenant, user_id, session, model, budget, reason, status, attempts, error,"
        " lease_until, created_at, updated_at FROM compaction_jobs WHERE tenant = ?"
        " ORDER BY rowid",
        (
            "tenant",
            "user_id",
            "session",
            "model",
            "budget",
            "reason",
            "status",
            "attempts",
            "error",
            "lease_until",
            "created_at",
            "updated_at",
        ),
        "ON CONFLICT DO NOTHING",
    ),
    "task_state": (
        "SELECT tenant, session, user_id, body, version, updated_at FROM task_state"
        " WHERE tenant = ?",
        ("tenant", "session", "user_id", "body", "version", "updated_at"),
        "ON CONFLICT DO NOTHING",
    ),
    "token_ledger": (
        "SELECT tenant, session, encoding, seq, n, cum FROM token_ledger WHERE tenant = ?",
        ("tenant", "session", "encoding", "seq", "n", "cum"),
        "ON CONFLICT DO NOTHING",
    ),
    "extraction_progress": (
        # A lease belongs to a worker of the file, which will not finish it here.
        "SELECT tenant, session, user_id, done_seq, NULL, attempts FROM extraction_progress"
        " WHERE tenant = ?",
        ("tenant", "session", "user_id", "done_seq", "lease_until", "attempts"),
        "ON CONFLICT DO NOTHING",
    ),
    "user_settings": (
        "SELECT tenant, user_id, share_across_sessions, sensitive_facts, updated_at"
        " FROM user_settings WHERE tenant = ?",
        ("tenant", "user_id", "share_across_sessions", "sensitive_facts", "updated_at"),
        "ON CONFLICT DO NOTHING",
    ),
    "tenant_policy": (
        "SELECT tenant, body, updated_at FROM tenant_policy WHERE tenant = ?",
        ("tenant", "body", "updated_at"),
        "ON CONFLICT DO NOTHING",
    ),
    "legal_holds": (
        "SELECT tenant, user_id, session, reason, created_at FROM legal_holds WHERE tenant = ?",
        ("tenant", "user_id", "session", "reason", "created_at"),
        "ON CONFLICT DO NOTHING",
    ),
    "purge_log": (
        "SELECT tenant, at, kind, count FROM purge_log WHERE tenant = ? ORDER BY rowid",
        ("tenant", "at", "kind", "count"),
        "",
    ),
    "procedures": (
        "SELECT id, tenant, user_id, name, version, tool_hash, steps, description, status,"
        " created_at FROM procedures WHERE tenant = ? ORDER BY rowid",
        (
            "id",
            "tenant",
            "user_id",
            "name",
            "version",
            "tool_hash",
            "steps",
            "description",
            "status",
            "created_at",
        ),
        "ON CONFLICT DO NOTHING",
    ),
    "token_usage": (
        "SELECT tenant, session, model, input_tokens, output_tokens, calls, cost"
        " FROM token_usage WHERE tenant = ?",
        ("tenant", "session", "model", "input_tokens", "output_tokens", "calls", "cost"),
        "ON CONFLICT DO NOTHING",
    ),
    # The server's keys (hashes only), so a served deployment moves with its credentials.
    "api_keys": (
        "SELECT id, tenant, name, scopes, secret_hash, created_at, revoked_at FROM api_keys"
        " WHERE tenant = ?",
        ("id", "tenant", "name", "scopes", "secret_hash", "created_at", "revoked_at"),
        "ON CONFLICT DO NOTHING",
    ),
    # Namespaced documents: a document's value travels as its JSON text, its texts' vectors
    # as their bytes; the tenant's version moves past both sides' (searches rebuild).
    "documents": (
        "SELECT tenant, id, namespace, key, value, created_at, updated_at, user_id,"
        " ttl_minutes, expires_at FROM documents WHERE tenant = ?",
        (
            "tenant",
            "id",
            "namespace",
            "key",
            "value",
            "created_at",
            "updated_at",
            "user_id",
            "ttl_minutes",
            "expires_at",
        ),
        "ON CONFLICT DO NOTHING",
    ),
    "document_texts": (
        "SELECT tenant, namespace, key, n, path, text, vec FROM document_texts WHERE tenant = ?",
        ("tenant", "namespace", "key", "n", "path", "text", "vec"),
        "ON CONFLICT DO NOTHING",
    ),
    "document_state": (
        "SELECT tenant, version, model FROM document_state WHERE tenant = ?",
        ("tenant", "version", "model"),
        "ON CONFLICT (tenant) DO UPDATE SET version = document_state.version"
        " + excluded.version, model = coalesce(document_state.model, excluded.model)",
    ),
}
# Tables without a natural key: a source row is new when no identical row is there yet.
_SAME_ROW = {
    "compaction_log": (
        "session",
        "at",
        "action",
        "first_seq",
        "last_seq",
        "summary_id",
        "detail",
    ),
    "compaction_jobs": ("session", "created_at", "model", "reason"),
    "purge_log": ("at", "kind", "count"),
}
_TIMES = {
    "created_at", "at", "last", "closed_at", "lease_until", "updated_at", "expires_at",
    "valid_from", "valid_to", "last_seen", "revoked_at", "first_at", "last_at",
}  # fmt: skip
_JSON = {"tags", "metadata", "tool_args", "tool_result", "body", "steps", "scopes"}
_ARRAYS = {"sources"}  # JSON lists in the file, text[] here
_BOOLS = {"current", "active", "pinned", "share_across_sessions", "sensitive_facts", "lexical"}
_ITEM_KEYED = (
    "event_details", "item_chunks", "token_counts", "pending_vectors", "item_access", "facts",
)  # fmt: skip
# The tables that name tenants (every other table's rows belong to a row of these).
_TENANT_SOURCES = (
    "items", "sessions", "pins", "compaction_jobs", "compaction_log", "user_settings",
    "tenant_policy", "legal_holds", "purge_log", "procedures", "token_usage", "api_keys",
    "documents",
)  # fmt: skip
# Tables whose rows carry their own ids: a source row counts as copied when its id is there.
_BY_ID = ("items", "pins", "summaries", "procedures", "api_keys", "documents")


def _converted(columns: Sequence[str], row: Sequence[Any]) -> tuple[Any, ...]:
    out = []
    for column, value in zip(columns, row, strict=True):
        if column in _TIMES:
            value = _ts(value)
        elif column in _JSON:
            value = _json(value)
        elif column in _ARRAYS:
            value = json.loads(value)
        elif column in _BOOLS and value is not None:  # NULL: "as the tenant's policy says"
            value = bool(value)
        out.append(value)
    return tuple(out)


def _source_model(src: sqlite3.Connection) -> ModelInfo | None:
    row = src.execute("SELECT model_id, dimension, normalized FROM embedding_model").fetchone()
    return None if row is None else ModelInfo(row[0], int(row[1]), bool(row[2]))


class TransferTables(EventTables, Database):
    """Copying a SQLite store in (``kenning migrate``)."""

    def import_sqlite(
        self, path: str | Path, *, progress: Callable[[str], None] | None = None
    ) -> list[TableCount]:
        """Copy every tenant of the SQLite file *path* into this store; return the counts of
        both sides per tenant and table. Raises ``ScopeConflict`` if a session id belongs to
        different users on the two sides, ``ModelMismatch`` if their vectors come from
        different embedding models."""
        from kenning.store.sqlite.store import SQLiteStore

        source = Path(path)
        if not source.is_file():
            raise InvalidInput(f"{source} is not a kenning SQLite file")
        SQLiteStore(source).close()  # brings an older file's schema up to date
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            model = _source_model(src)
            if model is not None:
                with self._write(None) as conn:
                    check_model(conn, self._d, model, claim=True)
            tenants = sorted(
                {r[0] for t in _TENANT_SOURCES for r in src.execute(f"SELECT tenant FROM {t}")}
            )
            counts: list[TableCount] = []
            for tenant in tenants:
                if progress is not None:
                    progress(tenant)
                with self._write(Scope(tenant), exclusive=True) as conn:
                    self._copy_tenant(src, conn, tenant)
                    # The rows came in bulk, past the appends that keep the counter.
                    recount_usage(conn, tenant)
                counts += self._compare(src, tenant)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {source}: {exc}") from exc
        finally:
            src.close()
        self._after_append(set(tenants))
        return counts

    def _copy_tenant(self, src: sqlite3.Connection, conn: Conn, tenant: str) -> None:
        vectors = {
            r[0]: np.frombuffer(r[1], dtype=np.float32)
            for r in src.execute("SELECT hash, vec FROM vectors WHERE tenant = ?", (tenant,))
        }
        if vectors:
            self._store_vectors(conn, tenant, vectors)
        rowids: dict[int, int] = {}
        for table, (query, columns, conflict) in _COPIES.items():
            rows = [_converted(columns, r) for r in src.execute(query, (tenant,))]
            if table in _ITEM_KEYED:
                rows = [(rowids[r[0]], *r[1:]) for r in rows]
            if not rows:
                continue
            stage = copy_rows(conn, table, columns, rows)
            cols = ", ".join(c for c in columns if c != "ord")
            picked = ", ".join(f"s.{c}" for c in columns if c != "ord")
            where = ""
            if table in _SAME_ROW:
                same = " AND ".join(f"d.{c} IS NOT DISTINCT FROM s.{c}" for c in _SAME_ROW[table])
                where = (
                    f" WHERE NOT EXISTS (SELECT 1 FROM {table} d"
                    f" WHERE d.tenant = s.tenant AND {same})"
                )
            order = " ORDER BY s.ord" if "ord" in columns else ""
            conn.execute(
                f"INSERT INTO {table} ({cols}) SELECT {picked} FROM {stage} s{where}{order}"
                f" {conflict}{ROUTED}"
            )
            if table == "sessions":
                clash = conn.execute(
                    f"SELECT s.session FROM {stage} s JOIN sessions d ON d.tenant = s.tenant"
                    " AND d.session = s.session WHERE d.user_id <> s.user_id LIMIT 1"
                ).fetchone()
                if clash is not None:
                    raise ScopeConflict(
                        f"session {clash[0]!r} of tenant {tenant!r} belongs to different users "
                        "in the file and in the database; nothing of the tenant was copied"
                    )
            if table == "items":
                rowids = dict(
                    conn.execute(
                        f"SELECT s.ord, i.rowid FROM {stage} s"
                        " JOIN items i ON i.tenant = s.tenant AND i.id = s.id"
                    ).fetchall()
                )

    def _compare(self, src: sqlite3.Connection, tenant: str) -> list[TableCount]:
        out = []
        with self._read(Scope(tenant)) as conn:
            for table in ("vectors", *_COPIES):
                query = (
                    f"SELECT count(*) FROM {table} WHERE tenant = ?"
                    if table not in _ITEM_KEYED
                    else f"SELECT count(*) FROM {table} x JOIN items i ON i.rowid = x.item"
                    " WHERE i.tenant = ?"
                )
                source = int(src.execute(query, (tenant,)).fetchone()[0])
                if table in _BY_ID:
                    ids = [
                        r[0]
                        for r in src.execute(f"SELECT id FROM {table} WHERE tenant = ?", (tenant,))
                    ]
                    row = conn.execute(
                        f"SELECT count(*) FROM {table} WHERE tenant = ? AND id = ANY(?)",
                        (tenant, ids),
                    ).fetchone()
                    present = int(row[0]) if row else 0
                    total = conn.execute(
                        f"SELECT count(*) FROM {table} WHERE tenant = ?", (tenant,)
                    ).fetchone()
                    dest = int(total[0]) if total else 0
                    ok = present == source
                else:
                    total = conn.execute(
                        f"SELECT count(*) FROM {table} WHERE tenant = ?", (tenant,)
                    ).fetchone()
                    dest = int(total[0]) if total else 0
                    ok = dest >= source
                out.append(TableCount(tenant, table, source, dest, ok))
        return out
