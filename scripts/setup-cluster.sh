#!/usr/bin/env bash
# Provisions what `scripts/cluster.sh` runs a real Temporal cluster with, from registries only,
# idempotently:
#   1. temporal-server and temporal-sql-tool, built from the Go module go.temporal.io/server
#      (cmd/server and cmd/tools/sql) through the Go module proxy: about 6 minutes on 2 cores with a
#      cold Go build cache (up to 20 on a busy machine), once: cached outside the clone in
#      $LOOPWRIGHT_CLUSTER_CACHE (default ~/.cache/loopwright/temporal-cluster/<version>/bin), so
#      later runs skip the build;
#   2. PostgreSQL's initdb, pg_ctl and postgres, from Debian (apt-get install postgresql when missing).
# Prints the paths as KEY=VALUE lines on stdout; progress goes to stderr.
set -euo pipefail

version=${LOOPWRIGHT_TEMPORAL_SERVER_VERSION:-v1.32.2}
# The server's go.mod asks for a newer Go than some machines have; the go command fetches this
# toolchain through the module proxy (GOTOOLCHAIN), like any module.
toolchain=${LOOPWRIGHT_GO_TOOLCHAIN:-go1.27.3}
cache=${LOOPWRIGHT_CLUSTER_CACHE:-$HOME/.cache/loopwright/temporal-cluster}/$version
server="$cache/bin/temporal-server"
sql_tool="$cache/bin/temporal-sql-tool"

log() { echo "setup-cluster: $*" >&2; }

if [[ ! -x $server || ! -x $sql_tool ]]; then
  command -v go >/dev/null 2>&1 || { log "go is required to build the Temporal server (from the Go module proxy)"; exit 1; }
  work="$cache/.build"
  mkdir -p "$work"
  started=$(date +%s)
  log "building temporal-server and temporal-sql-tool $version with $toolchain (about 6 minutes on 2 cores with a cold Go build cache; log: $work/build.log)"
  if ! GOTOOLCHAIN=$toolchain GOBIN="$work/bin" GOFLAGS=-buildvcs=false \
    go install "go.temporal.io/server/cmd/server@$version" "go.temporal.io/server/cmd/tools/sql@$version" >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log" >&2
    exit 1
  fi
  mkdir -p "$cache/bin"
  mv "$work/bin/server" "$server.tmp" && mv "$server.tmp" "$server"
  mv "$work/bin/sql" "$sql_tool.tmp" && mv "$sql_tool.tmp" "$sql_tool"
  log "built in $(($(date +%s) - started)) s"
fi

# PostgreSQL: Debian puts its programs under /usr/lib/postgresql/<major>/bin, not on PATH.
find_pg_bin() {
  local dir
  if [[ -n ${LOOPWRIGHT_PG_BIN:-} ]]; then
    echo "$LOOPWRIGHT_PG_BIN"
    return
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [[ -x $dir/initdb && -x $dir/pg_ctl && -x $dir/postgres ]] && { echo "$dir"; return; }
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v initdb)")"
  fi
}
pg_bin=$(find_pg_bin)
if [[ -z $pg_bin ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing PostgreSQL from Debian (apt-get install postgresql)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2 ||
      { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2; }
    pg_bin=$(find_pg_bin)
  fi
  [[ -n $pg_bin ]] || { log "PostgreSQL (initdb, pg_ctl) is required: apt-get install postgresql"; exit 1; }
fi

echo "TEMPORAL_SERVER_BIN=$server"
echo "TEMPORAL_SQL_TOOL=$sql_tool"
echo "PG_BIN=$pg_bin"
