"""What PostgreSQL could rank by itself, timed on the rows of a PostgreSQL store.

kenning's PostgreSQL store ranks both signals in per-tenant partitions that follow the tables
(:mod:`kenning.store.postgres.search`). This module measures the in-database alternatives on
the same rows, for the record of why: pgvector's HNSW index (``vector_cosine_ops``, with
iterative scans for filtered queries) against exact cosine, and ``tsvector`` ranking with a
GIN index (``ts_rank_cd``, which has no IDF and so no BM25 calibration) against kenning's BM25.
The indexes are created for the measurement and dropped afterwards; the queries run as the
application role under row-level security, like the store's own.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kenning.bench.metrics import percentiles
from kenning.embed.base import Embedder
from kenning.memory import Memory
from kenning.records import Scope
from kenning.search.filters import parse_filters
from kenning.store.postgres.schema import APP_ROLE
from kenning.text import query_terms

if TYPE_CHECKING:
    import psycopg

__all__ = ["alternatives_markdown", "measure_alternatives", "recall_with_ties"]

TENANT = "bench"
_WORD = re.compile(r"[a-z0-9]+")
_RECALL_QUERIES = 20


def _vector_sql(dim: int, *, user: bool) -> str:
    vec = f"v.vec::vector({dim})"
    return (
        f"SELECT i.id, {vec} <=> %s::vector({dim}) AS distance"
        " FROM vectors v JOIN items i ON i.tenant = v.tenant AND i.embed_hash = v.hash"
        f" WHERE v.tenant = %s {'AND i.user_id = %s' if user else ''}"
        " ORDER BY distance LIMIT %s"
    )


_TEXT_SQL = (
    "SELECT i.id FROM items i, to_tsquery('english', %s) q WHERE i.tenant = %s"
    " AND to_tsvector('english', i.text) @@ q"
    " ORDER BY ts_rank_cd(to_tsvector('english', i.text), q) DESC LIMIT %s"
)


def _or_query(text: str) -> str:
    words = [w for t in query_terms(text) for w in _WORD.findall(t.lower())]
    return " | ".join(dict.fromkeys(words)) or "nothing"


def _timed(
    conn: psycopg.Connection[Any], sql: str, params: Sequence[Any]
) -> tuple[float, list[Any]]:
    started = time.perf_counter()
    rows = conn.execute(sql, params).fetchall()
    return (time.perf_counter() - started) * 1000, rows


def recall_with_ties(found: Sequence[float], exact: Sequence[float], k: int = 10) -> float:
    """Share of the top *k* found (by their exact distances) that belong in the exact top *k*.

    Synthetic stores repeat texts, so many rows share one vector: a row tied with the exact
    k-th distance is as right as the one exact search happened to return, and counting by id
    would call it a miss.
    """
    if not exact:
        return 1.0
    bound = sorted(exact)[:k][-1] + 1e-6
    want = min(k, len(exact))
    return sum(1 for d in list(found)[:k] if d <= bound) / want


def measure_alternatives(
    url: str,
    memory: Memory,
    embedder: Embedder,
    queries: Sequence[str],
    users: Sequence[str],
) -> dict[str, Any]:
    """Build pgvector's HNSW and a GIN ``tsvector`` index over the store's rows, time top-100
    queries against kenning's own candidate searches, compare rankings, drop the indexes."""
    import psycopg  # the postgres extra, loaded when a measurement runs

    from kenning.store.postgres.vector import register_vector

    dim = embedder.dimension
    vectors = embedder.embed(list(queries))
    store = memory.store
    model = store.model()
    assert model is not None
    everything = parse_filters(None)
    out: dict[str, Any] = {}
    with psycopg.connect(url, autocommit=True) as admin:
        started = time.perf_counter()
        admin.execute(
            "CREATE INDEX IF NOT EXISTS bench_vectors_hnsw ON vectors"
            f" USING hnsw ((vec::vector({dim})) vector_cosine_ops)"
        )
        out["pgvector_hnsw_build_s"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        admin.execute(
            "CREATE INDEX IF NOT EXISTS bench_items_fts ON items"
            " USING gin (to_tsvector('english', text))"
        )
        out["gin_tsvector_build_s"] = round(time.perf_counter() - started, 1)
        admin.execute("ANALYZE items")
        admin.execute("ANALYZE vectors")
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"SET ROLE {APP_ROLE}")
            register_vector(conn)
            conn.execute("SET hnsw.ef_search = 100")
            conn.execute("SET hnsw.iterative_scan = relaxed_order")
            conn.execute("SELECT set_config('kenning.tenant', %s, false)", (TENANT,))
            times: dict[str, list[float]] = {}
            recall: dict[str, list[float]] = {"hnsw_tenant": [], "hnsw_user": []}
            overlap: list[float] = []
            for i, (query, vec) in enumerate(zip(queries, vectors, strict=True)):
                user = users[i % len(users)]
                for name, scope, sql, params in (
                    ("pgvector_tenant", Scope(TENANT), _vector_sql(dim, user=False),
                     (vec, TENANT, 100)),
                    ("pgvector_user", Scope(TENANT, user), _vector_sql(dim, user=True),
                     (vec, TENANT, user, 100)),
                ):  # fmt: skip
                    ms, rows = _timed(conn, sql, params)
                    times.setdefault(name, []).append(ms)
                    t0 = time.perf_counter()
                    store.nearest(scope, vec, model=model, filters=everything, limit=100)
                    key = "kenning_vector_" + name.split("_")[1]
                    times.setdefault(key, []).append((time.perf_counter() - t0) * 1000)
                    if i < _RECALL_QUERIES:
                        conn.execute("SET enable_indexscan = off")
                        _, truth = _timed(conn, sql, params)
                        conn.execute("SET enable_indexscan = on")
                        hit = recall_with_ties([r[1] for r in rows], [r[1] for r in truth])
                        recall["hnsw_" + name.split("_")[1]].append(hit)
                ms, text_rows = _timed(conn, _TEXT_SQL, (_or_query(query), TENANT, 100))
                ids = [r[0] for r in text_rows]
                times.setdefault("tsvector_tenant", []).append(ms)
                t0 = time.perf_counter()
                bm25 = store.lexical(Scope(TENANT), query, filters=everything, limit=100)
                times.setdefault("kenning_bm25_tenant", []).append(
                    (time.perf_counter() - t0) * 1000
                )
                top = {c.id for c in bm25[:10]}
                if top:
                    overlap.append(len(top & set(ids[:10])) / len(top))
            out["ms"] = {name: percentiles(values) for name, values in times.items()}
            out["pgvector_recall_at_10_vs_exact"] = {
                k: round(sum(v) / len(v), 3) for k, v in recall.items() if v
            }
            out["tsvector_top10_overlap_with_bm25"] = round(sum(overlap) / max(1, len(overlap)), 3)
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("DROP INDEX IF EXISTS bench_vectors_hnsw")
            admin.execute("DROP INDEX IF EXISTS bench_items_fts")
    return out


def alternatives_markdown(entries: Sequence[tuple[str, dict[str, Any]]]) -> list[str]:
    """Report lines for :func:`measure_alternatives` results by store size."""
    lines = [
        "",
        "## In-database alternatives on the PostgreSQL rows (top 100, query vector given)",
        "",
        "| events | candidates | p50 ms | p95 ms |",
        "|---|---|---|---|",
    ]
    names = {
        "kenning_vector_tenant": "kenning partition cosine, tenant",
        "pgvector_tenant": "pgvector HNSW (ef_search 100), tenant",
        "kenning_vector_user": "kenning partition cosine, one user",
        "pgvector_user": "pgvector HNSW + iterative scan, one user",
        "kenning_bm25_tenant": "kenning BM25, tenant",
        "tsvector_tenant": "tsvector GIN + ts_rank_cd, tenant",
    }
    for size, entry in entries:
        for key, label in names.items():
            ms = entry["ms"][key]
            lines.append(f"| {size} | {label} | {ms['p50']:.2f} | {ms['p95']:.2f} |")
    lines.append("")
    for size, entry in entries:
        lines.append(
            f"- {size}: pgvector recall@10 vs exact (rows tied at the 10th distance count) "
            f"{entry['pgvector_recall_at_10_vs_exact']}; "
            f"tsvector top-10 shares {entry['tsvector_top10_overlap_with_bm25']} with BM25's; "
            f"index builds: HNSW {entry['pgvector_hnsw_build_s']} s, GIN "
            f"{entry['gin_tsvector_build_s']} s"
        )
    return lines
