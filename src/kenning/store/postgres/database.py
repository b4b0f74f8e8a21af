"""Connections of the PostgreSQL store: a pool, per-tenant transactions, errors translated.

Every transaction names the scope it serves. Right after ``BEGIN`` it sets ``kenning.tenant``
for that transaction only (``set_config(..., true)``, i.e. ``SET LOCAL``), which the
row-level security policies check (:mod:`~kenning.store.postgres.schema`); a transaction
without a tenant sees no tenant rows at all. The pool's connections act as the application
role, which cannot bypass those policies.

Reads run in ``REPEATABLE READ READ ONLY`` transactions: every statement of a read sees one
committed state. Writes run in ``READ COMMITTED`` transactions, committed whole or rolled back,
with explicit locks where SQLite's single writer gave order for free:

- a write to a session locks its ``sessions`` row (sequence numbers, pin versions, the
  ledger and task state stay serial within a session; sessions never wait for each other);
- every write takes a shared advisory lock on its tenant, ``forget`` an exclusive one, so a
  write computed from records that an erase removes either commits before the erase starts
  (and the erase takes what derives from them along) or sees the new erase generation and is
  refused (:class:`~kenning.errors.StaleWrite`).

Driver errors are translated at this boundary into :mod:`kenning.errors`.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from kenning.errors import InvalidInput, StoreError, StoreUnavailable
from kenning.records import Scope
from kenning.store.postgres import redact
from kenning.store.postgres.cross import CROSS_TENANT
from kenning.store.postgres.failures import connection_lost, translate
from kenning.store.postgres.schema import (
    APP_ROLE,
    distribute,
    is_citus,
    migrate,
    pending_migrations,
)
from kenning.store.postgres.sql import DIALECT, ROUTED, PgTx, insert_values, raw
from kenning.store.postgres.vector import register_vector
from kenning.store.records import ModelInfo
from kenning.store.sql.database import (
    SqlDatabase,
    check_generation,
    check_owner,
    check_owner_once,
    erase_generation,
    traced_tx,
)
from kenning.store.sql.dialect import Tx

__all__ = ["Database", "check_generation", "check_owner", "erase_generation"]

RawConn = psycopg.Connection[Any]
Conn = PgTx

#: Once a lost connection is seen, a request waits at most this long for a connection (not
#: the pool's full timeout): during an outage a client hears 503 at once and retries later.
OUTAGE_WAIT_S = 1.0
#: How long the pool retries a lost connection before giving up its slot. A request that
#: then waits starts a new attempt at once, so connections come back within about a second
#: of the database, not after the pool's doubling delays (1, 2, 4, 8 ... s).
RECONNECT_S = 2.0


def tenant_key(tenant: str) -> int:
    """The advisory lock key of a tenant (a stable 32-bit hash)."""
    return zlib.crc32(tenant.encode("utf-8"))


def tenant_setting(tenant: str, *, citus: bool) -> sql.Composed:
    """The statement that points row-level security at *tenant* for the rest of the
    transaction. On Citus the policies run on the workers, which a ``set_config`` on the
    coordinator does not reach; a ``SET LOCAL`` does, on a connection that tells Citus to
    pass such settings on (:data:`CITUS_SESSION`), and still ends with the transaction.
    Citus passes on the whole text of the message that holds the ``SET``: on Citus it must
    be sent alone."""
    if not citus:
        return sql.SQL("SELECT set_config('kenning.tenant', {}, true)").format(sql.Literal(tenant))
    return sql.SQL("SET LOCAL kenning.tenant = {}").format(sql.Literal(tenant))


#: Set once on each pooled connection to a Citus coordinator: ``SET LOCAL`` commands reach
#: the workers that the transaction uses.
CITUS_SESSION = "SET citus.propagate_set_commands = 'local'"


def _begin(
    begin: str, scope: Scope | None, *, citus: bool = False, lock: str | None = None
) -> list[sql.Composed]:
    """The messages that start a transaction for *scope*: ``BEGIN``, the tenant setting
    (empty without a scope: no tenant row is visible) and, for writes, the tenant's lock. One
    message (one round trip); on Citus the setting is a second one (:func:`tenant_setting`)."""
    tenant = "" if scope is None else scope.tenant
    parts: list[sql.Composable] = [sql.SQL(begin)]
    if lock is not None and scope is not None:
        fn = "pg_advisory_xact_lock" if lock == "exclusive" else "pg_advisory_xact_lock_shared"
        parts.append(sql.SQL("SELECT {}({})").format(sql.SQL(fn), sql.Literal(tenant_key(tenant))))
    setting = tenant_setting(tenant, citus=citus)
    if citus:
        return [sql.SQL("; ").join(parts), setting]
    return [sql.SQL("; ").join([parts[0], setting, *parts[1:]])]


class Database(SqlDatabase):
    """The connection pool of one PostgreSQL store and the transactions over it."""

    _d = DIALECT
    _cross = CROSS_TENANT

    def __init__(self, url: str, *, pool_size: int = 8, timeout_s: float = 30.0) -> None:
        if not url.startswith(("postgresql://", "postgres://")):
            raise InvalidInput(f"{redact(url)} is not a PostgreSQL URL (postgresql://...)")
        self._url = url
        self._timeout_s = timeout_s
        self._closed = False
        self._local = threading.local()
        # A connection was lost and no transaction has succeeded since.
        self._unreachable = False
        self._citus = False  # set by _prepare: the database runs Citus
        self._role = self._prepare()
        # The model row is written once and never changed: reads may remember it.
        self._known_model: ModelInfo | None = None
        self._pool: ConnectionPool[RawConn] = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True},
            configure=self._configure,
            timeout=timeout_s,
            reconnect_timeout=RECONNECT_S,
            open=False,
            name="kenning",
        )
        try:
            self._pool.open(wait=True, timeout=timeout_s)
        except (PoolTimeout, psycopg.Error) as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to {redact(url)}: {exc}") from exc

    @property
    def url(self) -> str:
        """The store's URL, without its password."""
        return redact(self._url)

    def _prepare(self) -> str:
        """Migrate the database if this URL's role may, and decide which role to act as."""
        try:
            with psycopg.connect(self._url, autocommit=True, connect_timeout=10) as conn:
                user = conn.execute("SELECT current_user").fetchone()
                assert user is not None
                pending = pending_migrations(conn)
                if pending and user[0] == APP_ROLE:
                    raise StoreError(
                        f"database {redact(self._url)} needs migrations {pending}; open it once "
                        f"with the URL of the role that owns kenning's tables, not {APP_ROLE}"
                    )
                if pending:
                    self._ensure_pgvector(conn)
                    migrate(conn)
                if user[0] != APP_ROLE:
                    distribute(conn)  # a database that became Citus after its migrations
                    self._join_app_role(conn)
                self._citus = is_citus(conn)
        except psycopg.OperationalError as exc:
            raise StoreError(f"cannot connect to {redact(self._url)}: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"cannot prepare {redact(self._url)}: {exc}") from exc
        return str(user[0])

    @staticmethod
    def _join_app_role(conn: RawConn) -> None:
        """Make sure this login may act as the application role (checked once, here, so a
        missing grant is one clear error rather than a pool that never fills)."""
        member = conn.execute(
            "SELECT pg_has_role(current_user, %s, 'MEMBER')", (APP_ROLE,)
        ).fetchone()
        try:
            if member is None or not member[0]:
                conn.execute(f"GRANT {APP_ROLE} TO current_user")
            conn.execute(f"SET ROLE {APP_ROLE}")
            conn.execute("RESET ROLE")
        except psycopg.Error as exc:
            raise StoreError(
                f"this login cannot act as {APP_ROLE}: as a superuser run "
                f"GRANT {APP_ROLE} TO <this login>, or connect as {APP_ROLE} itself: {exc}"
            ) from exc

    @staticmethod
    def _ensure_pgvector(conn: RawConn) -> None:
        row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if row is not None:
            return
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            raise StoreError(
                "the pgvector extension is not enabled in this database and this role cannot "
                "enable it: as a superuser run CREATE EXTENSION vector (scripts/postgres-ci.sh "
                f"installs pgvector): {exc}"
            ) from exc

    def _configure(self, conn: RawConn) -> None:
        # Act as the application role: it owns nothing and cannot bypass row-level security.
        if self._role != APP_ROLE:
            conn.execute(f"SET ROLE {APP_ROLE}")
        # Times come back in UTC whatever the server's zone, as from the SQLite store.
        conn.execute("SET TIME ZONE 'UTC'")
        if self._citus:
            conn.execute(CITUS_SESSION)
        register_vector(conn)

    def _model_in(self, conn: Tx) -> ModelInfo | None:
        """The stored embedding model, as seen by a read transaction (remembered once set)."""
        if self._known_model is None:
            row = conn.execute(
                "SELECT model_id, dimension, normalized FROM embedding_model WHERE id = 1"
            ).fetchone()
            if row is not None:
                self._known_model = ModelInfo(row[0], int(row[1]), bool(row[2]))
        return self._known_model

    # -- transactions ----------------------------------------------------------------------

    @property
    def citus(self) -> bool:
        """Whether the database runs Citus (checked once, when the store opens)."""
        return self._citus

    def set_tenant(self, conn: Tx, tenant: str) -> None:
        """Point row-level security at *tenant* for the rest of the transaction."""
        raw(conn).execute(tenant_setting(tenant, citus=self._citus))

    @contextmanager
    @traced_tx("kenning.store.read")
    def _read(self, scope: Scope | None) -> Iterator[Conn]:
        """A read transaction for *scope* (None: the store's own bookkeeping, no tenant data):
        every statement inside sees one committed state, and the scope's session belongs to
        the scope's user."""
        if self._closed:
            raise StoreError("the store is closed")
        nested: Conn | None = getattr(self._local, "open_read", None)
        if nested is not None:
            if scope is not None and scope.tenant != self._local.read_tenant:
                self.set_tenant(nested, scope.tenant)
                self._local.read_tenant = scope.tenant
            check_owner_once(nested, DIALECT, scope, self._local.checked)
            yield nested  # already inside this thread's read transaction
            return
        begin = _begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", scope, citus=self._citus)
        with self._transaction(begin, "reading") as tx:
            self._local.open_read = tx
            self._local.read_tenant = "" if scope is None else scope.tenant
            self._local.checked = set()
            try:
                check_owner_once(tx, DIALECT, scope, self._local.checked)
                yield tx
            finally:
                self._local.open_read = None

    @contextmanager
    @traced_tx("kenning.store.write")
    def _write(
        self,
        scope: Scope | None,
        *,
        claim: bool = False,
        exclusive: bool = False,
    ) -> Iterator[Conn]:
        """One atomic transaction for *scope*: commit on success, roll back on any exception.

        The scope's session must belong to its user (with *claim* a new session becomes the
        user's) and stays locked until the end. The tenant's advisory lock is taken shared,
        or *exclusive* (erasure).
        """
        if self._closed:
            raise StoreError("the store is closed")
        lock = "exclusive" if exclusive else "shared"
        begin = _begin("BEGIN", scope, citus=self._citus, lock=lock)
        with self._transaction(begin, "writing (rolled back)") as tx:
            check_owner(tx, DIALECT, scope, claim=claim, lock=True)
            yield tx

    @contextmanager
    def _transaction(self, begin: list[sql.Composed], what: str) -> Iterator[PgTx]:
        """A transaction on a pooled connection, begun by *begin*: committed when the block
        ends, rolled back on any exception (a driver error becomes kenning's, naming *what*)."""
        with self._connection() as conn:
            try:
                for message in begin:
                    conn.execute(message)
                yield PgTx(conn)
                conn.execute("COMMIT")
            except psycopg.Error as exc:
                self._rollback(conn)
                if connection_lost(exc):
                    self._unreachable = True
                raise translate(exc, what) from exc
            except BaseException:
                self._rollback(conn)
                raise
        self._unreachable = False  # the database answered: back to the pool's full timeout

    def _enter_tenant(self, tx: Tx, tenant: str) -> None:
        self.set_tenant(tx, tenant)
        self.lock_tenant(tx, tenant)

    def _log_removed(
        self, tx: Tx, tenant: str, rowids: Sequence[int], *, op: str = "erase"
    ) -> None:
        if rowids and self._citus:
            rows = [(tenant, item, op) for item in rowids]
            insert_values(tx, "index_log", ("tenant", "item", "op"), rows)
        elif rowids:
            tx.execute(
                "INSERT INTO index_log (tenant, item, op)"
                f" SELECT ?, item, ? FROM unnest(?::bigint[]) AS item{ROUTED}",
                (tenant, op, list(rowids)),
            )

    def _serialize(self, tx: Tx, tenant: str, name: str) -> None:
        # The two-key form of the advisory lock lives apart from the tenants' one-key locks.
        tx.execute("SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?))", (tenant, name))

    @staticmethod
    def lock_tenant(conn: Tx, tenant: str, *, exclusive: bool = False) -> None:
        """Take the tenant's advisory lock for the rest of the transaction."""
        fn = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
        conn.execute(f"SELECT {fn}(?)", (tenant_key(tenant),))

    @contextmanager
    def _connection(self) -> Iterator[RawConn]:
        """A pooled connection. After a lost connection, and until a transaction succeeds
        again, wait at most :data:`OUTAGE_WAIT_S` for one: the pool reconnects by itself."""
        wait = min(OUTAGE_WAIT_S, self._timeout_s) if self._unreachable else self._timeout_s
        try:
            with self._pool.connection(timeout=wait) as conn:
                yield conn
        except PoolTimeout as exc:
            why = " (its last connection was lost)" if self._unreachable else ""
            raise StoreUnavailable(f"no PostgreSQL connection within {wait:g} s{why}") from exc
        except psycopg.OperationalError as exc:
            self._unreachable = True
            raise StoreUnavailable(f"lost the connection to {self.url}: {exc}") from exc

    @staticmethod
    def _rollback(conn: RawConn) -> None:
        # A broken connection cannot roll back; the pool discards it.
        with suppress(psycopg.Error):
            conn.execute("ROLLBACK")

    def _close_connections(self) -> None:
        self._closed = True
        self._pool.close()
