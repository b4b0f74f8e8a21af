"""The PostgreSQL schema against Citus's rules for tables distributed by tenant.

Citus cannot run here, so this reads the migrations and checks the rules a tenant-distributed
schema must follow (the queries are checked in tests/integration/test_citus_queries.py;
docs/scaling.md says what this does and does not verify):

- every tenant table has the distribution column ``tenant``;
- every primary key, unique constraint and unique index includes it;
- every foreign key includes it on both sides (between colocated tenant tables only).
"""

from __future__ import annotations

import re

from kenning.store.postgres.schema import MIGRATIONS, TENANT_TABLES

REFERENCE_TABLES = ("embedding_model", "kenning_migrations")

_DDL = "\n".join(script for _, script in MIGRATIONS)
_IDENT = r"[a-z_][a-z0-9_]*"


def _create_tables() -> dict[str, str]:
    """CREATE TABLE bodies by table name."""
    out = {}
    for match in re.finditer(rf"CREATE TABLE ({_IDENT}) \((.*?)\n        \);", _DDL, re.S):
        out[match.group(1)] = match.group(2)
    return out


def test_every_tenant_table_has_the_distribution_column() -> None:
    tables = _create_tables()
    assert set(TENANT_TABLES) | set(REFERENCE_TABLES) - {"kenning_migrations"} <= set(tables)
    for name in TENANT_TABLES:
        assert re.search(r"^\s*tenant text (NOT NULL|PRIMARY KEY)", tables[name], re.M), name
    assert set(tables) <= set(TENANT_TABLES) | set(REFERENCE_TABLES)


def test_every_key_and_unique_index_includes_tenant() -> None:
    tables = _create_tables()
    for name in TENANT_TABLES:
        body = tables[name]
        keys = re.findall(r"(?:PRIMARY KEY|UNIQUE) \(([^)]*)\)", body)
        inline = re.findall(rf"^\s*({_IDENT}) [^,\n]*PRIMARY KEY", body, re.M)
        assert keys or inline, f"{name} has no primary key"
        for columns in keys + inline:
            assert "tenant" in [c.strip() for c in columns.split(",")], (name, columns)
    for match in re.finditer(rf"CREATE UNIQUE INDEX {_IDENT} ON ({_IDENT}) \(([^)]*)\)", _DDL):
        assert match.group(2).split(",")[0].strip() == "tenant", match.group(0)


def test_foreign_keys_join_on_tenant_between_tenant_tables() -> None:
    fks = re.findall(rf"FOREIGN KEY \(([^)]*)\) REFERENCES ({_IDENT}) \(([^)]*)\)", _DDL)
    assert fks, "the schema has foreign keys to check"
    for local, table, remote in fks:
        assert table in TENANT_TABLES
        assert local.split(",")[0].strip() == "tenant" == remote.split(",")[0].strip()
    assert "REFERENCES embedding_model" not in _DDL
