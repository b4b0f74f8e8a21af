"""Each tenant's stored volume as a counter row, on every SQL backend.

``tenant_usage`` holds a tenant's events and their content's characters. Every statement that
adds or removes events changes it in the same transaction: an append adds its batch with one
upsert, which takes the row's lock until the transaction ends, and applies the tenant's
:class:`~kenning.records.Quota` to the total it returns (raising rolls the whole batch back).
Appends of one tenant therefore pass the quota one after the other, from any number of threads
or processes, while the check itself is written once (:meth:`Quota.check`). An erase or purge
subtracts what it deleted; a tenant that holds no events has no row.

Characters are counted as the databases count them (``length`` of the text: code points, the
same as Python's ``len`` for the text kenning accepts).
"""

from __future__ import annotations

from kenning.records import Quota, TenantUsage
from kenning.store.sql.dialect import Tx

__all__ = ["add_usage", "read_usage", "recount_usage", "remove_usage"]

# A tenant's events and characters counted from its rows (the migrations backfill alike).
_COUNTED = "SELECT tenant, count(*), coalesce(sum(length(text)), 0) FROM items WHERE kind = 'event'"


def read_usage(tx: Tx, tenant: str) -> TenantUsage:
    """What *tenant* stores, as its counter says."""
    row = tx.execute(
        "SELECT events, content_chars FROM tenant_usage WHERE tenant = ?", (tenant,)
    ).fetchone()
    return TenantUsage(0, 0) if row is None else TenantUsage(int(row[0]), int(row[1]))


def add_usage(tx: Tx, tenant: str, *, events: int, chars: int, quota: Quota | None) -> None:
    """Count a batch of *events* (*chars* characters) that *tx* writes for *tenant*; raise
    ``QuotaExceeded`` if it takes the tenant past *quota* (the caller's transaction then rolls
    back, the counter with it)."""
    row = tx.execute(
        "INSERT INTO tenant_usage AS u (tenant, events, content_chars) VALUES (?, ?, ?)"
        " ON CONFLICT (tenant) DO UPDATE SET events = u.events + excluded.events,"
        " content_chars = u.content_chars + excluded.content_chars"
        " RETURNING events, content_chars",
        (tenant, events, chars),
    ).fetchone()
    if quota is not None:
        before = TenantUsage(int(row[0]) - events, int(row[1]) - chars)
        quota.check(tenant, before, events=events, chars=chars)


def remove_usage(tx: Tx, tenant: str, *, events: int, chars: int) -> None:
    """Subtract erased events of *tenant* from its counter (the row goes with its last
    event)."""
    if not events:
        return
    tx.execute(
        "UPDATE tenant_usage SET events = events - ?, content_chars = content_chars - ?"
        " WHERE tenant = ?",
        (events, chars, tenant),
    )
    tx.execute("DELETE FROM tenant_usage WHERE tenant = ? AND events <= 0", (tenant,))


def recount_usage(tx: Tx, tenant: str) -> None:
    """Set *tenant*'s counter from its rows (after a bulk copy that bypassed the appends)."""
    tx.execute("DELETE FROM tenant_usage WHERE tenant = ?", (tenant,))
    tx.execute(
        f"INSERT INTO tenant_usage (tenant, events, content_chars) {_COUNTED} AND tenant = ?"
        " GROUP BY tenant",
        (tenant,),
    )
