#!/usr/bin/env bash
# The long fuzz runs: the sandbox fuzz (test/security/sandbox-fuzz.test.ts) and the bundle fuzz
# (test/unit/fuzz/bundle-fuzz.test.ts), each over three seeds of LOOPWRIGHT_FUZZ_CASES cases
# (default 1,500; CI runs one shorter seed of each as part of `npm test`). Prints one line of
# figures per sandbox run and exits non-zero when any run found anything.
set -uo pipefail
cd "$(dirname "$0")/.."
cases="${LOOPWRIGHT_FUZZ_CASES:-1500}"
seeds="${LOOPWRIGHT_FUZZ_SEEDS:-1 2 3}"
failed=0
for seed in $seeds; do
  log="$(mktemp)"
  LOOPWRIGHT_FUZZ_SEED="$seed" LOOPWRIGHT_FUZZ_CASES="$cases" npx jest --runInBand test/security/sandbox-fuzz.test.ts test/unit/fuzz/bundle-fuzz.test.ts >"$log" 2>&1
  code=$?
  grep -E '^sandbox-fuzz seed=' "$log" || echo "sandbox-fuzz seed=$seed: no figures (see below)"
  echo "seed $seed: $(grep -E '^Tests:' "$log" | tail -1) (exit $code)"
  if [ "$code" -ne 0 ]; then
    failed=1
    sed -n '/●/,$p' "$log" | head -80
  fi
  rm -f "$log"
done
exit "$failed"
