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
``tests/unit/test_citus_rules.py``). On a database that runs Citus, :func:`migrate` then does
so (:func:`distribute`), and tests/integration/test_citus.py checks it on a running cluster.
"""

from __future__ import annotations

from typing import Any

from kenning.store.sql import tables

__all__ = [
    "APP_ROLE",
    "COORDINATOR_TABLES",
    "MIGRATIONS",
    "REFERENCE_TABLES",
    "TENANT_TABLES",
    "distribute",
    "is_citus",
    "migrate",
    "pending_migrations",
]

APP_ROLE = "kenning_app"
"""The role every store connection acts as: no table ownership, no ``BYPASSRLS``."""

_EPISODIC_TABLES = (
    "sessions", "items", "event_details", "item_chunks", "vectors", "token_counts",
    "item_access", "index_log", "index_log_floor", "pins", "summaries", "compaction_log",
    "compaction_jobs", "task_state", "token_ledger",
)  # fmt: skip
_LONG_TERM_TABLES = (
    "facts", "extraction_progress", "user_settings", "tenant_policy", "legal_holds",
    "purge_log", "procedures", "token_usage",
)  # fmt: skip
_SERVER_TABLES = ("api_keys",)
_USAGE_TABLES = ("tenant_usage",)
_DOCUMENT_TABLES = ("documents", "document_texts", "document_state")
_PENDING_TABLES = ("pending_vectors",)
TENANT_TABLES = (
    *_EPISODIC_TABLES, *_LONG_TERM_TABLES, *_SERVER_TABLES, *_USAGE_TABLES, *_DOCUMENT_TABLES,
    *_PENDING_TABLES,
)  # fmt: skip
"""Tables that hold tenant data: each is row-level secured and distributed by ``tenant``."""

REFERENCE_TABLES = ("embedding_model",)
"""Store-wide tables without a tenant: reference tables on Citus (a copy on every node)."""
COORDINATOR_TABLES = ("compaction_jobs",)
"""Tenant tables that stay local tables of the Citus coordinator: the compaction queue is
claimed across tenants with ``FOR UPDATE SKIP LOCKED``, which Citus runs on one shard only."""
# The table every distributed table is colocated with, then the tables foreign keys name,
# then the rest: a foreign key may only point at a table distributed before it.
_COLOCATION_ANCHOR = "sessions"
_REFERENCED_TABLES = ("items", "documents")

# Serialises migrations of one database between processes (an arbitrary fixed key).
_MIGRATION_LOCK = 0x6B656E6E

_TENANT = "current_setting('kenning.tenant', true)"


def _rls(tables: tuple[str, ...]) -> str:
    """Row-level security on *tables*: the transaction's tenant only, DML for the app role."""
    return "\n".join(
        f"""
        ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON {table}
            USING (tenant = {_TENANT}) WITH CHECK (tenant = {_TENANT});
        GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {APP_ROLE};
        """
        for table in tables
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
            -- The token of the claim that holds a running job: a worker whose lease ran out
            -- and was taken over can neither renew nor finish it.
            lease text,
            lease_until timestamptz,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, rowid)
        );
        {tables.task_state(tables.POSTGRES)}

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

        {_rls(_EPISODIC_TABLES)}
        """,
    ),
    (
        "0002_job_queue_functions",
        f"""
        -- The queue is the store's own machinery and spans tenants, so the application role
        -- reaches it only through these functions: they run as the tables' owner, return
        -- queue fields only, and never tenant content.
        -- A claim writes a fresh lease token; renewing and finishing name it.
        CREATE FUNCTION kenning_claim_compaction(
            now_at timestamptz, lease_s double precision, token text
        ) RETURNS SETOF compaction_jobs
        LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
            UPDATE compaction_jobs j
            SET status = 'running', attempts = j.attempts + 1, lease = token,
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

        CREATE FUNCTION kenning_renew_compaction(
            job bigint, token text, now_at timestamptz, lease_s double precision
        ) RETURNS boolean
        LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
            WITH renewed AS (
                UPDATE compaction_jobs
                SET lease_until = now_at + make_interval(secs => lease_s), updated_at = now_at
                WHERE rowid = job AND status = 'running' AND lease = token
                RETURNING 1
            )
            SELECT EXISTS (SELECT 1 FROM renewed)
        $$;

        -- With a token, only while that token still holds the job (NULL: unconditionally).
        CREATE FUNCTION kenning_finish_compaction(
            job bigint, new_status text, now_at timestamptz, message text, token text
        ) RETURNS boolean
        LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
            WITH finished AS (
                UPDATE compaction_jobs
                SET status = new_status, error = message, lease_until = NULL, lease = NULL,
                    updated_at = now_at
                WHERE rowid = job
                    AND (token IS NULL OR (status = 'running' AND lease = token))
                RETURNING 1
            )
            SELECT EXISTS (SELECT 1 FROM finished)
        $$;

        CREATE FUNCTION kenning_pending_compactions() RETURNS bigint
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
            SELECT count(*) FROM compaction_jobs WHERE status IN ('pending', 'running')
        $$;

        CREATE FUNCTION kenning_queue_stats()
        RETURNS TABLE (pending bigint, running bigint, oldest_pending timestamptz)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
            SELECT count(*) FILTER (WHERE status = 'pending'),
                   count(*) FILTER (WHERE status = 'running'),
                   min(created_at) FILTER (WHERE status = 'pending')
            FROM compaction_jobs WHERE status IN ('pending', 'running')
        $$;

        REVOKE ALL ON FUNCTION
            kenning_claim_compaction(timestamptz, double precision, text),
            kenning_renew_compaction(bigint, text, timestamptz, double precision),
            kenning_finish_compaction(bigint, text, timestamptz, text, text),
            kenning_pending_compactions(), kenning_queue_stats() FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION
            kenning_claim_compaction(timestamptz, double precision, text),
            kenning_renew_compaction(bigint, text, timestamptz, double precision),
            kenning_finish_compaction(bigint, text, timestamptz, text, text),
            kenning_pending_compactions(), kenning_queue_stats() TO {APP_ROLE};
        """,
    ),
    (
        "0003_long_term_memory",
        f"""
        -- Hard retention: a record past expires_at is removed by the purge.
        ALTER TABLE items ADD COLUMN expires_at timestamptz;
        CREATE INDEX items_expiry ON items (tenant, expires_at) WHERE expires_at IS NOT NULL;

        -- A fact is an item (kind 'fact': its statement is searched like a turn) with its
        -- validity here. Only active facts are in search partitions: closing one logs a
        -- 'hide' in index_log, and the row keeps its history for as_of reads.
        CREATE TABLE facts (
            tenant text NOT NULL,
            item bigint NOT NULL,
            user_id text NOT NULL,
            subject text NOT NULL,
            attribute text NOT NULL,
            qualifier text NOT NULL DEFAULT '',
            value text NOT NULL,
            source text NOT NULL,
            confidence double precision NOT NULL,
            category text NOT NULL,
            status text NOT NULL,
            valid_from timestamptz NOT NULL,
            valid_to timestamptz,
            superseded_by text,
            expires_at timestamptz,
            pinned boolean NOT NULL DEFAULT false,
            reinforced integer NOT NULL DEFAULT 1,
            last_seen timestamptz NOT NULL,
            -- The events it was stated in: erasing all of them erases the fact.
            sources text[] NOT NULL DEFAULT '{{}}',
            source_event_id text,
            PRIMARY KEY (tenant, item),
            FOREIGN KEY (tenant, item) REFERENCES items (tenant, rowid) ON DELETE CASCADE
        );
        CREATE INDEX facts_key ON facts (tenant, user_id, subject, attribute, qualifier, status);
        CREATE INDEX facts_status ON facts (tenant, status, expires_at);

        -- Which events of a session were read for facts, and who is reading them now. The
        -- queue spans tenants: workers lease sessions through kenning_claim_extraction.
        CREATE TABLE extraction_progress (
            tenant text NOT NULL,
            session text NOT NULL,
            user_id text NOT NULL,
            done_seq bigint NOT NULL DEFAULT 0,
            -- The token of the claim that holds the session: a reader whose lease was taken
            -- over can neither write facts from it, renew it, nor record progress.
            lease text,
            lease_until timestamptz,
            attempts integer NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant, session)
        );

        {tables.user_settings(tables.POSTGRES)}
        {tables.tenant_policy(tables.POSTGRES)}
        {tables.legal_holds(tables.POSTGRES)}
        -- What the purge removed, for stats and audit (counts, no content).
        CREATE TABLE purge_log (
            tenant text NOT NULL,
            rowid bigint GENERATED ALWAYS AS IDENTITY,
            at timestamptz NOT NULL,
            kind text NOT NULL,
            count bigint NOT NULL,
            PRIMARY KEY (tenant, rowid)
        );

        -- Playbooks, versioned, bound to the hash of the tool schemas they were written for.
        CREATE TABLE procedures (
            tenant text NOT NULL,
            rowid bigint GENERATED ALWAYS AS IDENTITY,
            id text NOT NULL,
            user_id text,
            name text NOT NULL,
            version integer NOT NULL,
            tool_hash text NOT NULL,
            steps jsonb NOT NULL,
            description text NOT NULL DEFAULT '',
            status text NOT NULL,
            created_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, rowid),
            UNIQUE (tenant, id),
            UNIQUE (tenant, name, version)
        );
        {tables.token_usage(tables.POSTGRES)}

        {_rls(_LONG_TERM_TABLES)}
        """,
    ),
    (
        "0004_extraction_queue_functions",
        f"""
        -- Sessions with events not yet read for facts, over every tenant: queue fields only.
        CREATE FUNCTION kenning_pending_extractions(max_rows bigint)
        RETURNS TABLE (tenant text, user_id text, session text, done_seq bigint,
                       last_seq bigint)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
            SELECT s.tenant, s.user_id, s.session, coalesce(p.done_seq, 0), s.last_seq
            FROM sessions s
            LEFT JOIN extraction_progress p ON p.tenant = s.tenant AND p.session = s.session
            WHERE s.last_seq > coalesce(p.done_seq, 0)
            ORDER BY s.created_at, s.tenant, s.session
            LIMIT max_rows
        $$;

        -- Lease the oldest session with unread events (or one whose reader's lease ran out).
        -- A session gets its progress row on its first claim; the row is then locked with
        -- SKIP LOCKED and the condition checked again on its newest version, so two workers
        -- never lease one session and neither waits for the other.
        CREATE FUNCTION kenning_claim_extraction(
            now_at timestamptz, lease_s double precision, token text
        ) RETURNS TABLE (tenant text, user_id text, session text, done_seq bigint,
                         last_seq bigint)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
        #variable_conflict use_column
        DECLARE
            candidate record;
        BEGIN
            FOR candidate IN
                SELECT s.tenant, s.session, s.user_id FROM sessions s
                LEFT JOIN extraction_progress p ON p.tenant = s.tenant AND p.session = s.session
                WHERE s.last_seq > coalesce(p.done_seq, 0)
                    AND (p.lease_until IS NULL OR p.lease_until < now_at)
                ORDER BY s.created_at, s.tenant, s.session
                LIMIT 16
            LOOP
                INSERT INTO extraction_progress (tenant, session, user_id)
                VALUES (candidate.tenant, candidate.session, candidate.user_id)
                ON CONFLICT DO NOTHING;
                RETURN QUERY
                    UPDATE extraction_progress p
                    SET lease_until = now_at + make_interval(secs => lease_s),
                        attempts = p.attempts + 1, lease = token
                    FROM (
                        SELECT q.tenant, q.session, s.last_seq FROM extraction_progress q
                        JOIN sessions s ON s.tenant = q.tenant AND s.session = q.session
                        WHERE q.tenant = candidate.tenant AND q.session = candidate.session
                            AND s.last_seq > q.done_seq
                            AND (q.lease_until IS NULL OR q.lease_until < now_at)
                        FOR UPDATE OF q SKIP LOCKED
                    ) picked
                    WHERE p.tenant = picked.tenant AND p.session = picked.session
                    RETURNING p.tenant, p.user_id, p.session, p.done_seq, picked.last_seq;
                IF FOUND THEN
                    RETURN;
                END IF;
            END LOOP;
        END
        $$;

        -- Sessions with unread events over every tenant: waiting, held by a reader, and when
        -- the oldest unread event was written (counts and a time, no tenant content).
        CREATE FUNCTION kenning_extraction_stats()
        RETURNS TABLE (pending bigint, running bigint, oldest_pending timestamptz)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
            SELECT count(*) FILTER (WHERE p.lease IS NULL),
                   count(*) FILTER (WHERE p.lease IS NOT NULL),
                   min(i.created_at)
            FROM sessions s
            LEFT JOIN extraction_progress p ON p.tenant = s.tenant AND p.session = s.session
            LEFT JOIN items i ON i.tenant = s.tenant AND i.kind = 'event'
                AND i.session = s.session AND i.seq = coalesce(p.done_seq, 0) + 1
            WHERE s.last_seq > coalesce(p.done_seq, 0)
        $$;

        REVOKE ALL ON FUNCTION kenning_pending_extractions(bigint),
            kenning_claim_extraction(timestamptz, double precision, text),
            kenning_extraction_stats() FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION kenning_pending_extractions(bigint),
            kenning_claim_extraction(timestamptz, double precision, text),
            kenning_extraction_stats() TO {APP_ROLE};
        """,
    ),
    (
        "0005_api_keys",
        f"""
        -- Tenants' API keys for the server: the secret itself is never stored, only its hash.
        -- The server finds a key by its id before it knows the tenant (kenning_api_key); ids
        -- are random tokens, so the key includes the tenant only for distribution by tenant.
        CREATE TABLE api_keys (
            tenant text NOT NULL,
            id text NOT NULL,
            name text NOT NULL DEFAULT '',
            scopes jsonb NOT NULL,
            secret_hash text NOT NULL,
            created_at timestamptz NOT NULL,
            revoked_at timestamptz,
            PRIMARY KEY (tenant, id)
        );
        CREATE INDEX api_keys_id ON api_keys (id);
        CREATE INDEX api_keys_tenant ON api_keys (tenant, created_at);
        {_rls(_SERVER_TABLES)}

        -- Authentication and the operator's key commands span tenants: key fields only.
        CREATE FUNCTION kenning_api_key(key_id text) RETURNS SETOF api_keys
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
            SELECT * FROM api_keys WHERE id = key_id
        $$;
        CREATE FUNCTION kenning_api_keys(of_tenant text) RETURNS SETOF api_keys
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
            SELECT * FROM api_keys WHERE of_tenant IS NULL OR tenant = of_tenant
            ORDER BY created_at, id
        $$;
        -- Revoking twice keeps the first time.
        CREATE FUNCTION kenning_revoke_api_key(key_id text, now_at timestamptz)
        RETURNS SETOF api_keys
        LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
            UPDATE api_keys SET revoked_at = coalesce(revoked_at, now_at) WHERE id = key_id
            RETURNING *
        $$;
        REVOKE ALL ON FUNCTION kenning_api_key(text), kenning_api_keys(text),
            kenning_revoke_api_key(text, timestamptz) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION kenning_api_key(text), kenning_api_keys(text),
            kenning_revoke_api_key(text, timestamptz) TO {APP_ROLE};
        """,
    ),
    (
        "0006_sentence_units",
        """
        -- A record of several sentences is embedded by sentence: its units are spans with a
        -- vector each, like a long record's chunks, but not lexical documents (the whole
        -- record is one). Chunks written before are lexical.
        ALTER TABLE item_chunks ADD COLUMN lexical boolean NOT NULL DEFAULT true;
        """,
    ),
    (
        "0007_session_times",
        f"""
        -- When a session's first and last events happened (their 'at', not when they were
        -- written): a profile's times are the user's, also for a history imported later.
        ALTER TABLE sessions ADD COLUMN first_at timestamptz, ADD COLUMN last_at timestamptz;
        {tables.SESSION_TIMES_BACKFILL}
        """,
    ),
    (
        "0008_tenant_usage",
        f"""
        -- Each tenant's stored events and characters, changed in the transaction that adds or
        -- erases events: the quota is checked against it in the same step as the write (the
        -- append's upsert holds the row's lock until its commit).
        CREATE TABLE tenant_usage (
            tenant text NOT NULL,
            events bigint NOT NULL,
            content_chars bigint NOT NULL,
            PRIMARY KEY (tenant)
        );
        INSERT INTO tenant_usage (tenant, events, content_chars)
            SELECT tenant, count(*), coalesce(sum(length(text)), 0) FROM items
            WHERE kind = 'event' GROUP BY tenant;
        {_rls(_USAGE_TABLES)}
        """,
    ),
    (
        "0009_documents",
        f"""
        -- Namespaced JSON documents (see the SQLite schema). The namespace compares byte by
        -- byte ("C"), so a prefix is a range of it whatever the database's collation.
        CREATE TABLE documents (
            tenant text NOT NULL,
            id text NOT NULL,
            namespace text COLLATE "C" NOT NULL,
            key text NOT NULL,
            value jsonb NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            user_id text,
            ttl_minutes double precision,
            expires_at timestamptz,
            PRIMARY KEY (tenant, namespace, key),
            UNIQUE (tenant, id)
        );
        CREATE INDEX documents_updated ON documents (tenant, updated_at);
        CREATE INDEX documents_user ON documents (tenant, user_id);
        CREATE INDEX documents_expiry ON documents (tenant, expires_at)
            WHERE expires_at IS NOT NULL;
        {tables.document_texts(tables.POSTGRES)}
        {tables.document_state(tables.POSTGRES)}
        {_rls(_DOCUMENT_TABLES)}
        """,
    ),
    (
        "0010_recount_tool_messages",
        """
        -- A tool result is now counted as its call and itself (two messages): every
        -- session's ledger is counted again from its first event on its next window.
        DELETE FROM token_ledger;
        """,
    ),
    (
        "0011_plpgsql_queue_and_key_functions",
        """
        -- The same functions in PL/pgSQL: Citus cannot plan a SQL function's statement with
        -- parameters over distributed tables, and plans a PL/pgSQL one's like any query.
        -- CREATE OR REPLACE keeps their owner and grants.
        CREATE OR REPLACE FUNCTION kenning_pending_extractions(max_rows bigint)
        RETURNS TABLE (tenant text, user_id text, session text, done_seq bigint,
                       last_seq bigint)
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
        BEGIN
            RETURN QUERY
                SELECT s.tenant, s.user_id, s.session, coalesce(p.done_seq, 0), s.last_seq
                FROM sessions s
                LEFT JOIN extraction_progress p
                    ON p.tenant = s.tenant AND p.session = s.session
                WHERE s.last_seq > coalesce(p.done_seq, 0)
                ORDER BY s.created_at, s.tenant, s.session
                LIMIT max_rows;
        END
        $$;
        CREATE OR REPLACE FUNCTION kenning_api_key(key_id text) RETURNS SETOF api_keys
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
        BEGIN
            RETURN QUERY SELECT * FROM api_keys WHERE id = key_id;
        END
        $$;
        CREATE OR REPLACE FUNCTION kenning_api_keys(of_tenant text) RETURNS SETOF api_keys
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
        BEGIN
            RETURN QUERY SELECT * FROM api_keys WHERE of_tenant IS NULL OR tenant = of_tenant
                ORDER BY created_at, id;
        END
        $$;
        CREATE OR REPLACE FUNCTION kenning_revoke_api_key(key_id text, now_at timestamptz)
        RETURNS SETOF api_keys
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
        BEGIN
            RETURN QUERY UPDATE api_keys SET revoked_at = coalesce(revoked_at, now_at)
                WHERE id = key_id RETURNING *;
        END
        $$;
        """,
    ),
    (
        "0012_pending_vectors",
        f"""
        -- The texts of committed events whose vectors are still to be written (deferred
        -- vectors, kenning.vectors): written with the events, deleted with the vectors. A
        -- process that died with vectors pending leaves its rows here for the next one.
        CREATE TABLE pending_vectors (
            tenant text NOT NULL,
            item bigint NOT NULL,
            hash text NOT NULL,
            text text NOT NULL,
            PRIMARY KEY (tenant, item, hash),
            FOREIGN KEY (tenant, item) REFERENCES items (tenant, rowid) ON DELETE CASCADE
        );
        CREATE INDEX pending_vectors_hash ON pending_vectors (tenant, hash);
        {_rls(_PENDING_TABLES)}
        """,
    ),
)


def pending_migrations(conn: Any) -> list[str]:
    """Names of the migrations *conn*'s database lacks (all of them on an empty database)."""
    exists = conn.execute("SELECT to_regclass('kenning_migrations') IS NOT NULL").fetchone()[0]
    applied: set[str] = set()
    if exists:
        applied = {row[0] for row in conn.execute("SELECT name FROM kenning_migrations")}
    tables.check_known(applied, MIGRATIONS)
    return [name for name, _ in MIGRATIONS if name not in applied]


def migrate(conn: Any) -> list[str]:
    """Apply the migrations *conn*'s database lacks, each in its own transaction together with
    the row that records it; return their names. *conn* is an autocommit connection of the
    role that will own the tables (it needs ``CREATEROLE`` to create :data:`APP_ROLE` once)."""

    def apply(name: str, script: str) -> bool:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS kenning_migrations"
            " (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        # Another process may have migrated between our read and the lock.
        if conn.execute("SELECT 1 FROM kenning_migrations WHERE name = %s", (name,)).fetchone():
            return False
        conn.execute(script)
        conn.execute("INSERT INTO kenning_migrations (name) VALUES (%s)", (name,))
        return True

    applied = tables.apply_migrations(conn, MIGRATIONS, begin="BEGIN", apply=apply)
    distribute(conn)
    return applied


def is_citus(conn: Any) -> bool:
    """Whether *conn*'s database runs Citus (its extension is created there)."""
    row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'").fetchone()
    return row is not None


def _distribution_plan() -> list[tuple[str, str]]:
    """(table, Citus call) for every kenning table, in an order Citus accepts."""
    # Citus locks a reference table's placements for every write with lock_shard_resources,
    # which requires UPDATE on the table: the app role gets it (the store never updates it).
    plan = [
        (t, f"SELECT create_reference_table('{t}'); GRANT UPDATE ON {t} TO {APP_ROLE}")
        for t in REFERENCE_TABLES
    ]
    first = (_COLOCATION_ANCHOR, *_REFERENCED_TABLES)
    rest = [t for t in TENANT_TABLES if t not in first and t not in COORDINATOR_TABLES]
    anchor = _COLOCATION_ANCHOR
    plan.append((anchor, f"SELECT create_distributed_table('{anchor}', 'tenant')"))
    plan.extend(
        (t, f"SELECT create_distributed_table('{t}', 'tenant', colocate_with => "
            f"'{_COLOCATION_ANCHOR}')")
        for t in (*_REFERENCED_TABLES, *rest)
    )  # fmt: skip
    return plan


def distribute(conn: Any) -> list[str]:
    """On Citus, distribute every tenant table by ``tenant``, colocated with ``sessions`` (each
    tenant's rows of every table on one shard group, so each tenant-scoped statement runs on
    one shard), and make the store-wide tables reference tables; return the tables changed.
    Without Citus, or when every table is placed already, do nothing. Rows already there
    move with their table. *conn* is an autocommit connection of the tables' owner."""
    if not is_citus(conn):
        return []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        placed = {
            row[0]
            for row in conn.execute("SELECT logicalrelid::regclass::text FROM pg_dist_partition")
        }
        done = []
        for table, call in _distribution_plan():
            if table not in placed:
                conn.execute(call)
                done.append(table)
    return done
