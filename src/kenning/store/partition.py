"""In-memory search partitions: one per tenant, holding its vectors and its BM25 postings.

Partitioning by tenant means a query only ever scores its own tenant's records; narrower scopes
and filters become a row mask applied *before* ranking, never to a ranked, cut list. Vectors
are searched exactly (float32 matrix product); the ``VectorIndex`` protocol keeps that layer
swappable for an HNSW index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kenning.store.lexical_index import LexicalIndex

__all__ = ["IndexRows", "Partition", "RowSelector", "VectorIndex"]

F32 = npt.NDArray[np.float32]
# (record id, score, session id)
Ranked = tuple[str, float, str | None]


@dataclass(frozen=True, slots=True)
class IndexRows:
    """Rows to add to a partition: ids, vectors and the attributes masks are built from."""

    ids: Sequence[str]
    rowids: npt.NDArray[np.int64]
    vectors: F32
    has_vector: npt.NDArray[np.bool_]
    texts: Sequence[str]
    labels: Sequence[str]
    users: Sequence[str | None]
    sessions: Sequence[str | None]
    roles: Sequence[str]
    kinds: Sequence[str]
    ats: npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class RowSelector:
    """Which rows of a partition may be scored. ``None`` fields do not constrain."""

    user: str | None = None
    session: str | None = None
    roles: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    rowids: npt.NDArray[np.int64] | None = None


class VectorIndex(Protocol):
    """One tenant's searchable rows."""

    def __len__(self) -> int: ...

    def add(self, rows: IndexRows) -> None: ...

    def nearest(self, query: F32, k: int, select: RowSelector) -> list[Ranked]: ...

    def lexical(self, terms: Sequence[str], k: int, select: RowSelector) -> list[Ranked]: ...


class _Codes:
    """Interns strings to small ints so masks are vectorised comparisons."""

    def __init__(self) -> None:
        self._codes: dict[str | None, int] = {}
        self.values: list[str | None] = []

    def code(self, value: str | None) -> int:
        found = self._codes.get(value)
        if found is None:
            found = len(self._codes)
            self._codes[value] = found
            self.values.append(value)
        return found

    def lookup(self, value: str | None) -> int:
        return self._codes.get(value, -1)

    def covers(self, values: tuple[str, ...]) -> bool:
        """True if every interned value is among *values* (the constraint selects all rows)."""
        return set(self._codes) <= set(values)


class Partition:
    """Exact cosine over a growing float32 matrix (unit vectors) plus in-memory BM25."""

    def __init__(self, dimension: int) -> None:
        self._dim = dimension
        self._n = 0
        self._lexical = LexicalIndex()
        self._has_vector = np.zeros(0, dtype=np.bool_)
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        # Sum of each session's row vectors: the session's centroid direction.
        self._session_sums = np.zeros((0, dimension), dtype=np.float32)
        self._session_users: dict[int, int] = {}
        self._rowids = np.zeros(0, dtype=np.int64)
        self._ats = np.zeros(0, dtype=np.float64)
        self._users = np.zeros(0, dtype=np.int32)
        self._sessions = np.zeros(0, dtype=np.int32)
        self._roles = np.zeros(0, dtype=np.int16)
        self._kinds = np.zeros(0, dtype=np.int16)
        self._ids: list[str] = []
        self._user_codes = _Codes()
        self._session_codes = _Codes()
        self._role_codes = _Codes()
        self._kind_codes = _Codes()

    def __len__(self) -> int:
        return self._n

    @property
    def dimension(self) -> int:
        return self._dim

    def _grow(self, extra: int) -> None:
        need = self._n + extra
        if need <= self._matrix.shape[0]:
            return
        cap = max(need, 2 * self._matrix.shape[0], 1024)

        def grown(arr: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
            out = np.zeros((cap, *arr.shape[1:]), dtype=arr.dtype)
            out[: self._n] = arr[: self._n]
            return out

        self._matrix = grown(self._matrix)  # type: ignore[assignment]
        self._has_vector = grown(self._has_vector)  # type: ignore[assignment]
        self._rowids = grown(self._rowids)  # type: ignore[assignment]
        self._ats = grown(self._ats)  # type: ignore[assignment]
        self._users = grown(self._users)  # type: ignore[assignment]
        self._sessions = grown(self._sessions)  # type: ignore[assignment]
        self._roles = grown(self._roles)  # type: ignore[assignment]
        self._kinds = grown(self._kinds)  # type: ignore[assignment]

    def add(self, rows: IndexRows) -> None:
        count = len(rows.ids)
        if count == 0:
            return
        if rows.vectors.shape != (count, self._dim):
            raise ValueError(f"expected vectors of shape ({count}, {self._dim})")
        self._grow(count)
        end = self._n + count
        self._matrix[self._n : end] = rows.vectors
        self._has_vector[self._n : end] = rows.has_vector
        self._lexical.add(rows.texts, rows.labels)
        self._rowids[self._n : end] = rows.rowids
        self._ats[self._n : end] = rows.ats
        self._users[self._n : end] = [self._user_codes.code(u) for u in rows.users]
        codes = [self._session_codes.code(s) for s in rows.sessions]
        self._sessions[self._n : end] = codes
        for code, user in zip(codes, self._users[self._n : end], strict=True):
            self._session_users.setdefault(code, int(user))
        if len(self._session_codes.values) > self._session_sums.shape[0]:
            grown = np.zeros((2 * len(self._session_codes.values), self._dim), dtype=np.float32)
            grown[: self._session_sums.shape[0]] = self._session_sums
            self._session_sums = grown
        if self._dim:
            np.add.at(
                self._session_sums, np.asarray(codes), rows.vectors * rows.has_vector[:, None]
            )
        self._roles[self._n : end] = [self._role_codes.code(r) for r in rows.roles]
        self._kinds[self._n : end] = [self._kind_codes.code(k) for k in rows.kinds]
        self._ids.extend(rows.ids)
        self._n = end

    def _mask(self, select: RowSelector) -> npt.NDArray[np.bool_] | None:
        n = self._n
        mask: npt.NDArray[np.bool_] | None = None

        def both(m: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
            return m if mask is None else mask & m

        if select.user is not None:
            mask = both(self._users[:n] == self._user_codes.lookup(select.user))
        if select.session is not None:
            mask = both(self._sessions[:n] == self._session_codes.lookup(select.session))
        if select.roles and not self._role_codes.covers(select.roles):
            codes = [self._role_codes.lookup(r) for r in select.roles]
            mask = both(np.isin(self._roles[:n], codes))
        if select.kinds and not self._kind_codes.covers(select.kinds):
            codes = [self._kind_codes.lookup(k) for k in select.kinds]
            mask = both(np.isin(self._kinds[:n], codes))
        if select.since is not None:
            mask = both(self._ats[:n] >= select.since)
        if select.until is not None:
            mask = both(self._ats[:n] <= select.until)
        if select.rowids is not None:
            mask = both(np.isin(self._rowids[:n], select.rowids))
        return mask

    def nearest(self, query: F32, k: int, select: RowSelector) -> list[Ranked]:
        """Top *k* rows by cosine among the selected rows that have a vector."""
        n = self._n
        if n == 0 or k <= 0:
            return []
        mask = self._mask(select)
        if not self._has_vector[:n].all():
            mask = self._has_vector[:n] if mask is None else mask & self._has_vector[:n]
        if mask is None:
            return self._top(self._matrix[:n] @ query, None, k)
        positions = np.flatnonzero(mask)
        if positions.size == 0:
            return []
        # Rows outside the selection never reach the ranking. Gathering few rows is cheaper
        # than one pass over all; for a wide selection the single pass is cheaper.
        if positions.size * 3 < n:
            return self._top(self._matrix[positions] @ query, positions, k)
        return self._top((self._matrix[:n] @ query)[positions], positions, k)

    def lexical(self, terms: Sequence[str], k: int, select: RowSelector) -> list[Ranked]:
        """Top *k* selected rows by BM25 for stemmed *terms* (rows without a match are left out)."""
        if self._n == 0 or k <= 0 or not terms:
            return []
        scores = self._lexical.scores(terms)
        if scores is None:
            return []
        mask = self._mask(select)
        matched = scores > 0 if mask is None else (scores > 0) & mask
        positions = np.flatnonzero(matched)
        if positions.size == 0:
            return []
        return self._top(scores[positions], positions, k)

    def sessions(
        self,
        terms: Sequence[str],
        query: F32 | None,
        select: RowSelector,
        wanted: Sequence[str | None],
    ) -> list[tuple[str | None, float, float]]:
        """The *wanted* sessions inside the selection's scope, each scored as one document:
        (session, BM25 over its turns as one text, cosine to its centroid)."""
        n_groups = len(self._session_codes.values)
        codes = []
        for name in dict.fromkeys(wanted):
            code = self._session_codes.lookup(name)
            if code < 0 or not self._session_in_scope(code, select):
                continue
            codes.append(code)
        if not codes or self._n == 0:
            return []
        index = np.asarray(codes)
        lexical = self._lexical.group_scores(terms, self._sessions, n_groups) if terms else None
        cosine = np.zeros(index.size, dtype=np.float32)
        if query is not None and self._dim:
            sums = self._session_sums[index]
            norms = np.linalg.norm(sums, axis=1)
            np.divide(sums @ query, norms, out=cosine, where=norms > 0)
        names = self._session_codes.values
        return [
            (names[code], float(lexical[code]) if lexical is not None else 0.0, float(cos))
            for code, cos in zip(codes, cosine, strict=True)
        ]

    def _session_in_scope(self, code: int, select: RowSelector) -> bool:
        """A session is in scope when it is the selected session or belongs to the user."""
        if select.session is not None and self._session_codes.values[code] != select.session:
            return False
        if select.user is not None:
            return bool(self._session_users.get(code) == self._user_codes.lookup(select.user))
        return True

    def _top(
        self, scores: npt.NDArray[np.float32], positions: npt.NDArray[np.intp] | None, k: int
    ) -> list[Ranked]:
        """The *k* best (score, then insertion order) as (id, score)."""
        if positions is None:
            positions = np.arange(scores.shape[0])
        k = min(k, scores.shape[0])
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(k)
        top = top[np.lexsort((positions[top], -scores[top]))]
        sessions = self._session_codes.values
        out = []
        for i in top:
            row = int(positions[i])
            out.append((self._ids[row], float(scores[i]), sessions[int(self._sessions[row])]))
        return out
