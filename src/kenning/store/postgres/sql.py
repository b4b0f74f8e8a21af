"""PostgreSQL's spelling of the shared SQL (:class:`PostgresDialect`), and transactions that
take the shared SQL's ``?`` placeholders (:class:`PgTx`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg.types.json import Jsonb

from kenning.errors import InvalidInput
from kenning.store.sql.dialect import Dialect, Tx

__all__ = [
    "DIALECT",
    "ROUTED",
    "PgTx",
    "PostgresDialect",
    "insert_values",
    "jsonb",
    "pg_sql",
    "raw",
]

_T = TypeVar("_T")

ROUTED = " RETURNING 1"
"""Appended to an ``INSERT ... SELECT`` of rows from parameters or a staging table. Citus
inserts such rows through the coordinator: with ``COPY`` into the shards, which a worker
refuses on a table under row-level security, or, when the statement returns rows, with
``INSERT`` statements that the worker's policies check. On one server it changes nothing."""


@lru_cache(maxsize=4096)
def pg_sql(sql: str) -> str:
    """Shared SQL as psycopg takes it: each ``?`` outside a quoted literal becomes ``%s`` and a
    literal ``%`` is doubled."""
    out: list[str] = []
    quoted = False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        if ch == "%":
            out.append("%%")
        elif ch == "?" and not quoted:
            out.append("%s")
        else:
            out.append(ch)
    return "".join(out)


class PgTx:
    """A psycopg connection inside a transaction, taking ``?`` placeholders (:func:`pg_sql`);
    ``raw`` is the connection itself, for what only PostgreSQL has (``COPY``)."""

    __slots__ = ("raw",)

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> psycopg.Cursor[Any]:
        return self.raw.execute(pg_sql(sql), parameters)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> None:
        self.raw.cursor().executemany(pg_sql(sql), parameters)


def raw(tx: Tx) -> psycopg.Connection[Any]:
    """The psycopg connection of a PostgreSQL transaction, for what only PostgreSQL has."""
    if not isinstance(tx, PgTx):
        raise TypeError(f"not a PostgreSQL transaction: {tx!r}")
    return tx.raw


#: Parameters per multi-row INSERT (PostgreSQL takes at most 65,535 in one statement).
_MAX_PARAMS = 30_000


def insert_values(
    conn: Tx, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], tail: str = ""
) -> list[Any]:
    """INSERT *rows* into *columns* of *table* as lists of VALUES, in as few statements as the
    parameter limit allows, each ending with *tail* (``ON CONFLICT``, ``RETURNING``); return
    the rows RETURNING gives, in order."""
    per = max(1, _MAX_PARAMS // len(columns))
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    found: list[Any] = []
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        cur = raw(conn).execute(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * len(chunk))}"
            f"{tail}",
            [value for row in chunk for value in row],
        )
        if "RETURNING" in tail:
            found.extend(cur.fetchall())
    return found


def jsonb(value: Any) -> Jsonb | None:
    """A JSON value as a ``jsonb`` parameter (None stays NULL); InvalidInput if it is not
    JSON (checked here, so a bad value fails before the statement, with kenning's error)."""
    if value is None:
        return None
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"value is not JSON-serialisable: {exc}") from exc
    return Jsonb(value)


def _as_is(text: Any) -> str:
    return str(text)


class PostgresDialect(Dialect):
    """PostgreSQL's spelling: times as ``timestamptz``, JSON as ``jsonb``, amounts as
    ``numeric``, lists as one array (``= ANY(?)``), and rows of per-item tables joined on
    their tenant too (the distribution column)."""

    name = "postgresql"
    item_columns = "tenant, item"
    for_update = " FOR UPDATE"
    for_share = " FOR SHARE"
    greatest = "greatest"

    def time(self, at: datetime) -> datetime:
        return at

    def read_time(self, value: Any) -> datetime:
        return cast(datetime, value)

    def json(self, value: Any) -> Jsonb | None:
        return jsonb(value)

    def json_text(self, text: str) -> Jsonb:
        # The text is the JSON: psycopg sends it as it is instead of serialising again.
        return Jsonb(text, dumps=_as_is)

    def read_json(self, value: Any) -> Any:
        return value

    def amount(self, value: Decimal | None) -> Decimal | None:
        return value

    def read_amount(self, value: Any) -> Decimal | None:
        return cast(Decimal | None, value)

    def item_key(self, tenant: str, rowid: int) -> tuple[Any, ...]:
        return (tenant, rowid)

    def item_key_of(self, item: str) -> str:
        return f"{item}.tenant, {item}.rowid"

    def item_rows(self, tenant: str, rowids: Sequence[int]) -> tuple[str, list[Any]]:
        return "tenant = ? AND item = ANY(?)", [tenant, list(rowids)]

    def ids_in(self, alias: str, ids: Sequence[str]) -> tuple[str, list[Any]]:
        return f"{alias}.id = ANY(?)", [list(ids)]

    def text_list(self, values: Sequence[str]) -> list[str]:
        return list(values)

    def read_text_list(self, value: Any) -> list[str]:
        return list(value)

    def vector(self, vec: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return vec

    def batches(self, values: Sequence[_T]) -> Iterator[Sequence[_T]]:
        if values:
            yield values

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [list(values)]

    def for_update_of(self, alias: str) -> str:
        return f" FOR UPDATE OF {alias}"

    def shares_text(self, column: str, values: Sequence[str]) -> tuple[str, list[Any]]:
        return f"{column} && ?::text[]", [list(values)]

    def item_join(self, table: str, item: str) -> str:
        return f"{table}.tenant = {item}.tenant AND {table}.item = {item}.rowid"

    def json_string(self, column: str, key: str) -> str:
        return (
            f"CASE WHEN jsonb_typeof({column} -> '{key}') = 'string' THEN {column} ->> '{key}' END"
        )

    def seconds_between(self, later: str, earlier: str) -> str:
        return f"extract(epoch FROM {later} - {earlier})::float8"

    def tag_rows(self, column: str) -> str:
        return f"jsonb_array_elements_text({column}) AS t(value)"

    def text_order(self, column: str) -> str:
        return f'{column} COLLATE "C"'

    def not_indexed(self, column: str) -> str:
        return column

    def has_tag(self, column: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
        return (
            f"EXISTS (SELECT 1 FROM jsonb_array_elements_text({column}) AS t(value)"
            " WHERE t.value = ANY(?))",
            [list(tags)],
        )

    def meta_in(self, column: str, key: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"({column} -> ?) = ANY(?::jsonb[])", [key, [json.dumps(v) for v in values]]

    def meta_null(self, column: str, key: str) -> tuple[str, list[Any]]:
        return f"coalesce(jsonb_typeof({column} -> ?), 'null') = 'null'", [key]


DIALECT = PostgresDialect()
