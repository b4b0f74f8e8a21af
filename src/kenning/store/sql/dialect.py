"""What the SQL backends do not share: how a value is stored, how a list is passed, and a few
spellings. Everything else in the store's SQL is written once (:mod:`kenning.store.sql`).

Shared statements are written with ``?`` placeholders; a transaction (:class:`Tx`) takes them
as they are on SQLite, and the PostgreSQL one translates them to ``%s``
(:func:`kenning.store.postgres.sql.pg_sql`). Rows come back as sequences; a
:class:`Dialect` turns stored times, JSON and amounts back into Python values.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput

__all__ = ["Cursor", "Dialect", "Tx", "dumps"]

_T = TypeVar("_T")


class Cursor(Protocol):
    """The rows of one statement (the part of a DB-API cursor the store reads)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Tx(Protocol):
    """A connection inside one transaction, taking ``?`` placeholders."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any: ...


def dumps(value: Any) -> str | None:
    """JSON text of a value to store (None stays NULL); InvalidInput if it is not JSON."""
    if value is None:
        return None
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"value is not JSON-serialisable: {exc}") from exc


class Dialect(ABC):
    """One backend's spelling of what the shared SQL needs: how times, JSON and amounts are
    stored, how a list of values is passed (``IN (?, ?)`` in slices, or one array), and the
    few expressions whose syntax differs."""

    name: str
    #: The key columns of a per-item table (chunks, details, token counts, access): the
    #: item's rowid, and where rows are distributed by tenant, the tenant first.
    item_columns: str = "item"
    #: Appended to a SELECT that must lock the rows it reads until the transaction ends, or
    #: keep them from being locked for update (SQLite's single writer needs neither).
    for_update: str = ""
    for_share: str = ""
    #: The larger of two values (a scalar function).
    greatest: str = "max"

    # -- values ---------------------------------------------------------------------------

    @abstractmethod
    def time(self, at: datetime) -> object:
        """A time as a statement parameter."""

    @abstractmethod
    def read_time(self, value: Any) -> datetime:
        """A stored time as an aware UTC datetime."""

    def opt_time(self, at: datetime | None) -> object:
        """A time that may be None as a parameter."""
        return None if at is None else self.time(at)

    def read_opt_time(self, value: Any) -> datetime | None:
        """A stored time that may be NULL."""
        return None if value is None else self.read_time(value)

    @abstractmethod
    def json(self, value: Any) -> object:
        """A JSON value as a parameter (None stays NULL); InvalidInput if it is not JSON."""

    @abstractmethod
    def json_text(self, text: str) -> object:
        """JSON already serialised and checked (its text) as a parameter."""

    @abstractmethod
    def read_json(self, value: Any) -> Any:
        """A stored JSON value as Python data (NULL stays None)."""

    @abstractmethod
    def amount(self, value: Decimal | None) -> object:
        """An exact amount as a parameter."""

    @abstractmethod
    def read_amount(self, value: Any) -> Decimal | None:
        """A stored amount."""

    @abstractmethod
    def text_list(self, values: Sequence[str]) -> object:
        """A list of texts as a parameter (a fact's sources)."""

    def read_tags(self, value: Any) -> tuple[str, ...]:
        """A record's stored tags (a JSON list)."""
        return tuple(self.read_json(value))

    @abstractmethod
    def read_text_list(self, value: Any) -> list[str]:
        """A stored list of texts."""

    @abstractmethod
    def vector(self, vec: npt.NDArray[np.float32]) -> object:
        """A checked vector (:func:`kenning.store.sql.vectors.checked_vector`) as a parameter."""

    # -- lists ----------------------------------------------------------------------------

    @abstractmethod
    def batches(self, values: Sequence[_T]) -> Iterator[Sequence[_T]]:
        """*values* in as few slices as one statement can take (none for no values)."""

    @abstractmethod
    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of *values* (a slice of :meth:`batches`), and its parameters."""

    def item_key(self, tenant: str, rowid: int) -> tuple[Any, ...]:
        """The values of :attr:`item_columns` for an item."""
        return (rowid,)

    def item_key_of(self, item: str) -> str:
        """The values of :attr:`item_columns` taken from the alias *item* of ``items``."""
        return f"{item}.rowid"

    def item_rows(self, tenant: str, rowids: Sequence[int]) -> tuple[str, list[Any]]:
        """Rows of a per-item table for items *rowids* of *tenant* (a slice of
        :meth:`batches`)."""
        return self.one_of("item", rowids)

    @abstractmethod
    def ids_in(self, alias: str, ids: Sequence[str]) -> tuple[str, list[Any]]:
        """Records of ``items`` alias *alias* with these ids (a slice of :meth:`batches`)."""

    # -- expressions ----------------------------------------------------------------------

    @abstractmethod
    def for_update_of(self, alias: str) -> str:
        """Appended to a SELECT to lock the rows of table *alias* it reads."""

    @abstractmethod
    def shares_text(self, column: str, values: Sequence[str]) -> tuple[str, list[Any]]:
        """The list of texts *column* (:meth:`text_list`) holds one of *values*."""

    @abstractmethod
    def item_join(self, table: str, item: str) -> str:
        """The join condition of a per-item table's alias *table* (chunks, details, counts,
        access) with the alias *item* of ``items``."""

    @abstractmethod
    def json_string(self, column: str, key: str) -> str:
        """A top-level *key* of a JSON object column when its value is a string, else NULL
        (*key* is a literal name, never input)."""

    @abstractmethod
    def seconds_between(self, later: str, earlier: str) -> str:
        """Seconds from the time *earlier* to *later* (SQL expressions), as a float."""

    @abstractmethod
    def tag_rows(self, column: str) -> str:
        """A table source with one row per element of the JSON list *column*, the element's
        text in column ``t.value``."""

    @abstractmethod
    def text_order(self, column: str) -> str:
        """*column* to order by code point, as Python sorts text."""

    @abstractmethod
    def not_indexed(self, column: str) -> str:
        """*column* in a form the planner will not use an index for (to check a found row
        rather than scan by it); where the planner needs no hint, the column itself."""

    @abstractmethod
    def has_tag(self, column: str, tags: Sequence[str]) -> tuple[str, list[Any]]:
        """The JSON list *column* holds one of *tags*, and its parameters."""

    @abstractmethod
    def meta_in(self, column: str, key: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """The *key* of the JSON object *column* equals one of *values* as JSON (a number
        matches a number, a string a string); the key travels as a parameter."""

    @abstractmethod
    def meta_null(self, column: str, key: str) -> tuple[str, list[Any]]:
        """The *key* of the JSON object *column* is missing or null."""
