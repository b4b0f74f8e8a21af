"""FTS5 pieces of the SQLite store: user text as a safe MATCH expression, and scope tokens.

User text is never interpreted as FTS5 syntax: it is split into word tokens, each token is
quoted as a string, and the tokens are joined with ``OR`` so BM25 ranks documents by how many
and how rare the matched words are. Scope tokens indexed with each row let a MATCH carry its
tenant, user and session, so FTS5 only ever ranks rows inside the scope.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence

from kenning.records import Scope
from kenning.text import query_terms

__all__ = [
    "ensure_fts",
    "fts_enabled",
    "match_expression",
    "purge_fts",
    "scope_match",
    "scope_terms",
    "text_match",
]

_FTS_SCHEMA = (
    """
    CREATE VIRTUAL TABLE items_fts USING fts5 (
        text, label, scope_terms,
        content = 'items', content_rowid = 'rowid',
        tokenize = 'porter unicode61 remove_diacritics 2'
    )
    """,
    # Document frequencies, for the ideal score that calibrates BM25 (see lexical_index).
    "CREATE VIRTUAL TABLE items_vocab USING fts5vocab (items_fts, 'row')",
    """
    CREATE TRIGGER items_fts_insert AFTER INSERT ON items BEGIN
        INSERT INTO items_fts (rowid, text, label, scope_terms)
        VALUES (new.rowid, new.text, new.label, new.scope_terms);
    END
    """,
    """
    CREATE TRIGGER items_fts_delete AFTER DELETE ON items BEGIN
        INSERT INTO items_fts (items_fts, rowid, text, label, scope_terms)
        VALUES ('delete', old.rowid, old.text, old.label, old.scope_terms);
    END
    """,
    """
    CREATE TRIGGER items_fts_update AFTER UPDATE OF text, label, scope_terms ON items BEGIN
        INSERT INTO items_fts (items_fts, rowid, text, label, scope_terms)
        VALUES ('delete', old.rowid, old.text, old.label, old.scope_terms);
        INSERT INTO items_fts (rowid, text, label, scope_terms)
        VALUES (new.rowid, new.text, new.label, new.scope_terms);
    END
    """,
)


def fts_enabled(conn: sqlite3.Connection) -> bool:
    """True when the database keeps an FTS5 index of its items."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'items_fts'"
    ).fetchone()
    return row is not None


def ensure_fts(conn: sqlite3.Connection) -> None:
    """Create the FTS5 index (and the triggers that maintain it) and fill it from the items,
    inside the caller's transaction; nothing if it exists."""
    if fts_enabled(conn):
        return
    for statement in _FTS_SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT INTO items_fts (items_fts) VALUES ('rebuild')")


def purge_fts(conn: sqlite3.Connection) -> None:
    """After an erase: merge the FTS5 segments into one. An FTS5 delete only records a
    tombstone; the merge drops the erased words, and ``secure_delete`` zeroes the freed pages."""
    if fts_enabled(conn):
        conn.execute("INSERT INTO items_fts (items_fts) VALUES ('optimize')")


def match_expression(text: str) -> str:
    """An FTS5 MATCH string for *text*: quoted terms joined by OR ('' if no terms).

    >>> match_expression('refund "order" AND NEAR(x)')
    '"refund" OR "order" OR "near" OR "x"'
    """
    terms = query_terms(text)
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _id_token(prefix: str, *parts: str) -> str:
    # Digits only after a consonant prefix: the porter stemmer leaves such tokens unchanged.
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return f"{prefix}{int.from_bytes(digest, 'big')}"


def scope_terms(tenant: str, user: str | None, session: str | None, role: str, kind: str) -> str:
    """The scope tokens indexed with a record (see :func:`scope_match`)."""
    tokens = [_id_token("t", tenant)]
    if user is not None:
        tokens.append(_id_token("u", tenant, user))
    if session is not None:
        tokens.append(_id_token("s", tenant, session))
    tokens += [f"r{role}", f"k{kind}"]
    return " ".join(tokens)


def scope_match(scope: Scope, *, roles: Sequence[str] = (), kinds: Sequence[str] = ()) -> str:
    """An FTS5 expression that selects exactly the records of *scope* (and roles, kinds).

    ANDed with the text terms, it makes the full-text engine rank only in-scope rows, so a
    ``LIMIT`` after ranking is still a limit over the scope, never over other tenants.
    """
    parts = [f'scope_terms : "{_id_token("t", scope.tenant)}"']
    if scope.user is not None:
        parts.append(f'scope_terms : "{_id_token("u", scope.tenant, scope.user)}"')
    if scope.session is not None:
        parts.append(f'scope_terms : "{_id_token("s", scope.tenant, scope.session)}"')
    for prefix, values in (("r", roles), ("k", kinds)):
        if values:
            alternatives = " OR ".join(f'"{prefix}{v}"' for v in values)
            parts.append(f"scope_terms : ({alternatives})")
    return " AND ".join(parts)


def text_match(text: str) -> str:
    """The text terms of *text* restricted to the text and label columns ('' if none)."""
    terms = match_expression(text)
    return f"{{text label}} : ({terms})" if terms else ""
