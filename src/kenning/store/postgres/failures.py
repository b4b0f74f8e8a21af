"""What a PostgreSQL driver error means to a caller: kenning's error for it.

A database that cannot be reached for now (stopped, restarting, shutting down, out of
connection slots) is :class:`~kenning.errors.StoreUnavailable`, 503 with ``Retry-After``; a
full disk is :class:`~kenning.errors.StorageFull`, 507; a refused value is
:class:`~kenning.errors.InvalidInput`; anything else a :class:`~kenning.errors.StoreError`.
"""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors

from kenning.errors import InvalidInput, StorageFull, StoreError, StoreUnavailable

__all__ = ["connection_lost", "translate"]

# The server ended or refused the session: it is shutting down, crashed, is starting up, or
# has no connection slot free. Each passes once the database is back.
_OUTAGE = (
    pg_errors.AdminShutdown,
    pg_errors.CrashShutdown,
    pg_errors.CannotConnectNow,
    pg_errors.TooManyConnections,
)


def connection_lost(exc: BaseException) -> bool:
    """Whether *exc* says the database cannot be reached, rather than that a statement
    failed: a broken connection (an ``OperationalError`` without a SQLSTATE, or SQLSTATE
    class 08) or a server that ended or refused the session."""
    if isinstance(exc, _OUTAGE):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or state.startswith("08")


def translate(exc: psycopg.Error, what: str) -> StoreError | InvalidInput:
    """kenning's error for a driver error raised while doing *what*."""
    if connection_lost(exc):
        return StoreUnavailable(f"PostgreSQL cannot be reached while {what}; retry soon: {exc}")
    if isinstance(exc, pg_errors.DiskFull):
        return StorageFull(
            f"PostgreSQL's disk is full while {what}; the write was rolled back and what is "
            f"stored is intact: {exc}"
        )
    if isinstance(exc, pg_errors.InvalidTextRepresentation | pg_errors.DataException):
        return InvalidInput(f"PostgreSQL refused a value while {what}: {exc}".strip())
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return StoreError(f"PostgreSQL refused {what} (row-level security or grants): {exc}")
    return StoreError(f"PostgreSQL failed while {what}: {exc}".strip())
