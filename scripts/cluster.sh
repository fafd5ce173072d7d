#!/usr/bin/env bash
# A real Temporal cluster for tests and trials: `scripts/cluster.sh start | stop | status | destroy`.
# `start` builds and caches the server the first time (scripts/setup-cluster.sh, about 6 minutes),
# then runs PostgreSQL and one process per service (scripts/cluster.ts), prepares the namespace
# and prints TEMPORAL_ADDRESS=... and TEMPORAL_NAMESPACE=... on stdout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec node_modules/.bin/ts-node --transpile-only scripts/cluster.ts "$@"
