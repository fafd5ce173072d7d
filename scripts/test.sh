#!/usr/bin/env bash
# `npm test`: set-up, then the static checks (scripts/check.sh: type check and lint) at the lowest
# CPU priority beside Jest in band, instead of before it. The tests wait on servers and processes
# more than they compute, so the checks mostly fill the idle core; `nice` keeps the tests first
# when both want it. The checks' output is held and printed after Jest's, so the two do not
# interleave. Arguments go to Jest (`npm test -- --json --outputFile=…`, or test paths). Exits
# non-zero when either failed, saying which.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit $?
checks_log=$(mktemp)
trap 'rm -f "$checks_log"' EXIT
nice -n 19 bash -c 'started=$SECONDS; bash scripts/check.sh; rc=$?; echo "type check and lint: $( ((rc == 0)) && echo passed || echo FAILED) in $((SECONDS - started)) s"; exit $rc' >"$checks_log" 2>&1 &
checks=$!
status=0
npx jest --runInBand "$@" || { status=$?; echo "test: Jest failed (exit ${status})" >&2; }
checks_status=0
wait "$checks" || checks_status=$?
cat "$checks_log"
if ((checks_status != 0)); then
  echo "test: the type check or lint failed (npm run check)" >&2
  ((status == 0)) && status=$checks_status
fi
exit "$status"
