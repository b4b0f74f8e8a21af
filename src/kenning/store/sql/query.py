"""The tenancy constraint and search filters, written once for every SQL backend.

:func:`where_clause` is the single place where read paths over records get their
tenant/user/session constraint, so no such query can be built without it. Values are always
parameters; only validated identifiers (table aliases) shape the SQL text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kenning.errors import InvalidScope
from kenning.records import Filters, Scope
from kenning.store.sql.dialect import Dialect

__all__ = ["require_user", "scope_sql", "stored_scope", "where_clause"]


@lru_cache(maxsize=65_536)
def stored_scope(tenant: str, user: str | None, session: str | None, agent: str | None) -> Scope:
    """The scope of a stored row."""
    # Rows repeat the same few scopes; validating each id once per process is enough.
    return Scope(tenant, user, session, agent)


def require_user(scope: Scope, what: str) -> str:
    """The scope's user; InvalidScope naming *what* when the scope has none."""
    if scope.user is None:
        raise InvalidScope(f"{what} needs a scope with a user")
    return scope.user


def where_clause(
    d: Dialect, scope: Scope, filters: Filters, *, alias: str = "i", row_check: bool = False
) -> tuple[str, list[Any]]:
    """Render the tenancy constraint and *filters* as a SQL boolean over table alias *alias*.

    Metadata values compare as JSON (a number matches a number, a string a string); ``None``
    matches a missing key or a JSON null. With ``row_check`` the scope columns are kept from
    the planner's access paths (:meth:`Dialect.not_indexed`): for statements that find rows
    by id, the scope is then checked on each found row instead of scanning the tenant's index.
    """
    where, params = scope_sql(d, scope, alias, row_check=row_check)
    parts = [where]
    kinds, kind_params = d.one_of(f"{alias}.kind", filters.kinds)
    parts.append(kinds)
    params += kind_params
    if filters.roles:
        roles, role_params = d.one_of(f"{alias}.role", [r.value for r in filters.roles])
        parts.append(roles)
        params += role_params
    if filters.since is not None:
        parts.append(f"{alias}.at >= ?")
        params.append(d.time(filters.since))
    if filters.until is not None:
        parts.append(f"{alias}.at <= ?")
        params.append(d.time(filters.until))
    if filters.tags:
        tags, tag_params = d.has_tag(f"{alias}.tags", filters.tags)
        parts.append(tags)
        params += tag_params
    for key, values in filters.metadata:
        parts.append(_meta(d, f"{alias}.metadata", key, values, params))
    return " AND ".join(parts), params


def _meta(d: Dialect, column: str, key: str, values: Any, params: list[Any]) -> str:
    """One metadata filter as a condition; its parameters are appended to *params*."""
    non_null = [v for v in values if v is not None]
    ors = []
    if non_null:
        sql, more = d.meta_in(column, key, non_null)
        ors.append(sql)
        params += more
    if len(non_null) != len(values):
        sql, more = d.meta_null(column, key)
        ors.append(sql)
        params += more
    return "(" + " OR ".join(ors) + ")"


def scope_sql(
    d: Dialect, scope: Scope, alias: str = "", *, row_check: bool = False
) -> tuple[str, list[Any]]:
    """The tenancy constraint of a table with ``tenant``, ``user_id`` and ``session`` columns:
    tenant always, user and session when the scope has them."""
    prefix = f"{alias}." if alias else ""
    names = [("tenant", scope.tenant)]
    if scope.user is not None:
        names.append(("user_id", scope.user))
    if scope.session is not None:
        names.append(("session", scope.session))
    hint = d.not_indexed if row_check else str
    return " AND ".join(f"{hint(prefix + n)} = ?" for n, _ in names), [v for _, v in names]
