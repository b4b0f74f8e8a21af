"""Named, forward-only migrations of the PostgreSQL schema, its roles and row-level security.

Each migration runs in the same transaction as the row that records it (PostgreSQL DDL is
transactional), under an advisory lock, so several processes opening one database migrate it
once and a crash leaves it before or after a migration, never half way.

Isolation in depth. Every table holding tenant data has a ``tenant`` column and a row-level
security policy that admits only the rows of the transaction's tenant setting
(``kenning.tenant``, set with ``set_config(..., true)``, i.e. ``SET LOCAL``). The application
role :data:`APP_ROLE` owns nothing, cannot bypass row-level security and holds only DML
rights; the store's connections act as it (``SET ROLE``, or by logging in as it). Each query
also carries its own tenant predicate: the policy is the second wall, not the only one.

Citus. Every primary key, unique constraint and foreign key includes ``tenant``, the
distribution column, and no statement joins rows of two tenants: every table can be
distributed and colocated by tenant (``docs/scaling.md``, checked by
``tests/unit/test_citus_rules.py``).
"""

from __future__ import annotations

from typing import Any

from kenning.errors import StoreError

__all__ = ["APP_ROLE", "MIGRATIONS", "TENANT_TABLES", "migrate", "pending_migrations"]

APP_ROLE = "kenning_app"
"""The role every store connection acts as: no table ownership, no ``BYPASSRLS``."""

TENANT_TABLES = (
    "sessions", "items", "event_details", "item_chunks", "vectors", "token_counts",
    "item_access", "index_log", "index_log_floor", "pins", "summaries", "compaction_log",
    "compaction_jobs", "task_state", "token_ledger",
)  # fmt: skip
"""Tables that hold tenant data: each is row-level secured and distributed by ``tenant``."""

# Serialises migrations of one database between processes (an arbitrary fixed key).
_MIGRATION_LOCK = 0x6B656E6E

_TENANT = "current_setting('kenning.tenant', true)"

_RLS = "\n".join(
    f"""
    ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
    CREATE POLICY tenant_isolation ON {table}
        USING (tenant = {_TENANT}) WITH CHECK (tenant = {_TENANT});
    GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {APP_ROLE};
    """
    for table in TENANT_TABLES
)

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_tenant_tables",
        f"""
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
                CREATE ROLE {APP_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
            END IF;
        END $$;
        GRANT USAGE ON SCHEMA public TO {APP_ROLE};
        GRANT SELECT ON kenning_migrations TO {APP_ROLE};

        -- Model identity is store-wide bookkeeping, not tenant data (a reference table).
        CREATE TABLE embedding_model (
            id integer PRIMARY KEY CHECK (id = 1),
            model_id text NOT NULL,
            dimension integer NOT NULL,
            normalized boolean NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        GRANT SELECT, INSERT ON embedding_model TO {APP_ROLE};

        CREATE TABLE sessions (
            tenant text NOT NULL,
            session text NOT NULL,
            user_id text NOT NULL,
            last_seq bigint NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tenant, session)
        );

        -- Every searchable record is one item row. xact is the writing transaction: a search
        -- partition that follows the table asks for rows of transactions its last snapshot
        -- did not see (store/postgres/search.py), which a serial id alone cannot tell.
        CREATE TABLE items (
            tenant text NOT NULL,
            rowid bigint GENERATED ALWAYS AS IDENTITY,
            id text NOT NULL,
            kind text NOT NULL,
            user_id text,
            session text,
            agent text,
            seq bigint,
            role text NOT NULL,
            label text NOT NULL DEFAULT '',
            text text NOT NULL,
            at timestamptz NOT NULL,
            tags jsonb NOT NULL DEFAULT '[]',
            metadata jsonb NOT NULL DEFAULT '{{}}',
            version text,
            content_hash text NOT NULL,
            embed_hash text,
            idem_key text,
            created_at timestamptz NOT NULL DEFAULT now(),
            xact bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
            PRIMARY KEY (tenant, rowid),
            UNIQUE (tenant, id)
        );
        CREATE UNIQUE INDEX items_event_seq ON items (tenant, session, seq) WHERE kind = 'event';
        CREATE UNIQUE INDEX items_idem_key ON items (tenant, session, idem_key)
            WHERE idem_key IS NOT NULL;
        CREATE INDEX items_scope ON items (tenant, user_id, session);
        CREATE INDEX items_time ON items (tenant, at);
        CREATE INDEX items_xact ON items (tenant, xact);
        CREATE INDEX items_embed_hash ON items (tenant, embed_hash);

        CREATE TABLE event_details (
            tenant text NOT NULL,
            item bigint NOT NULL,
            tool_name text,
            tool_args jsonb,
            tool_result jsonb,
            PRIMARY KEY (tenant, item),
            FOREIGN KEY (tenant, item) REFERENCES items (tenant, rowid) ON DELETE CASCADE
        );

        -- A long record is stored whole and indexed as spans of its text, each with its own
        -- vector; search returns the record.
        CREATE TABLE item_chunks (
            tenant text NOT NULL,
            item bigint NOT NULL,
            n integer NOT NULL,
            start integer NOT NULL,
            stop integer NOT NULL,
            embed_hash text,
            PRIMARY KEY (tenant, item, n),
            FOREIGN KEY (tenant, item) REFERENCES items (tenant, rowid) ON DELETE CASCADE
        );

        -- Keyed by tenant so the embedding cache is no side channel between tenants.
        CREATE TABLE vectors (
            tenant text NOT NULL,
            hash text NOT NULL,
            vec vector NOT NULL,
            PRIMARY KEY (tenant, hash)
        );

        CREATE TABLE token_counts (
            tenant text NOT NULL,
            item bigint NOT NULL,
            encoding text NOT NULL,
            n integer NOT NULL,
            PRIMARY KEY (tenant, item, encoding),
            FOREIGN KEY (tenant, item) REFERENCES items (tenant, rowid) ON DELETE CASCADE
        );

        -- Access statistics are soft data written by searches: kept apart from the rows whose
        -- changes search partitions follow.
        CREATE TABLE item_access (
            tenant text NOT NULL,
            item bigint NOT NULL,
            count bigint NOT NULL,
            last timestamptz NOT NULL,
            PRIMARY KEY (tenant, item),
            FOREIGN KEY (tenant, item) REFERENCES items (tenant, rowid) ON DELETE CASCADE
        );

        -- Rows leave search partitions through this log (a delta, never a reload).
        CREATE TABLE index_log (
            tenant text NOT NULL,
            id bigint GENERATED ALWAYS AS IDENTITY,
            item bigint NOT NULL,
            op text NOT NULL,
            xact bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
            PRIMARY KEY (tenant, id)
        );
        CREATE INDEX index_log_xact ON index_log (tenant, xact);
        -- The newest transaction whose log entries were pruned, per tenant.
        CREATE TABLE index_log_floor (
            tenant text PRIMARY KEY,
            xact bigint NOT NULL
        );

        -- Pins: typed fields compaction never rewrites. A change is a new version.
        CREATE TABLE pins (
            tenant text NOT NULL,
            rowid bigint GENERATED ALWAYS AS IDENTITY,
            id text NOT NULL,
            user_id text NOT NULL,
            session text NOT NULL,
            kind text NOT NULL,
            key text NOT NULL,
            version integer NOT NULL,
            value text NOT NULL,
            amount numeric,
            currency text,
            status text NOT NULL,
            source_event_id text,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            created_at timestamptz NOT NULL,
            closed_at timestamptz,
            current boolean NOT NULL DEFAULT true,
            PRIMARY KEY (tenant, rowid),
            UNIQUE (tenant, id),
            UNIQUE (tenant, session, key, version)
        );
        CREATE INDEX pins_current ON pins (tenant, session, current, rowid);
        CREATE INDEX pins_user ON pins (tenant, user_id);

        CREATE TABLE summaries (
            tenant text NOT NULL,
            rowid bigint GENERATED ALWAYS AS IDENTITY,
            id text NOT NULL,
            user_id text NOT NULL,
            session text NOT NULL,
            level integer NOT NULL,
            first_seq bigint NOT NULL,
            last_seq bigint NOT NULL,
            text text NOT NULL,
            body jsonb NOT NULL,
            summarizer text NOT NULL,
            created_at timestamptz NOT NULL,
            active boolean NOT NULL DEFAULT true,
            PRIMARY KEY (tenant, rowid),
            UNIQUE (tenant, id)
        );
        CREATE INDEX summaries_active ON summaries (tenant, session, active, first_seq);
        CREATE INDEX summaries_user ON summaries (tenant, user_id);

        CREATE TABLE compaction_log (
            tenant text NOT NULL,
            rowid bigint GENERATED ALWAYS AS IDENTITY,
            user_id text,
            session text,
            at timestamptz NOT NULL,
            action text NOT NULL,
            first_seq bigint,
            last_seq bigint,
            tokens_before integer,
            tokens_after integer,
            summary_id text,
            summarizer text,
            detail text NOT NULL DEFAULT '',
            PRIMARY KEY (tenant, rowid)
        );
        CREATE INDEX compaction_log_session ON compaction_log (tenant, session, rowid);

        -- The compaction queue: at most one open job per session; workers on any machine
        -- lease jobs with FOR UPDATE SKIP LOCKED (the claim_compaction function below).
        CREATE TABLE compaction_jobs (
            tenant text NOT NULL,
            rowid bigint GENERATED ALWAYS AS IDENTITY,
            user_id text NOT NULL,
            session text NOT NULL,
            model text NOT NULL,
            budget integer NOT NULL,
            reason text NOT NULL,
            status text NOT NULL,
            attempts integer NOT NULL DEFAULT 0,
            error text,
            lease_until timestamptz,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, rowid)
        );
        CREATE UNIQUE INDEX compaction_jobs_open ON compaction_jobs (tenant, session)
            WHERE status IN ('pending', 'running');
        CREATE INDEX compaction_jobs_status ON compaction_jobs (status, rowid);

        CREATE TABLE task_state (
            tenant text NOT NULL,
            session text NOT NULL,
            user_id text NOT NULL,
            body jsonb NOT NULL,
            version integer NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, session)
        );

        -- Running token totals of a session's messages per encoding (see the SQLite schema).
        CREATE TABLE token_ledger (
            tenant text NOT NULL,
            session text NOT NULL,
            encoding text NOT NULL,
            seq bigint NOT NULL,
            n integer NOT NULL,
            cum bigint NOT NULL,
            PRIMARY KEY (tenant, session, encoding, seq)
        );
        CREATE INDEX token_ledger_cum ON token_ledger (tenant, session, encoding, cum);

        {_RLS}
        """,
    ),
    (
        "0002_job_queue_functions",
        f"""
        -- The queue is the store's own machinery and spans tenants, so the application role
        -- reaches it only through these functions: they run as the tables' owner, return
        -- queue fields only, and never tenant content.
        CREATE FUNCTION kenning_claim_compaction(now_at timestamptz, lease_s double precision)
        RETURNS SETOF compaction_jobs
        LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
            UPDATE compaction_jobs j
            SET status = 'running', attempts = j.attempts + 1,
                lease_until = now_at + make_interval(secs => lease_s), updated_at = now_at
            FROM (
                SELECT tenant, rowid FROM compaction_jobs
                WHERE status = 'pending' OR (status = 'running' AND lease_until < now_at)
                ORDER BY rowid LIMIT 1
                FOR UPDATE SKIP LOCKED
            ) picked
            WHERE j.tenant = picked.tenant AND j.rowid = picked.rowid
            RETURNING j.*
        $$;

        CREATE FUNCTION kenning_finish_compaction(
            job bigint, new_status text, now_at timestamptz, message text
        ) RETURNS void
        LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
            UPDATE compaction_jobs
            SET status = new_status, error = message, lease_until = NULL, updated_at = now_at
            WHERE rowid = job
        $$;

        CREATE FUNCTION kenning_pending_compactions() RETURNS bigint
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
            SELECT count(*) FROM compaction_jobs WHERE status IN ('pending', 'running')
        $$;

        REVOKE ALL ON FUNCTION kenning_claim_compaction(timestamptz, double precision),
            kenning_finish_compaction(bigint, text, timestamptz, text),
            kenning_pending_compactions() FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION kenning_claim_compaction(timestamptz, double precision),
            kenning_finish_compaction(bigint, text, timestamptz, text),
            kenning_pending_compactions() TO {APP_ROLE};
        """,
    ),
)


def pending_migrations(conn: Any) -> list[str]:
    """Names of the migrations *conn*'s database lacks (all of them on an empty database)."""
    exists = conn.execute("SELECT to_regclass('kenning_migrations') IS NOT NULL").fetchone()[0]
    applied: set[str] = set()
    if exists:
        applied = {row[0] for row in conn.execute("SELECT name FROM kenning_migrations")}
    unknown = applied - {name for name, _ in MIGRATIONS}
    if unknown:
        raise StoreError(
            f"database has migrations this kenning does not know ({sorted(unknown)}); "
            "upgrade kenning"
        )
    return [name for name, _ in MIGRATIONS if name not in applied]


def migrate(conn: Any) -> list[str]:
    """Apply the migrations *conn*'s database lacks, each in its own transaction together with
    the row that records it; return their names. *conn* is an autocommit connection of the
    role that will own the tables (it needs ``CREATEROLE`` to create :data:`APP_ROLE` once)."""
    done: list[str] = []
    for name, script in MIGRATIONS:
        conn.execute("BEGIN")
        try:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS kenning_migrations"
                " (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            # Another process may have migrated between our read and the lock.
            if conn.execute("SELECT 1 FROM kenning_migrations WHERE name = %s", (name,)).fetchone():
                conn.execute("COMMIT")
                continue
            conn.execute(script)
            conn.execute("INSERT INTO kenning_migrations (name) VALUES (%s)", (name,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        done.append(name)
    return done
