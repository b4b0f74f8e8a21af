#!/usr/bin/env bash
# Install, start and prepare PostgreSQL 15 with pgvector for kenning's tests (Debian 12).
#
# Idempotent: each step checks first, so a machine that is already prepared passes through
# in about a second. pgvector is not packaged for Debian 12; its Debian trixie source package
# builds against PostgreSQL 15 in seconds (see ../shared/notes/dependencies.md). Only the
# Debian archive is reached. Prints the URL tests use (KENNING_TEST_PG_URL) at the end.
set -euo pipefail

PG_VERSION=15
PG_PORT="${KENNING_PG_PORT:-5432}"
ROLE=kenning
PASSWORD=kenning
DATABASE=kenning_test
PG_CONFIG="/usr/lib/postgresql/${PG_VERSION}/bin/pg_config"
EXTENSION_DIR="/usr/share/postgresql/${PG_VERSION}/extension"

# shellcheck source=scripts/ci-lib.sh
. "$(dirname "$0")/ci-lib.sh"
say() { echo "postgres-ci: $*" >&2; }


# 1. PostgreSQL 15 server and client.
if [ ! -x "/usr/lib/postgresql/${PG_VERSION}/bin/postgres" ]; then
    say "installing postgresql-${PG_VERSION}"
    apt_install "postgresql-${PG_VERSION}" "postgresql-client-${PG_VERSION}"
fi

# 2. pgvector, built from Debian trixie's source package.
if [ ! -f "${EXTENSION_DIR}/vector.control" ]; then
    say "building pgvector from Debian trixie's source package"
    apt_install "postgresql-server-dev-${PG_VERSION}" build-essential dpkg-dev ca-certificates
    work="$(mktemp -d)"
    chmod 755 "$work"  # apt downloads as the unprivileged _apt user
    trap 'rm -rf "$work"' EXIT
    # The mirror the machine already uses, in a private apt configuration: the system's own
    # sources and package lists stay as they are.
    mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
    mirror="${mirror:-http://deb.debian.org/debian}"
    mkdir -p "$work/lists/partial" "$work/src"
    echo "deb-src ${mirror} trixie main" > "$work/sources.list"
    apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o "Dir::Etc::sourceparts=-"
              -o "Dir::State::Lists=$work/lists" -o "APT::Get::List-Cleanup=0")
    $SUDO apt-get "${apt_opts[@]}" update -qq
    (cd "$work/src" && $SUDO apt-get "${apt_opts[@]}" source --download-only -qq pgvector)
    (cd "$work/src" && $SUDO dpkg-source --no-check -x ./pgvector_*.dsc build >/dev/null)
    $SUDO make -s -C "$work/src/build" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" >/dev/null
    $SUDO make -s -C "$work/src/build" PG_CONFIG="$PG_CONFIG" install >/dev/null
fi

# 3. The cluster, running.
if ! pg_lsclusters -h | awk -v v="$PG_VERSION" '$1 == v && $2 == "main"' | grep -q .; then
    say "creating cluster ${PG_VERSION}/main"
    $SUDO pg_createcluster "$PG_VERSION" main --port "$PG_PORT" >/dev/null
fi
if ! pg_lsclusters -h | awk -v v="$PG_VERSION" '$1 == v && $2 == "main" && $4 == "online"' | grep -q .; then
    say "starting cluster ${PG_VERSION}/main"
    $SUDO pg_ctlcluster "$PG_VERSION" main start
fi
for _ in $(seq 1 30); do
    if as_postgres pg_isready -q -p "$PG_PORT"; then break; fi
    sleep 0.5
done
as_postgres pg_isready -q -p "$PG_PORT" || { say "PostgreSQL does not answer on port $PG_PORT"; exit 1; }

# 4. The roles and databases tests and benchmarks use; the extension is created by the
#    superuser (pgvector is not a trusted extension), the schema by kenning itself as the
#    database owner.
psql_admin() { as_postgres psql -p "$PG_PORT" -v ON_ERROR_STOP=1 -qtAX "$@"; }
if [ -z "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '${ROLE}'")" ]; then
    psql_admin -c "CREATE ROLE ${ROLE} LOGIN CREATEROLE PASSWORD '${PASSWORD}'"
fi
# The application role, as a deployment would log in with it: no ownership, no BYPASSRLS.
# (kenning creates it NOLOGIN when it is missing; tests also connect as it directly.)
if [ -z "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = 'kenning_app'")" ]; then
    psql_admin -c "CREATE ROLE kenning_app LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD 'kenning_app'"
    psql_admin -c "GRANT kenning_app TO ${ROLE}"
fi
for db in "$DATABASE" kenning; do
    if [ -z "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '${db}'")" ]; then
        psql_admin -c "CREATE DATABASE ${db} OWNER ${ROLE}"
    fi
    psql_admin -d "$db" -c "SET client_min_messages TO warning" -c "CREATE EXTENSION IF NOT EXISTS vector"
done
echo "postgresql://${ROLE}:${PASSWORD}@127.0.0.1:${PG_PORT}/${DATABASE}"
