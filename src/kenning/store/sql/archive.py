"""A tenant's (or one user's) records as ``kenning-export`` records, and those records written
back, once for every SQL backend (:mod:`kenning.records.archive` holds the format).

An export reads every table of the scope in one read transaction. An import writes a whole
file in one exclusive transaction of its tenant: all of it or nothing. Rows keep their ids,
sequence numbers, versions and times; a row the tenant already holds is left alone (by its
id or key, or for the logs without one, an identical row), so importing a file twice changes
nothing the second time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, ScopeConflict
from kenning.records import Scope
from kenning.records.archive import KINDS, ArchiveRecord, Exported
from kenning.store.records import ModelInfo
from kenning.store.sql.database import SqlDatabase
from kenning.store.sql.dialect import Dialect, Tx
from kenning.store.sql.events import ITEM_COLUMNS
from kenning.store.sql.usage import recount_usage
from kenning.store.sql.vectors import check_model, checked_vector

__all__ = ["ArchiveTables"]

# Flat kinds: table, the order rows are read in, and the columns whose field names differ.
# A table with a rowid is read in its order, the order reads of it follow (a pin list, a
# session's summaries): an import writes the rows in the order they come.
_FLAT: dict[str, tuple[str, str, dict[str, str]]] = {
    "session": ("sessions", "session", {}),
    "pin": ("pins", "rowid", {"pin_kind": "kind"}),
    "summary": ("summaries", "rowid", {}),
    "compaction": ("compaction_log", "rowid", {}),
    "task_state": ("task_state", "session", {}),
    "ledger": ("token_ledger", "session, encoding, seq", {}),
    "extraction": ("extraction_progress", "session", {}),
    "consent": ("user_settings", "user_id", {}),
    "policy": ("tenant_policy", "tenant", {}),
    "hold": ("legal_holds", "user_id, session", {}),
    "purge": ("purge_log", "rowid", {"purged": "kind"}),
    "procedure": ("procedures", "rowid", {}),
    "usage": ("token_usage", "session, model", {}),
}
# Kinds of the tenant as a whole, left out of one user's export.
_TENANT_ONLY = {"policy", "purge"}
# Tables keyed by a session but naming no user: a user's rows are those of their sessions.
_BY_SESSION = {"ledger", "usage"}
# Logs without a key: a row is new when no identical row is there.
_NO_KEY = {"compaction", "purge"}
# An item's own columns: its fields but the nested rows of other tables.
_ITEM_FIELDS = [
    f for f in KINDS["event"] if f not in ("details", "chunks", "token_counts", "access")
]
_FACT_FIELDS = list(KINDS["fact"]["fact"][1])


def _vector(value: Any) -> npt.NDArray[np.float32]:
    if isinstance(value, bytes | bytearray | memoryview):
        return np.frombuffer(bytes(value), dtype=np.float32).copy()
    return np.asarray(value, dtype=np.float32)


def _base_kind(kind: Any) -> str:
    """A column's format type without its optional mark ("time?" is "time"); a tuple kind
    names its type first."""
    return str(kind.rstrip("?") if isinstance(kind, str) else kind[0])


@functools.cache
def _readers(d: Dialect) -> dict[str, Callable[[Any], Any]]:
    """How a stored value of each format type that needs converting is read (JSON apart)."""
    return {"time": d.read_time, "bool": bool, "amount": d.read_amount, "vector": _vector,
            "list": d.read_text_list, "int": int, "float": float}  # fmt: skip


@functools.cache
def _writers(d: Dialect) -> dict[str, Callable[[Any], Any]]:
    """How a format value of each type that needs converting is passed (JSON apart)."""
    return {"time": d.time, "amount": d.amount, "list": d.text_list, "bool": bool}


class ArchiveTables(SqlDatabase):
    """Export and import of ``kenning-export`` records (``kenning export``/``import``)."""

    # -- reading ---------------------------------------------------------------------------

    def _archive_value(self, kind: Any, value: Any) -> Any:
        """A stored value as the format's Python value of type *kind*."""
        base = _base_kind(kind)
        if base == "json":
            return self._d.read_json(value)  # NULL too: the dialect reads it as JSON null
        read = _readers(self._d).get(base)
        return value if value is None or read is None else read(value)

    def _archive_rows(
        self, tx: Tx, spec: Mapping[str, Any], sql: str, params: Sequence[Any]
    ) -> list[dict[str, Any]]:
        return [
            {
                name: self._archive_value(kind, v)
                for (name, kind), v in zip(spec.items(), row, strict=True)
            }
            for row in tx.execute(sql, params)
        ]

    def export_records(self, scope: Scope, *, vectors: bool = False) -> Exported:
        """Every record of *scope* (a tenant, or a tenant's user), read in one transaction;
        with *vectors*, the vectors of its events and facts and its documents' text vectors
        too. Records are in the order they were written, which an import keeps."""
        if scope.session is not None:
            raise InvalidInput("an export is of a tenant or one user, not of a session")
        out: list[ArchiveRecord] = []
        with self._read(Scope(scope.tenant)) as tx:
            for kind, (table, order, renames) in _FLAT.items():
                if scope.user is not None and kind in _TENANT_ONLY:
                    continue
                spec = KINDS[kind]
                cols = ", ".join(renames.get(name, name) for name in spec)
                where, params = self._archive_where(kind, scope)
                sql = f"SELECT {cols} FROM {table} WHERE {where} ORDER BY {order}"
                out += [
                    ArchiveRecord(kind, row) for row in self._archive_rows(tx, spec, sql, params)
                ]
            items = self._export_items(tx, scope)
            out += items
            out += self._export_documents(tx, scope, vectors=vectors)
            model = self._model_in(tx) if vectors else None
            if model is not None:
                out += self._export_vectors(tx, scope.tenant, items)
            doc_model = None
            if vectors:
                row = tx.execute(
                    "SELECT model FROM document_state WHERE tenant = ?", (scope.tenant,)
                ).fetchone()
                doc_model = None if row is None else row[0]
        return Exported(out, model, doc_model)

    def _archive_where(self, kind: str, scope: Scope) -> tuple[str, list[Any]]:
        """The condition of a flat kind's rows of *scope*."""
        if scope.user is None:
            return "tenant = ?", [scope.tenant]
        if kind in _BY_SESSION:
            return (
                "tenant = ? AND session IN (SELECT session FROM sessions WHERE tenant = ?"
                " AND user_id = ?)",
                [scope.tenant, scope.tenant, scope.user],
            )
        return "tenant = ? AND user_id = ?", [scope.tenant, scope.user]

    def _export_items(self, tx: Tx, scope: Scope) -> list[ArchiveRecord]:
        """Events and facts (the items), each with its per-item rows."""
        d = self._d
        spec = KINDS["event"]
        cols = ", ".join(f"i.{c}" for c in _ITEM_FIELDS)
        where, params = "i.tenant = ?", [scope.tenant]
        if scope.user is not None:
            where, params = where + " AND i.user_id = ?", [*params, scope.user]
        rows = tx.execute(
            f"SELECT i.rowid, i.kind, {cols} FROM items i WHERE {where} ORDER BY i.rowid",
            params,
        ).fetchall()
        joined = f"FROM {{t}} x JOIN items i ON {d.item_join('x', 'i')} WHERE {where}"

        def per_item(table: str, columns: str) -> dict[int, list[Any]]:
            found: dict[int, list[Any]] = {}
            sql = f"SELECT i.rowid, {columns} {joined.format(t=table)}"
            for row in tx.execute(sql, params):
                found.setdefault(int(row[0]), []).append(row[1:])
            return found

        details = per_item("event_details", "x.tool_name, x.tool_args, x.tool_result")
        chunks = per_item("item_chunks", "x.n, x.start, x.stop, x.embed_hash, x.lexical")
        counts = per_item("token_counts", "x.encoding, x.n")
        access = per_item("item_access", "x.count, x.last")
        facts = per_item("facts", ", ".join(f"x.{c}" for c in _FACT_FIELDS))
        out = []
        for row in rows:
            rowid, kind = int(row[0]), row[1]
            data = {
                n: self._archive_value(spec[n], v)
                for n, v in zip(_ITEM_FIELDS, row[2:], strict=True)
            }
            det = details.get(rowid)
            data["details"] = None if not det else {
                "tool_name": det[0][0], "tool_args": d.read_json(det[0][1]),
                "tool_result": d.read_json(det[0][2]),
            }  # fmt: skip
            data["chunks"] = sorted(
                ({"n": int(c[0]), "start": int(c[1]), "stop": int(c[2]), "embed_hash": c[3],
                  "lexical": bool(c[4])} for c in chunks.get(rowid, [])),
                key=lambda c: c["n"],
            )  # fmt: skip
            data["token_counts"] = {c[0]: int(c[1]) for c in sorted(counts.get(rowid, []))}
            acc = access.get(rowid)
            data["access"] = None if not acc else {
                "count": int(acc[0][0]), "last": d.read_time(acc[0][1])
            }  # fmt: skip
            if kind == "fact":
                fspec = KINDS["fact"]["fact"][1]
                data["fact"] = {
                    n: self._archive_value(fspec[n], v)
                    for n, v in zip(_FACT_FIELDS, facts[rowid][0], strict=True)
                }
            out.append(ArchiveRecord(kind, data))
        return out

    def _export_documents(self, tx: Tx, scope: Scope, *, vectors: bool) -> list[ArchiveRecord]:
        spec = {k: v for k, v in KINDS["document"].items() if k != "texts"}
        where, params = "tenant = ?", [scope.tenant]
        if scope.user is not None:
            where, params = where + " AND user_id = ?", [*params, scope.user]
        docs = self._archive_rows(
            tx, spec, f"SELECT {', '.join(spec)} FROM documents WHERE {where}"
            " ORDER BY namespace, key", params,
        )  # fmt: skip
        texts: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for ns, key, n, path, text, vec in tx.execute(
            "SELECT namespace, key, n, path, text, vec FROM document_texts WHERE tenant = ?"
            " ORDER BY namespace, key, n",
            (scope.tenant,),
        ):
            keep = vectors and vec is not None
            texts.setdefault((ns, key), []).append({
                "n": int(n), "path": path, "text": text, "vec": _vector(vec) if keep else None,
            })  # fmt: skip
        return [
            ArchiveRecord(
                "document", {**doc, "texts": texts.get((doc["namespace"], doc["key"]), [])}
            )
            for doc in docs
        ]

    def _export_vectors(
        self, tx: Tx, tenant: str, items: Sequence[ArchiveRecord]
    ) -> list[ArchiveRecord]:
        """The vectors the exported items and their chunks name."""
        wanted = {r.data["embed_hash"] for r in items} | {
            c["embed_hash"] for r in items for c in r.data["chunks"]
        }
        wanted.discard(None)
        out = []
        for part in self._d.batches(sorted(wanted)):
            cond, params = self._d.one_of("hash", part)
            for digest, vec in tx.execute(
                f"SELECT hash, vec FROM vectors WHERE tenant = ? AND {cond} ORDER BY hash",
                [tenant, *params],
            ):
                out.append(ArchiveRecord("vector", {"hash": digest, "vec": _vector(vec)}))
        return sorted(out, key=lambda r: str(r.data["hash"]))

    # -- writing ---------------------------------------------------------------------------

    def _archive_param(self, kind: Any, value: Any) -> Any:
        """A format value of type *kind* as a statement parameter."""
        base = _base_kind(kind)
        if base == "json":
            return self._d.json(value)
        write = _writers(self._d).get(base)
        return value if value is None or write is None else write(value)

    def import_records(
        self, tenant: str, records: Sequence[ArchiveRecord], *, model: ModelInfo | None = None,
        document_model: str | None = None,
    ) -> dict[str, int]:  # fmt: skip
        """Write *records* into *tenant* in one transaction (all or nothing); return the rows
        added per kind (0 for a kind whose rows were all there). *model* is the model of the
        ``vector`` records (``ModelMismatch`` if the store holds another's), *document_model*
        that of the documents' text vectors. Raises ``ScopeConflict`` if a session or an id
        of the file belongs to another user or record here."""
        Scope(tenant)
        kinds: dict[str, list[ArchiveRecord]] = {}
        for record in records:
            kinds.setdefault(record.kind, []).append(record)
        if kinds.get("vector") and model is None:
            raise InvalidInput("vector records came without the model they belong to")
        with self._write(Scope(tenant), exclusive=True) as tx:
            before = self._archive_counts(tx, tenant)
            if kinds.get("vector") and model is not None:
                check_model(tx, self._d, model, claim=True)
                self._store_vectors(tx, tenant, {
                    r.data["hash"]: checked_vector(r.data["vec"], model, r.data["hash"])
                    for r in kinds["vector"]
                })  # fmt: skip
            self._import_sessions(tx, tenant, kinds.get("session", []))
            for kind in _FLAT:
                if kind != "session" and kinds.get(kind):
                    self._import_flat(tx, tenant, kind, kinds[kind])
            self._import_items(tx, tenant, kinds.get("event", []) + kinds.get("fact", []))
            self._import_documents(tx, tenant, kinds.get("document", []), document_model)
            recount_usage(tx, tenant)
            after = self._archive_counts(tx, tenant)
        self._after_append({tenant})
        return {kind: after[kind] - before[kind] for kind in after}

    def _archive_counts(self, tx: Tx, tenant: str) -> dict[str, int]:
        """The tenant's rows per kind."""
        out = {}
        for kind, (table, _, _) in _FLAT.items():
            out[kind] = int(tx.execute(f"SELECT count(*) FROM {table} WHERE tenant = ?",
                                       (tenant,)).fetchone()[0])  # fmt: skip
        for kind in ("event", "fact"):
            out[kind] = int(tx.execute("SELECT count(*) FROM items WHERE tenant = ? AND kind = ?",
                                       (tenant, kind)).fetchone()[0])  # fmt: skip
        for kind, table in (("document", "documents"), ("vector", "vectors")):
            out[kind] = int(tx.execute(f"SELECT count(*) FROM {table} WHERE tenant = ?",
                                       (tenant,)).fetchone()[0])  # fmt: skip
        return out

    def _import_sessions(self, tx: Tx, tenant: str, records: Sequence[ArchiveRecord]) -> None:
        """New sessions as they were; ScopeConflict if one here belongs to another user."""
        if not records:
            return
        self._import_flat(tx, tenant, "session", records)
        owners = {r.data["session"]: r.data["user_id"] for r in records}
        for part in self._d.batches(sorted(owners)):
            cond, params = self._d.one_of("session", part)
            for session, user in tx.execute(
                f"SELECT session, user_id FROM sessions WHERE tenant = ? AND {cond}",
                [tenant, *params],
            ):
                if owners[session] != user:
                    line = next(r.line for r in records if r.data["session"] == session)
                    raise ScopeConflict(
                        f"line {line}: session {session!r} of tenant {tenant!r} belongs to "
                        "another user here; nothing was imported"
                    )

    def _import_flat(
        self, tx: Tx, tenant: str, kind: str, records: Sequence[ArchiveRecord]
    ) -> None:
        table, _, renames = _FLAT[kind]
        spec = KINDS[kind]
        cols = ["tenant", *(renames.get(name, name) for name in spec)]
        rows = [(tenant, *(self._archive_param(spec[n], r.data[n]) for n in spec)) for r in records]
        insert = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        if kind not in _NO_KEY:
            tx.executemany(f"{insert} ON CONFLICT DO NOTHING", rows)
            return
        # A log without a key: as many copies of a row as the file holds, counting those here.
        same = " AND ".join(f"{c} IS NOT DISTINCT FROM ?" for c in cols)
        wanted: dict[tuple[Any, ...], int] = {}
        for row in rows:
            wanted[row] = wanted.get(row, 0) + 1
        for row, n in wanted.items():
            have = int(tx.execute(f"SELECT count(*) FROM {table} WHERE {same}", row).fetchone()[0])
            tx.executemany(insert, [row] * max(0, n - have))

    def _import_items(self, tx: Tx, tenant: str, records: Sequence[ArchiveRecord]) -> None:
        """Events and facts with their per-item rows; ScopeConflict if an id or a session's
        sequence number is another record's here."""
        if not records:
            return
        spec = KINDS["event"]
        columns = (*ITEM_COLUMNS, *self._extra_item_columns)
        rows = []
        for r in records:
            data = {**r.data, "tenant": tenant, "kind": r.kind}
            values = [data[c] if c in ("tenant", "kind") else self._archive_param(spec[c], data[c])
                      for c in ITEM_COLUMNS]  # fmt: skip
            scope = Scope(tenant, data["user_id"], data["session"])
            rows.append((*values, *self._item_extras(scope, data["role"], r.kind)))
        tx.executemany(
            f"INSERT INTO items ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
            " ON CONFLICT DO NOTHING",
            rows,
        )
        rowids = self._check_items(tx, tenant, records)
        self._import_parts(tx, tenant, records, rowids)
        seqs: dict[str, int] = {}
        for r in records:
            if r.kind == "event" and r.data["session"] is not None and r.data["seq"] is not None:
                seqs[r.data["session"]] = max(seqs.get(r.data["session"], 0), r.data["seq"])
        tx.executemany(
            "UPDATE sessions SET last_seq = ? WHERE tenant = ? AND session = ? AND last_seq < ?",
            [(seq, tenant, session, seq) for session, seq in seqs.items()],
        )

    def _check_items(self, tx: Tx, tenant: str, records: Sequence[ArchiveRecord]) -> dict[str, int]:
        """Each record's rowid here; ScopeConflict if its id is another record's here, or its
        session's sequence number was taken by another event."""
        d = self._d
        found: dict[str, tuple[int, str, str | None, int | None]] = {}
        for part in d.batches([r.data["id"] for r in records]):
            cond, params = d.ids_in("i", part)
            for id_, rowid, kind, session, seq in tx.execute(
                f"SELECT i.id, i.rowid, i.kind, i.session, i.seq FROM items i"
                f" WHERE i.tenant = ? AND {cond}",
                [tenant, *params],
            ):
                found[id_] = (int(rowid), kind, session, None if seq is None else int(seq))
        for r in records:
            have = found.get(r.data["id"])
            if have is None or have[1:] != (r.kind, r.data["session"], r.data["seq"]):
                raise ScopeConflict(
                    f"line {r.line}: {r.kind} {r.data['id']!r} clashes with another record of "
                    f"tenant {tenant!r} here (its id, or seq {r.data['seq']} of session "
                    f"{r.data['session']!r}); nothing was imported"
                )
        return {id_: v[0] for id_, v in found.items()}

    def _import_parts(
        self, tx: Tx, tenant: str, records: Sequence[ArchiveRecord], rowids: Mapping[str, int]
    ) -> None:
        """Tool details, chunks, token counts, access statistics and facts of the items."""
        d = self._d
        fspec = KINDS["fact"]["fact"][1]
        details, chunks, counts, access, facts = [], [], [], [], []
        for r in records:
            data, key = r.data, d.item_key(tenant, rowids[r.data["id"]])
            if data["details"] is not None:
                det = data["details"]
                details.append((*key, det["tool_name"], d.json(det["tool_args"]),
                                d.json(det["tool_result"])))  # fmt: skip
            chunks += [(*key, c["n"], c["start"], c["stop"], c["embed_hash"], c["lexical"])
                       for c in data["chunks"]]  # fmt: skip
            counts += [(*key, enc, n) for enc, n in data["token_counts"].items()]
            if data["access"] is not None:
                access.append((*key, data["access"]["count"], d.time(data["access"]["last"])))
            if r.kind == "fact":
                fact = [self._archive_param(fspec[n], data["fact"][n]) for n in _FACT_FIELDS]
                facts.append((tenant, rowids[data["id"]], data["user_id"], *fact))
        ic = d.item_columns
        for table, cols, rows in (
            ("event_details", f"{ic}, tool_name, tool_args, tool_result", details),
            ("item_chunks", f"{ic}, n, start, stop, embed_hash, lexical", chunks),
            ("token_counts", f"{ic}, encoding, n", counts),
            ("item_access", f"{ic}, count, last", access),
            ("facts", f"tenant, item, user_id, {', '.join(_FACT_FIELDS)}", facts),
        ):
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                tx.executemany(
                    f"INSERT INTO {table} ({cols}) VALUES ({marks}) ON CONFLICT DO NOTHING", rows
                )

    def _import_documents(
        self, tx: Tx, tenant: str, records: Sequence[ArchiveRecord], model: str | None
    ) -> None:
        """Documents with their texts; the tenant's document version moves if any is new."""
        if not records:
            return
        spec = {k: v for k, v in KINDS["document"].items() if k != "texts"}
        had = int(tx.execute("SELECT count(*) FROM documents WHERE tenant = ?",
                             (tenant,)).fetchone()[0])  # fmt: skip
        cols = ["tenant", *spec]
        tx.executemany(
            f"INSERT INTO documents ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
            " ON CONFLICT DO NOTHING",
            [(tenant, *(self._archive_param(spec[n], r.data[n]) for n in spec)) for r in records],
        )
        texts = [
            (tenant, r.data["namespace"], r.data["key"], t["n"], t["path"], t["text"],
             None if t["vec"] is None else np.ascontiguousarray(t["vec"], np.float32).tobytes())
            for r in records for t in r.data["texts"]
        ]  # fmt: skip
        if texts:
            tx.executemany(
                "INSERT INTO document_texts (tenant, namespace, key, n, path, text, vec)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                texts,
            )
        now = int(tx.execute("SELECT count(*) FROM documents WHERE tenant = ?",
                             (tenant,)).fetchone()[0])  # fmt: skip
        if now == had:
            return
        vectors = any(t[6] is not None for t in texts)
        row = tx.execute(
            "INSERT INTO document_state (tenant, version, model) VALUES (?, 1, ?)"
            " ON CONFLICT (tenant) DO UPDATE SET version = document_state.version + 1"
            " RETURNING model",
            (tenant, model if vectors else None),
        ).fetchone()
        if vectors and row[0] != model:
            if row[0] is not None:
                raise InvalidInput(
                    f"tenant {tenant!r}'s documents are embedded with {row[0]!r}, the file's "
                    f"with {model!r}: mixing models is refused; nothing was imported"
                )
            tx.execute("UPDATE document_state SET model = ? WHERE tenant = ?", (model, tenant))
