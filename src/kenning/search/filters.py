"""Search filters: parsed once from user input into a frozen record, then rendered to SQL.

Filter keys come from a small allowlisted syntax; values are always SQL parameters.

Keys accepted by :func:`parse_filters`:

``role``            one role or a list (any of)
``tag`` / ``tags``  one tag or a list (any of)
``meta.KEY``        one scalar or a list (any of); ``KEY`` is a metadata key
``kind`` / ``kinds`` record kinds (``event`` for now)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from kenning.errors import InvalidFilter
from kenning.records import JSONScalar, Role, Scope, to_utc

__all__ = ["KINDS", "Filters", "parse_filters", "where_clause"]

KINDS = ("event",)
_META_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_MAX_VALUES = 100


@dataclass(frozen=True, slots=True)
class Filters:
    """Constraints applied inside every search query, before any scoring."""

    roles: tuple[Role, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: tuple[tuple[str, tuple[JSONScalar, ...]], ...] = ()
    kinds: tuple[str, ...] = KINDS
    since: datetime | None = None
    until: datetime | None = None

    @property
    def needs_sql(self) -> bool:
        """True when the filter can only be evaluated by the database (tags, metadata)."""
        return bool(self.tags or self.metadata)


def _as_list(value: object, key: str) -> list[object]:
    items = list(value) if isinstance(value, list | tuple | set | frozenset) else [value]
    if not items:
        raise InvalidFilter(f"filter {key!r} has an empty list of values")
    if len(items) > _MAX_VALUES:
        raise InvalidFilter(f"filter {key!r} has more than {_MAX_VALUES} values")
    return items


def parse_filters(
    filters: Mapping[str, object] | None,
    *,
    kinds: Iterable[str] | None = None,
    since: datetime | str | float | None = None,
    until: datetime | str | float | None = None,
) -> Filters:
    """Validate user filters and return a :class:`Filters`.

    Raises :class:`InvalidFilter` (a ``ValueError``) for an unknown key or a bad value.

    >>> parse_filters({"role": "user", "meta.speaker": ["Ann", "Bo"]}).roles
    (<Role.USER: 'user'>,)
    """
    roles: list[Role] = []
    tags: list[str] = []
    meta: dict[str, tuple[JSONScalar, ...]] = {}
    kind_list = list(kinds) if kinds is not None else list(KINDS)
    for key, value in (filters or {}).items():
        if not isinstance(key, str):
            raise InvalidFilter(f"filter key {key!r:.40} must be a string")
        if key == "role":
            for item in _as_list(value, key):
                if not isinstance(item, str) or item not in {r.value for r in Role}:
                    raise InvalidFilter(
                        f"role {item!r:.40} is invalid: use one of {[r.value for r in Role]}"
                    )
                roles.append(Role(item))
        elif key in ("tag", "tags"):
            for item in _as_list(value, key):
                if not isinstance(item, str) or not item or len(item) > 64:
                    raise InvalidFilter(f"tag filter value {item!r:.40} must be a short string")
                tags.append(item)
        elif key in ("kind", "kinds"):
            kind_list = [str(item) for item in _as_list(value, key)]
        elif key.startswith("meta."):
            name = key[5:]
            if not _META_KEY_RE.fullmatch(name):
                raise InvalidFilter(
                    f"metadata filter key {name!r:.40} is invalid: letters, digits and '_'"
                )
            values: list[JSONScalar] = []
            for item in _as_list(value, key):
                if item is not None and not isinstance(item, str | int | float | bool):
                    raise InvalidFilter(f"filter {key!r} values must be scalars")
                values.append(item)
            meta[name] = tuple(values)
        else:
            raise InvalidFilter(
                f"unknown filter key {key!r:.40}; use 'role', 'tag', 'kind' or 'meta.<key>'"
            )
    for kind in kind_list:
        if kind not in KINDS:
            raise InvalidFilter(f"unknown kind {kind!r:.40}; known kinds: {list(KINDS)}")
    since_at = None if since is None else to_utc(since, what="since")
    until_at = None if until is None else to_utc(until, what="until")
    if since_at is not None and until_at is not None and since_at > until_at:
        raise InvalidFilter("since is after until")
    return Filters(
        roles=tuple(dict.fromkeys(roles)),
        tags=tuple(dict.fromkeys(tags)),
        metadata=tuple(sorted(meta.items())),
        kinds=tuple(dict.fromkeys(kind_list)),
        since=since_at,
        until=until_at,
    )


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


def where_clause(
    scope: Scope, filters: Filters, *, alias: str = "i", row_check: bool = False
) -> tuple[str, list[object]]:
    """Render the tenancy constraint and *filters* as a SQL boolean over table alias *alias*.

    This is the single place where read paths get their tenant/user/session constraint, so no
    query can be built without it. Values are parameters; only validated identifiers (the alias
    and allowlisted metadata keys, passed as JSON paths in parameters) shape the SQL text.

    With ``row_check`` the scope columns are marked unusable as an access path (unary ``+``):
    for statements that find rows by id, the scope is then checked on each found row instead
    of the planner scanning the tenant's index.
    """
    a = f"+{alias}" if row_check else alias
    parts = [f"{a}.tenant = ?"]
    params: list[object] = [scope.tenant]
    if scope.user is not None:
        parts.append(f"{a}.user = ?")
        params.append(scope.user)
    if scope.session is not None:
        parts.append(f"{a}.session = ?")
        params.append(scope.session)
    a = alias
    parts.append(f"{a}.kind IN ({_placeholders(len(filters.kinds))})")
    params.extend(filters.kinds)
    if filters.roles:
        parts.append(f"{a}.role IN ({_placeholders(len(filters.roles))})")
        params.extend(r.value for r in filters.roles)
    if filters.since is not None:
        parts.append(f"{a}.at >= ?")
        params.append(filters.since.timestamp())
    if filters.until is not None:
        parts.append(f"{a}.at <= ?")
        params.append(filters.until.timestamp())
    if filters.tags:
        parts.append(
            f"EXISTS (SELECT 1 FROM json_each({a}.tags) t "
            f"WHERE t.value IN ({_placeholders(len(filters.tags))}))"
        )
        params.extend(filters.tags)
    for key, values in filters.metadata:
        path = f'$."{key}"'
        non_null = [v for v in values if v is not None]
        ors = []
        if non_null:
            ors.append(f"json_extract({a}.metadata, ?) IN ({_placeholders(len(non_null))})")
            params.append(path)
            params.extend(non_null)
        if len(non_null) != len(values):
            ors.append(f"json_type({a}.metadata, ?) IS NULL OR json_type({a}.metadata, ?) = 'null'")
            params.extend([path, path])
        parts.append("(" + " OR ".join(ors) + ")")
    return " AND ".join(parts), params
