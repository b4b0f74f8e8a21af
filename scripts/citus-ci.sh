#!/usr/bin/env bash
# Build Citus, start a three-node Citus cluster and prepare it for kenning's tests (Debian 12).
#
# Idempotent, like postgres-ci.sh: each step checks first, so a machine that is already prepared
# passes through in a few seconds. Citus is not packaged by Debian; it is built once from the
# vendored source (../shared/vendor, see its README.md and ../shared/notes/dependencies.md,
# "Citus"), about 13 minutes on two cores. The cluster is a coordinator and two workers, each a
# PostgreSQL 15 cluster of its own on this machine (pg_createcluster), on ports other than 5432.
# Prints the coordinator URL tests use (KENNING_TEST_CITUS_URL) at the end; fails if a node does
# not answer or the workers are not registered.
set -euo pipefail

PG_VERSION=15
COORD_PORT="${KENNING_CITUS_PORT:-5433}"
WORKER_PORTS=("$((COORD_PORT + 1))" "$((COORD_PORT + 2))")
NODES=(citus_coord citus_w1 citus_w2)
PORTS=("$COORD_PORT" "${WORKER_PORTS[@]}")
ROLE=kenning
PASSWORD=kenning
# Databases to prepare: the tests' own (KENNING_CITUS_DATABASES, space-separated) and the default.
DATABASES="${KENNING_CITUS_DATABASES:-kenning_test}"
CITUS_VERSION=13.2.2
PG_CONFIG="/usr/lib/postgresql/${PG_VERSION}/bin/pg_config"
LIB_DIR="/usr/lib/postgresql/${PG_VERSION}/lib"

# shellcheck source=scripts/ci-lib.sh
. "$(dirname "$0")/ci-lib.sh"
say() { echo "citus-ci: $*" >&2; }
die() { say "$*"; exit 1; }

# The vendored source lies in ../shared/vendor next to the repository. A linked git worktree's
# top level is elsewhere, so its main checkout (the parent of the common .git) is tried too.
find_vendor() {
    if [ -n "${KENNING_VENDOR_DIR:-}" ]; then echo "$KENNING_VENDOR_DIR"; return; fi
    local here top common
    here="$(cd "$(dirname "$0")/.." && pwd)"
    top="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || echo "$here")"
    common="$(git -C "$here" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)"
    for candidate in "$top/../shared/vendor" "${common:+$(dirname "$common")/../shared/vendor}"; do
        if [ -n "$candidate" ] && [ -f "$candidate/citus-${CITUS_VERSION}.tar.gz" ]; then
            (cd "$candidate" && pwd); return
        fi
    done
    die "citus-${CITUS_VERSION}.tar.gz not found in ../shared/vendor; set KENNING_VENDOR_DIR"
}


# 0. PostgreSQL 15 and pgvector (postgres-ci.sh installs both; its own cluster is left alone).
if [ ! -f "/usr/share/postgresql/${PG_VERSION}/extension/vector.control" ]; then
    "$(dirname "$0")/postgres-ci.sh" >/dev/null
fi

# 1. Citus, built once from the vendored source, at low priority (the machine is shared).
if [ ! -f "${LIB_DIR}/citus.so" ]; then
    vendor="$(find_vendor)"
    say "building Citus ${CITUS_VERSION} from ${vendor} (about 13 minutes on two cores)"
    apt_install "postgresql-server-dev-${PG_VERSION}" build-essential libcurl4-openssl-dev \
        liblz4-dev libzstd-dev libkrb5-dev
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    tar -xzf "${vendor}/citus-${CITUS_VERSION}.tar.gz" -C "$work"
    src="$work/citus-${CITUS_VERSION}"
    (cd "$src" && patch -s -p1 < "${vendor}/citus-${CITUS_VERSION}-pg15-minor.patch")
    (cd "$src" && ./configure -q PG_CONFIG="$PG_CONFIG" >/dev/null)
    nice -n 19 make -s -C "$src" -j2 >/dev/null
    $SUDO make -s -C "$src" install >/dev/null
    [ -f "${LIB_DIR}/citus.so" ] || die "Citus built but citus.so is not in ${LIB_DIR}"
fi

# 2. Three PostgreSQL clusters with Citus preloaded. Logical WAL lets Citus move shards while
#    writes continue. The coordinator and the workers connect to each other as clients over
#    127.0.0.1, as the querying role: that address is trusted on every node (a test cluster).
for i in 0 1 2; do
    name="${NODES[$i]}"; port="${PORTS[$i]}"
    conf="/etc/postgresql/${PG_VERSION}/${name}"
    if [ ! -d "$conf" ]; then
        say "creating cluster ${PG_VERSION}/${name} on port ${port}"
        $SUDO pg_createcluster "$PG_VERSION" "$name" --port "$port" >/dev/null
    fi
    # Four shards (two per worker) keep the tests' TRUNCATE between tests short; Citus's
    # default is 32. The count applies to tables distributed after it is set.
    settings="$(printf '%s\n' "shared_preload_libraries = 'citus'" "wal_level = logical" \
        "max_replication_slots = 20" "max_wal_senders = 20" "max_connections = 200" \
        "citus.shard_count = 4")"
    if [ "$($SUDO cat "$conf/conf.d/citus.conf" 2>/dev/null)" != "$settings" ]; then
        echo "$settings" | $SUDO tee "$conf/conf.d/citus.conf" >/dev/null
        $SUDO chown postgres:postgres "$conf/conf.d/citus.conf"
        if pg_lsclusters -h | awk -v n="$name" '$2 == n && $4 == "online"' | grep -q .; then
            $SUDO pg_ctlcluster "$PG_VERSION" "$name" reload
        fi
    fi
    if ! $SUDO grep -q '^host all all 127.0.0.1/32 trust' "$conf/pg_hba.conf"; then
        # First match wins in pg_hba.conf: the trust line goes before the packaged ones.
        $SUDO sed -i '0,/^host/s//host all all 127.0.0.1\/32 trust\nhost/' "$conf/pg_hba.conf"
        if pg_lsclusters -h | awk -v n="$name" '$2 == n && $4 == "online"' | grep -q .; then
            $SUDO pg_ctlcluster "$PG_VERSION" "$name" reload
        fi
    fi
    if ! pg_lsclusters -h | awk -v n="$name" '$2 == n && $4 == "online"' | grep -q .; then
        say "starting cluster ${PG_VERSION}/${name}"
        $SUDO pg_ctlcluster "$PG_VERSION" "$name" start
    fi
done
for port in "${PORTS[@]}"; do
    for _ in $(seq 1 30); do
        if as_postgres pg_isready -q -p "$port"; then break; fi
        sleep 0.5
    done
    as_postgres pg_isready -q -p "$port" || die "Citus node on port $port does not answer"
    loaded="$(as_postgres psql -p "$port" -qtAX -c "SHOW shared_preload_libraries")"
    [[ "$loaded" == *citus* ]] || die "node on port $port does not preload citus (restart it)"
done

# 3. Roles on every node (as postgres-ci.sh), then each database with citus and pgvector on
#    every node, and the workers registered in the coordinator's metadata (kept per database).
psql_on() { local port="$1"; shift; as_postgres psql -p "$port" -v ON_ERROR_STOP=1 -qtAX "$@"; }
for port in "${PORTS[@]}"; do
    if [ -z "$(psql_on "$port" -c "SELECT 1 FROM pg_roles WHERE rolname = '${ROLE}'")" ]; then
        psql_on "$port" -c "SET citus.enable_ddl_propagation TO off" \
            -c "CREATE ROLE ${ROLE} LOGIN CREATEROLE PASSWORD '${PASSWORD}'"
    fi
    if [ -z "$(psql_on "$port" -c "SELECT 1 FROM pg_roles WHERE rolname = 'kenning_app'")" ]; then
        psql_on "$port" -c "SET citus.enable_ddl_propagation TO off" \
            -c "CREATE ROLE kenning_app LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD 'kenning_app'" \
            -c "GRANT kenning_app TO ${ROLE}"
    fi
done
for db in $DATABASES; do
    for port in "${PORTS[@]}"; do
        if [ -z "$(psql_on "$port" -c "SELECT 1 FROM pg_database WHERE datname = '${db}'")" ]; then
            psql_on "$port" -c "CREATE DATABASE ${db} OWNER ${ROLE}"
        fi
        # Only where missing: a registered worker refuses DDL that does not come from the
        # coordinator, even a CREATE EXTENSION IF NOT EXISTS that would change nothing.
        for ext in citus vector; do
            if [ -z "$(psql_on "$port" -d "$db" -c "SELECT 1 FROM pg_extension WHERE extname = '${ext}'")" ]; then
                psql_on "$port" -d "$db" -c "SET client_min_messages TO warning" \
                    -c "CREATE EXTENSION ${ext}"
            fi
        done
    done
    if [ -z "$(psql_on "$COORD_PORT" -d "$db" -c "SELECT 1 FROM pg_dist_node WHERE groupid = 0")" ]; then
        psql_on "$COORD_PORT" -d "$db" -c \
            "SELECT citus_set_coordinator_host('127.0.0.1', ${COORD_PORT})" >/dev/null
    fi
    for port in "${WORKER_PORTS[@]}"; do
        if [ -z "$(psql_on "$COORD_PORT" -d "$db" -c \
            "SELECT 1 FROM pg_dist_node WHERE nodeport = ${port} AND isactive")" ]; then
            psql_on "$COORD_PORT" -d "$db" -c "SELECT citus_add_node('127.0.0.1', ${port})" >/dev/null
        fi
    done
    # The coordinator must reach both workers, as the owner role does when it distributes tables.
    active="$(PGPASSWORD="$PASSWORD" psql -h 127.0.0.1 -p "$COORD_PORT" -U "$ROLE" -d "$db" -qtAX -c \
        "SELECT count(*) FROM citus_check_cluster_node_health() WHERE result" 2>/dev/null || echo 0)"
    [ "$active" -ge 9 ] || die "cluster ${db}: node health checks failed (${active}/9 answer)"
done
echo "postgresql://${ROLE}:${PASSWORD}@127.0.0.1:${COORD_PORT}/${DATABASES%% *}"
