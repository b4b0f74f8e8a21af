"""The tables both SQL backends create alike, written once with each backend's column types,
and the loop that applies a backend's migrations.

A backend's migrations name its own history (SQLite's and PostgreSQL's differ in order and in
number); where they create the same table, they take its definition from here, so a column
added to one backend cannot be forgotten in the other. :class:`ColumnTypes` says what each
backend calls a type, and how it ends a table keyed by its primary key. The text is laid out
as in the migrations that include it (tests/unit/test_citus_rules.py reads the DDL by its
layout).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kenning.errors import StoreError

__all__ = [
    "POSTGRES",
    "SESSION_TIMES_BACKFILL",
    "SQLITE",
    "ColumnTypes",
    "apply_migrations",
    "check_known",
    "document_state",
    "document_texts",
    "legal_holds",
    "task_state",
    "tenant_policy",
    "token_usage",
    "user_settings",
]


@dataclass(frozen=True, slots=True)
class ColumnTypes:
    """A backend's spelling of the column types the shared tables use.

    >>> SQLITE.keyed
    ') WITHOUT ROWID'
    """

    text: str
    json: str
    time: str
    integer: str
    bigint: str
    real: str
    boolean: str
    blob: str
    #: A document namespace: compared byte by byte, so a prefix is a range of it.
    namespace: str
    #: The user column: SQLite's first schema called it "user" (renamed by its 0011).
    user: str
    #: How a table keyed by its primary key ends (SQLite stores it without a rowid).
    keyed: str


SQLITE = ColumnTypes(
    text="TEXT", json="TEXT", time="REAL", integer="INTEGER", bigint="INTEGER", real="REAL",
    boolean="INTEGER", blob="BLOB", namespace="TEXT", user="user", keyed=") WITHOUT ROWID",
)  # fmt: skip
POSTGRES = ColumnTypes(
    text="text", json="jsonb", time="timestamptz", integer="integer", bigint="bigint",
    real="double precision", boolean="boolean", blob="bytea", namespace='text COLLATE "C"',
    user="user_id", keyed=")",
)  # fmt: skip

SESSION_TIMES_BACKFILL = """
        UPDATE sessions SET
            first_at = (SELECT min(i.at) FROM items i WHERE i.tenant = sessions.tenant
                        AND i.session = sessions.session AND i.kind = 'event'),
            last_at = (SELECT max(i.at) FROM items i WHERE i.tenant = sessions.tenant
                       AND i.session = sessions.session AND i.kind = 'event');
"""
"""A session's first and last event times, from its events (migrations that add them)."""


def task_state(t: ColumnTypes) -> str:
    """A session's task state (one JSON body, versioned), and the compaction queue's indexes:
    at most one outstanding job per session."""
    return f"""
        CREATE UNIQUE INDEX compaction_jobs_open ON compaction_jobs (tenant, session)
            WHERE status IN ('pending', 'running');
        CREATE INDEX compaction_jobs_status ON compaction_jobs (status, rowid);

        CREATE TABLE task_state (
            tenant {t.text} NOT NULL,
            session {t.text} NOT NULL,
            {t.user} {t.text} NOT NULL,
            body {t.json} NOT NULL,
            version {t.integer} NOT NULL,
            updated_at {t.time} NOT NULL,
            PRIMARY KEY (tenant, session)
        {t.keyed};
"""


def user_settings(t: ColumnTypes) -> str:
    """Consent and policy per user: NULL means "as the tenant's policy says"."""
    return f"""
        CREATE TABLE user_settings (
            tenant {t.text} NOT NULL,
            {t.user} {t.text} NOT NULL,
            share_across_sessions {t.boolean},
            sensitive_facts {t.boolean},
            updated_at {t.time} NOT NULL,
            PRIMARY KEY (tenant, {t.user})
        {t.keyed};
"""


def tenant_policy(t: ColumnTypes) -> str:
    """A tenant's policy (consent defaults, retention), one JSON body."""
    return f"""
        CREATE TABLE tenant_policy (
            tenant {t.text} PRIMARY KEY,
            body {t.json} NOT NULL,
            updated_at {t.time} NOT NULL
        {t.keyed};
"""


def legal_holds(t: ColumnTypes) -> str:
    """A legal hold on a tenant, a user ('' = all) or a session ('' = all) blocks purge and
    erase of what it covers."""
    return f"""
        CREATE TABLE legal_holds (
            tenant {t.text} NOT NULL,
            {t.user} {t.text} NOT NULL DEFAULT '',
            session {t.text} NOT NULL DEFAULT '',
            reason {t.text} NOT NULL,
            created_at {t.time} NOT NULL,
            PRIMARY KEY (tenant, {t.user}, session)
        {t.keyed};
"""


def token_usage(t: ColumnTypes) -> str:
    """Token usage per session and model (or encoding): what windows sent, and the replies
    reported."""
    return f"""
        CREATE TABLE token_usage (
            tenant {t.text} NOT NULL,
            session {t.text} NOT NULL,
            model {t.text} NOT NULL,
            input_tokens {t.bigint} NOT NULL DEFAULT 0,
            output_tokens {t.bigint} NOT NULL DEFAULT 0,
            calls {t.bigint} NOT NULL DEFAULT 0,
            cost {t.real} NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant, session, model)
        {t.keyed};
"""


def document_texts(t: ColumnTypes, name: str = "document_texts") -> str:
    """What a document is found by: texts read from its fields, with their vectors (float32
    bytes, unit length, of the tenant's document model). Keyed by the document's namespace
    and key, so a batch of writes needs no id read back. (*name*: the table made, for a
    migration that remakes it.)"""
    return f"""
        CREATE TABLE {name} (
            tenant {t.text} NOT NULL,
            namespace {t.namespace} NOT NULL,
            key {t.text} NOT NULL,
            n {t.integer} NOT NULL,
            path {t.text} NOT NULL,
            text {t.text} NOT NULL,
            vec {t.blob},
            PRIMARY KEY (tenant, namespace, key, n),
            FOREIGN KEY (tenant, namespace, key) REFERENCES documents (tenant, namespace, key)
                ON DELETE CASCADE
        {t.keyed};
"""


def document_state(t: ColumnTypes) -> str:
    """Per tenant: a version every change of its documents bumps (searches rebuild their
    in-memory index when it moved), and the embedding model of its document vectors."""
    return f"""
        CREATE TABLE document_state (
            tenant {t.text} PRIMARY KEY,
            version {t.bigint} NOT NULL,
            model {t.text}
        {t.keyed};
"""


def apply_migrations(
    conn: Any,
    migrations: Sequence[tuple[str, str]],
    *,
    begin: str,
    apply: Callable[[str, str], bool],
) -> list[str]:
    """Run each of *migrations* in its own transaction (opened with *begin*) together with
    the row that records it; return the names applied.

    ``apply(name, script)`` runs inside the transaction: it checks, under the transaction's
    lock, whether another process applied *name* meanwhile (then it returns False and
    nothing is written), else runs *script*, records *name* and returns True. Any error rolls
    the migration back whole and is raised.
    """
    done: list[str] = []
    for name, script in migrations:
        conn.execute(begin)
        try:
            applied = apply(name, script)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if applied:
            done.append(name)
    return done


def check_known(applied: set[str], migrations: Sequence[tuple[str, str]]) -> None:
    """Refuse a database migrated by a newer kenning: it has migrations this one lacks."""
    unknown = applied - {name for name, _ in migrations}
    if unknown:
        raise StoreError(
            f"database has migrations this kenning does not know ({sorted(unknown)}); "
            "upgrade kenning"
        )
