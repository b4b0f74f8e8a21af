"""Search filters: parsed once from user input into a :class:`~kenning.records.Filters`.

Filter keys come from a small allowlisted syntax; each store renders the record into its own
query language, with values always passed as parameters.

Keys accepted by :func:`parse_filters`:

``role``            one role or a list (any of)
``tag`` / ``tags``  one tag or a list (any of)
``meta.KEY``        one scalar or a list (any of); ``KEY`` is a metadata key
``kind`` / ``kinds`` record kinds (``event`` for now)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime

from kenning.errors import InvalidFilter
from kenning.records import KINDS, Filters, JSONScalar, Role, to_utc

__all__ = ["admits", "parse_filters"]

_META_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_MAX_VALUES = 100


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
            roles.extend(_roles(value, key))
        elif key in ("tag", "tags"):
            tags.extend(_tags(value, key))
        elif key in ("kind", "kinds"):
            kind_list = [str(item) for item in _as_list(value, key)]
        elif key.startswith("meta."):
            meta[key[5:]] = _meta_values(value, key)
        else:
            raise InvalidFilter(
                f"unknown filter key {key!r:.40}; use 'role', 'tag', 'kind' or 'meta.<key>'"
            )
    for kind in kind_list:
        if kind not in KINDS:
            raise InvalidFilter(f"unknown kind {kind!r:.40}; known kinds: {list(KINDS)}")
    since_at, until_at = _time_range(since, until)
    return Filters(
        roles=tuple(dict.fromkeys(roles)),
        tags=tuple(dict.fromkeys(tags)),
        metadata=tuple(sorted(meta.items())),
        kinds=tuple(dict.fromkeys(kind_list)),
        since=since_at,
        until=until_at,
    )


def _time_range(
    since: datetime | str | float | None, until: datetime | str | float | None
) -> tuple[datetime | None, datetime | None]:
    since_at = None if since is None else to_utc(since, what="since")
    until_at = None if until is None else to_utc(until, what="until")
    if since_at is not None and until_at is not None and since_at > until_at:
        raise InvalidFilter("since is after until")
    return since_at, until_at


def _roles(value: object, key: str) -> list[Role]:
    roles = []
    for item in _as_list(value, key):
        if not isinstance(item, str) or item not in {r.value for r in Role}:
            raise InvalidFilter(
                f"role {item!r:.40} is invalid: use one of {[r.value for r in Role]}"
            )
        roles.append(Role(item))
    return roles


def _tags(value: object, key: str) -> list[str]:
    tags = []
    for item in _as_list(value, key):
        if not isinstance(item, str) or not item or len(item) > 64:
            raise InvalidFilter(f"tag filter value {item!r:.40} must be a short string")
        tags.append(item)
    return tags


def _meta_values(value: object, key: str) -> tuple[JSONScalar, ...]:
    """The values a ``meta.KEY`` filter admits, its KEY checked first."""
    name = key[5:]
    if not _META_KEY_RE.fullmatch(name):
        raise InvalidFilter(f"metadata filter key {name!r:.40} is invalid: letters, digits and '_'")
    values: list[JSONScalar] = []
    for item in _as_list(value, key):
        if item is not None and not isinstance(item, str | int | float | bool):
            raise InvalidFilter(f"filter {key!r} values must be scalars")
        values.append(item)
    return tuple(values)


def admits(filters: Filters, *, kind: str, role: Role, at: datetime,
           tags: Iterable[str], metadata: Mapping[str, JSONScalar]) -> bool:  # fmt: skip
    """True if a record with these attributes passes *filters* (the same rules the stores
    apply inside their queries)."""
    if kind not in filters.kinds or (filters.roles and role not in filters.roles):
        return False
    if (filters.since is not None and at < filters.since) or (
        filters.until is not None and at > filters.until
    ):
        return False
    if filters.tags and not set(filters.tags) & set(tags):
        return False
    return all(metadata.get(key) in values for key, values in filters.metadata)
