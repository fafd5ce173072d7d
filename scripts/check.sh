#!/usr/bin/env bash
# The static checks of `npm test`: the type check and the lint (ESLint, then Prettier) run side by
# side, one per core, instead of one after the other; both always finish, so one run shows every
# problem. Exits non-zero when either failed, saying which.
set -uo pipefail
cd "$(dirname "$0")/.."
npx tsc -p tsconfig.json --noEmit &
typecheck=$!
npm run --silent lint &
lint=$!
status=0
wait "$typecheck" || { echo "check: the type check failed (npm run typecheck)" >&2; status=1; }
wait "$lint" || { echo "check: lint failed (npm run lint; npm run format rewrites what Prettier flags)" >&2; status=1; }
exit "$status"
