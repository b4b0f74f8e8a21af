"""Named, forward-only migrations of the SQLite schema.

Each migration runs in the same transaction as the row that records it, so a crash leaves the
database either before or after a migration, never half way.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace

from kenning.errors import InvalidInput, StoreError
from kenning.store.sql import tables

__all__ = ["MIGRATIONS", "PAGE_SIZE", "check_owned", "migrate"]

# The tables that had a "user" column before 0011.
_USER_TABLES = (
    "sessions", "items", "pins", "summaries", "compaction_log", "compaction_jobs", "task_state",
    "facts", "extraction_progress", "user_settings", "legal_holds", "procedures",
)  # fmt: skip

# Column types of the shared tables (kenning.store.sql.tables): before and since 0011.
_V1 = tables.SQLITE
_NOW = replace(tables.SQLITE, user="user_id")

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_episodic_items",
        """
        CREATE TABLE sessions (
            tenant TEXT NOT NULL,
            session TEXT NOT NULL,
            user TEXT NOT NULL,
            last_seq INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            PRIMARY KEY (tenant, session)
        ) WITHOUT ROWID;

        -- Every searchable record (events now; facts and summaries later) is one item row.
        CREATE TABLE items (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            tenant TEXT NOT NULL,
            user TEXT,
            session TEXT,
            agent TEXT,
            seq INTEGER,
            role TEXT NOT NULL,
            label TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            -- Tokens naming the tenant, user, session, role and kind, so a full-text query
            -- carries its scope inside MATCH and never ranks rows outside it.
            scope_terms TEXT NOT NULL,
            at REAL NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}',
            version TEXT,
            content_hash TEXT NOT NULL,
            embed_hash TEXT,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_access REAL,
            created_at REAL NOT NULL
        );
        CREATE UNIQUE INDEX items_event_seq ON items (tenant, session, seq) WHERE kind = 'event';
        CREATE INDEX items_scope ON items (tenant, user, session);
        CREATE INDEX items_time ON items (tenant, at);

        CREATE TABLE event_details (
            item INTEGER PRIMARY KEY REFERENCES items (rowid) ON DELETE CASCADE,
            tool_name TEXT,
            tool_args TEXT,
            tool_result TEXT
        );

        CREATE VIRTUAL TABLE items_fts USING fts5 (
            text, label, scope_terms,
            content = 'items', content_rowid = 'rowid',
            tokenize = 'porter unicode61 remove_diacritics 2'
        );
        -- Document frequencies, for the ideal score that calibrates BM25 (see lexical_index).
        CREATE VIRTUAL TABLE items_vocab USING fts5vocab (items_fts, 'row');
        CREATE TRIGGER items_fts_insert AFTER INSERT ON items BEGIN
            INSERT INTO items_fts (rowid, text, label, scope_terms)
            VALUES (new.rowid, new.text, new.label, new.scope_terms);
        END;
        CREATE TRIGGER items_fts_delete AFTER DELETE ON items BEGIN
            INSERT INTO items_fts (items_fts, rowid, text, label, scope_terms)
            VALUES ('delete', old.rowid, old.text, old.label, old.scope_terms);
        END;
        CREATE TRIGGER items_fts_update AFTER UPDATE OF text, label, scope_terms ON items BEGIN
            INSERT INTO items_fts (items_fts, rowid, text, label, scope_terms)
            VALUES ('delete', old.rowid, old.text, old.label, old.scope_terms);
            INSERT INTO items_fts (rowid, text, label, scope_terms)
            VALUES (new.rowid, new.text, new.label, new.scope_terms);
        END;

        CREATE TABLE embedding_model (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            model_id TEXT NOT NULL,
            dimension INTEGER NOT NULL,
            normalized INTEGER NOT NULL,
            created_at REAL NOT NULL
        );
        -- Keyed by tenant so the embedding cache is no side channel between tenants.
        CREATE TABLE vectors (
            tenant TEXT NOT NULL,
            hash TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (tenant, hash)
        ) WITHOUT ROWID;

        CREATE TABLE token_counts (
            item INTEGER NOT NULL REFERENCES items (rowid) ON DELETE CASCADE,
            encoding TEXT NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (item, encoding)
        ) WITHOUT ROWID;
        """,
    ),
    (
        "0002_working_context",
        """
        -- Pins: typed fields compaction never rewrites. A change is a new version; old
        -- versions stay (current = 0) as the pin's history.
        CREATE TABLE pins (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant TEXT NOT NULL,
            user TEXT NOT NULL,
            session TEXT NOT NULL,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            version INTEGER NOT NULL,
            value TEXT NOT NULL,
            amount TEXT,
            currency TEXT,
            status TEXT NOT NULL,
            source_event_id TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            closed_at REAL,
            current INTEGER NOT NULL DEFAULT 1,
            UNIQUE (tenant, session, key, version)
        );
        CREATE INDEX pins_current ON pins (tenant, session, current, rowid);
        CREATE INDEX pins_user ON pins (tenant, user);

        CREATE TABLE summaries (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant TEXT NOT NULL,
            user TEXT NOT NULL,
            session TEXT NOT NULL,
            level INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            text TEXT NOT NULL,
            body TEXT NOT NULL,
            summarizer TEXT NOT NULL,
            created_at REAL NOT NULL,
            -- 0 once a later summary replaced it (kept for the audit trail)
            active INTEGER NOT NULL DEFAULT 1
        );
        CREATE INDEX summaries_active ON summaries (tenant, session, active, first_seq);
        CREATE INDEX summaries_user ON summaries (tenant, user);

        CREATE TABLE compaction_log (
            rowid INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            user TEXT,
            session TEXT,
            at REAL NOT NULL,
            action TEXT NOT NULL,
            first_seq INTEGER,
            last_seq INTEGER,
            tokens_before INTEGER,
            tokens_after INTEGER,
            summary_id TEXT,
            summarizer TEXT,
            detail TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX compaction_log_session ON compaction_log (tenant, session, rowid);

        -- The background compactor's queue: at most one outstanding job per session.
        CREATE TABLE compaction_jobs (
            rowid INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            user TEXT NOT NULL,
            session TEXT NOT NULL,
            model TEXT NOT NULL,
            budget INTEGER NOT NULL,
            reason TEXT NOT NULL,
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            lease_until REAL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        """
        + tables.task_state(_V1)
        + """

        -- Running token totals of a session's messages per encoding: n is one event's message
        -- tokens, cum the total through it, so a window's tail and the session's size are
        -- index lookups however long the session is.
        CREATE TABLE token_ledger (
            tenant TEXT NOT NULL,
            session TEXT NOT NULL,
            encoding TEXT NOT NULL,
            seq INTEGER NOT NULL,
            n INTEGER NOT NULL,
            cum INTEGER NOT NULL,
            PRIMARY KEY (tenant, session, encoding, seq)
        ) WITHOUT ROWID;
        CREATE INDEX token_ledger_cum ON token_ledger (tenant, session, encoding, cum);
        """,
    ),
    (
        "0003_index_log_and_access",
        """
        -- Rows leave a tenant's in-memory search partition through this log: every process
        -- applies what it has not seen yet (a delta), instead of reloading the tenant.
        -- AUTOINCREMENT: an id is never reused, so a reader's position stays meaningful.
        CREATE TABLE index_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            item INTEGER NOT NULL,
            op TEXT NOT NULL
        );
        CREATE INDEX index_log_tenant ON index_log (tenant, id);
        CREATE TRIGGER items_log_delete AFTER DELETE ON items BEGIN
            INSERT INTO index_log (tenant, item, op) VALUES (old.tenant, old.rowid, 'erase');
        END;
        CREATE TABLE store_meta (
            key TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;

        -- Access statistics are soft data written by searches: kept apart from the rows
        -- whose changes matter to search partitions.
        CREATE TABLE item_access (
            item INTEGER PRIMARY KEY REFERENCES items (rowid) ON DELETE CASCADE,
            count INTEGER NOT NULL,
            last REAL NOT NULL
        );
        INSERT INTO item_access (item, count, last)
            SELECT rowid, access_count, coalesce(last_access, created_at) FROM items
            WHERE access_count > 0;
        ALTER TABLE items DROP COLUMN access_count;
        ALTER TABLE items DROP COLUMN last_access;
        """,
    ),
    (
        "0004_idempotency_keys",
        """
        -- The caller's own id of an event: a repeated one is skipped within its session.
        ALTER TABLE items ADD COLUMN idem_key TEXT;
        CREATE UNIQUE INDEX items_idem_key ON items (tenant, session, idem_key)
            WHERE idem_key IS NOT NULL;
        """,
    ),
    (
        "0005_fts5_on_demand",
        """
        -- The FTS5 index is built only for stores that rank with it (lexical="fts5"); the
        -- default in-memory BM25 never reads it, and FTS5 deletes leave the erased words in
        -- its segments until they are merged. See store/sqlite/fts.py.
        DROP TRIGGER IF EXISTS items_fts_insert;
        DROP TRIGGER IF EXISTS items_fts_delete;
        DROP TRIGGER IF EXISTS items_fts_update;
        DROP TABLE IF EXISTS items_vocab;
        DROP TABLE IF EXISTS items_fts;
        """,
    ),
    (
        "0006_item_chunks",
        """
        -- A long record is stored whole in items and indexed as spans of its text, each with
        -- its own vector; search returns the record.
        CREATE TABLE item_chunks (
            item INTEGER NOT NULL REFERENCES items (rowid) ON DELETE CASCADE,
            n INTEGER NOT NULL,
            start INTEGER NOT NULL,
            stop INTEGER NOT NULL,
            embed_hash TEXT,
            PRIMARY KEY (item, n)
        ) WITHOUT ROWID;
        """,
    ),
    (
        "0007_long_term_memory",
        """
        -- A fact is an item (kind 'fact': its statement is searchable like a turn) with its
        -- validity here. Only active facts are in the search partitions; the others keep
        -- their history for as_of reads.
        -- Hard retention: a record past expires_at is removed by the purge job.
        ALTER TABLE items ADD COLUMN expires_at REAL;
        CREATE INDEX items_expiry ON items (tenant, expires_at) WHERE expires_at IS NOT NULL;

        CREATE TABLE facts (
            item INTEGER PRIMARY KEY REFERENCES items (rowid) ON DELETE CASCADE,
            tenant TEXT NOT NULL,
            user TEXT NOT NULL,
            subject TEXT NOT NULL,
            attribute TEXT NOT NULL,
            qualifier TEXT NOT NULL DEFAULT '',
            value TEXT NOT NULL,
            source TEXT NOT NULL,
            confidence REAL NOT NULL,
            category TEXT NOT NULL,
            status TEXT NOT NULL,
            valid_from REAL NOT NULL,
            valid_to REAL,
            superseded_by TEXT,
            expires_at REAL,
            pinned INTEGER NOT NULL DEFAULT 0,
            reinforced INTEGER NOT NULL DEFAULT 1,
            last_seen REAL NOT NULL,
            sources TEXT NOT NULL DEFAULT '[]',
            source_event_id TEXT
        );
        CREATE INDEX facts_key ON facts (tenant, user, subject, attribute, qualifier, status);
        CREATE INDEX facts_status ON facts (tenant, status, expires_at);

        -- Which events of a session were read for facts, and who is reading them now.
        CREATE TABLE extraction_progress (
            tenant TEXT NOT NULL,
            session TEXT NOT NULL,
            user TEXT NOT NULL,
            done_seq INTEGER NOT NULL DEFAULT 0,
            lease_until REAL,
            attempts INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant, session)
        ) WITHOUT ROWID;

        """
        + tables.user_settings(_V1)
        + tables.tenant_policy(_V1)
        + tables.legal_holds(_V1)
        + """
        -- Hard retention: what the purge job removed, for stats and audit (no content).
        CREATE TABLE purge_log (
            rowid INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            at REAL NOT NULL,
            kind TEXT NOT NULL,
            count INTEGER NOT NULL
        );

        -- Playbooks, versioned, bound to the hash of the tool schemas they were written for.
        CREATE TABLE procedures (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant TEXT NOT NULL,
            user TEXT,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            tool_hash TEXT NOT NULL,
            steps TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (tenant, name, version)
        );
        """
        + tables.token_usage(_V1),
    ),
    (
        "0008_job_leases_and_api_keys",
        """
        -- The token of the claim that holds a running job: a worker whose lease was taken
        -- over can neither renew nor finish the job, so it never runs twice to completion.
        ALTER TABLE compaction_jobs ADD COLUMN lease TEXT;

        -- Tenants' API keys for the server: the secret itself is never stored, only its hash.
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            scopes TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            created_at REAL NOT NULL,
            revoked_at REAL
        ) WITHOUT ROWID;
        CREATE INDEX api_keys_tenant ON api_keys (tenant, created_at);
        """,
    ),
    (
        "0009_extraction_leases",
        """
        -- The token of the claim that holds a session's fact extraction: a reader whose lease
        -- was taken over can neither write facts from it, renew it, nor record progress.
        ALTER TABLE extraction_progress ADD COLUMN lease TEXT;
        """,
    ),
    (
        "0010_sentence_units",
        """
        -- A record of several sentences is embedded by sentence: its units are spans with a
        -- vector each, like a long record's chunks, but not lexical documents (the whole
        -- record is one). Chunks written before are lexical.
        ALTER TABLE item_chunks ADD COLUMN lexical INTEGER NOT NULL DEFAULT 1;
        """,
    ),
    (
        "0011_user_id_columns",
        # The user column is named as on PostgreSQL (where "user" is reserved), so both
        # backends run one SQL text (kenning.store.sql). Indexes follow the rename.
        "".join(f"ALTER TABLE {table} RENAME COLUMN user TO user_id;\n" for table in _USER_TABLES),
    ),
    (
        "0012_explicit_index_log",
        """
        -- Erased rows are logged by the statement that erases them, as on PostgreSQL, so
        -- one code path (kenning.store.sql) serves both backends.
        DROP TRIGGER items_log_delete;
        """,
    ),
    (
        "0013_session_times",
        """
        -- When a session's first and last events happened (their 'at', not when they were
        -- written): a profile's times are the user's, also for a history imported later.
        ALTER TABLE sessions ADD COLUMN first_at REAL;
        ALTER TABLE sessions ADD COLUMN last_at REAL;
        """
        + tables.SESSION_TIMES_BACKFILL,
    ),
    (
        "0014_tenant_usage",
        """
        -- Each tenant's stored events and characters, changed in the transaction that adds or
        -- erases events: the quota is checked against it in the same step as the write.
        CREATE TABLE tenant_usage (
            tenant TEXT PRIMARY KEY,
            events INTEGER NOT NULL,
            content_chars INTEGER NOT NULL
        );
        INSERT INTO tenant_usage (tenant, events, content_chars)
            SELECT tenant, count(*), coalesce(sum(length(text)), 0) FROM items
            WHERE kind = 'event' GROUP BY tenant;
        """,
    ),
    (
        "0015_documents",
        """
        -- Namespaced JSON documents (the LangGraph store's concern, kenning.records.documents).
        -- A namespace is stored as its labels, each followed by U+001F: a prefix is a range.
        -- user_id: the user who owns it (erased with them), NULL for the tenant's own.
        -- id is unique on its own (random), so loading a page of documents by id is a
        -- lookup of each, whatever the planner guesses of the tenant's size.
        CREATE TABLE documents (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            user_id TEXT,
            ttl_minutes REAL,
            expires_at REAL,
            PRIMARY KEY (tenant, namespace, key)
        ) WITHOUT ROWID;
        CREATE INDEX documents_updated ON documents (tenant, updated_at);
        CREATE INDEX documents_user ON documents (tenant, user_id);
        CREATE INDEX documents_expiry ON documents (tenant, expires_at)
            WHERE expires_at IS NOT NULL;
        """
        + tables.document_texts(_NOW)
        + tables.document_state(_NOW),
    ),
    (
        "0016_recount_tool_messages",
        """
        -- A tool result is now counted as its call and itself (two messages): every
        -- session's ledger is counted again from its first event on its next window.
        DELETE FROM token_ledger;
        """,
    ),
    (
        "0017_document_layout",
        """
        -- Only documents a user owns are found by their user: the tenant's own (the most, in
        -- a LangGraph store without user_at) are left out of that index, which a write of
        -- them then need not touch.
        DROP INDEX documents_user;
        CREATE INDEX documents_user ON documents (tenant, user_id) WHERE user_id IS NOT NULL;
        -- A text's row holds its vector (1 KiB and more): too large for a WITHOUT ROWID table,
        -- whose rows keep under a quarter of a page inline and spill the rest onto an
        -- overflow page each, three quarters of it empty. As an ordinary table, a page
        -- holds several rows whole: writes and the log write a third of the pages.
        """
        + tables.document_texts(replace(_NOW, keyed=")"), name="document_texts_rows")
        + """
        INSERT INTO document_texts_rows (tenant, namespace, key, n, path, text, vec)
            SELECT tenant, namespace, key, n, path, text, vec FROM document_texts;
        DROP TABLE document_texts;
        ALTER TABLE document_texts_rows RENAME TO document_texts;
        """,
    ),
    (
        "0018_vector_rows",
        """
        -- A vector (1.5 KiB for MiniLM) overflowed its WITHOUT ROWID row onto a page of its
        -- own, three quarters of it empty: 2.9x the raw float32. As an ordinary table with a
        -- unique index on its key, a page holds several vectors whole (see PAGE_SIZE).
        CREATE TABLE vector_rows (
            tenant TEXT NOT NULL,
            hash TEXT NOT NULL,
            vec BLOB NOT NULL
        );
        INSERT INTO vector_rows (tenant, hash, vec)
            SELECT tenant, hash, vec FROM vectors ORDER BY tenant, hash;
        DROP TABLE vectors;
        ALTER TABLE vector_rows RENAME TO vectors;
        CREATE UNIQUE INDEX vectors_key ON vectors (tenant, hash);
        """,
    ),
    (
        "0019_pending_vectors",
        """
        -- The texts of committed events whose vectors are still to be written (deferred
        -- vectors, kenning.vectors): written with the events, deleted with the vectors. A
        -- process that died with vectors pending leaves its rows here for the next one.
        CREATE TABLE pending_vectors (
            tenant TEXT NOT NULL,
            item INTEGER NOT NULL REFERENCES items (rowid) ON DELETE CASCADE,
            hash TEXT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (item, hash)
        ) WITHOUT ROWID;
        CREATE INDEX pending_vectors_hash ON pending_vectors (tenant, hash);
        """,
    ),
)

# A new file's page size: 8 KiB pages hold five 1.5 KiB vector rows (2 KiB each on 4 KiB
# pages, 1.33x the vector), and FTS5 and the items are no slower for it.
PAGE_SIZE = 8192
# After this migration an older file is rewritten once with PAGE_SIZE pages (VACUUM).
_REPAGE_AFTER = "0018_vector_rows"


def _statements(script: str) -> list[str]:
    """Split a migration script into complete statements (triggers contain semicolons)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise StoreError("incomplete statement at the end of a migration")
    return out


def check_owned(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a database that holds another program's tables and no kenning schema.

    Opening one would add kenning's tables to it and switch it to WAL mode for good (both
    persist in the file), so the check runs before any pragma or migration writes. An empty
    file, or a database without tables, is a new kenning store.
    """
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    if tables and "migrations" not in tables:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise InvalidInput(
            f"{path} is a SQLite database of another program (tables: {shown}), not a kenning "
            "store; nothing was changed in it: give a new file or a kenning database"
        )


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations *conn* lacks, each in its own transaction; return their names."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    applied = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    tables.check_known(applied, MIGRATIONS)

    def apply(name: str, script: str) -> bool:
        # Another process may have migrated between our read and the lock.
        if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
            return False
        for statement in _statements(script):
            conn.execute(statement)
        conn.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time()))
        return True

    pending = [(name, script) for name, script in MIGRATIONS if name not in applied]
    done = tables.apply_migrations(conn, pending, begin="BEGIN IMMEDIATE", apply=apply)
    if _REPAGE_AFTER in done and applied:
        repage(conn)
    return done


def repage(conn: sqlite3.Connection, page_size: int = PAGE_SIZE) -> bool:
    """Rewrite the file with *page_size* pages if its pages are smaller; True if it was.

    VACUUM cannot change the page size of a WAL database, and leaving WAL needs the only
    connection to the file: with another process on it the file keeps its pages (it works
    the same, only larger) and False is returned.
    """
    if int(conn.execute("PRAGMA page_size").fetchone()[0]) >= page_size:
        return False
    # Another connection is not waited for: the file then keeps its pages.
    timeout = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        mode = str(conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]).lower()
        if mode != "delete":
            return False
        conn.execute(f"PRAGMA page_size = {int(page_size)}")
        conn.execute("VACUUM")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {timeout}")
        conn.execute("PRAGMA journal_mode = WAL")
