#!/usr/bin/env bash
# Takes a screenshot of a session in the Temporal Web UI with headless Chromium (Debian's
# `chromium` package; no browser download), to look at what the UI shows of a session:
#
#   bash scripts/screenshot-ui.sh <workflow-id> [out.png] [ui-base-url]
#
# The UI is a single-page app, so Chromium is given virtual time to run its scripts and load the
# history before the picture is taken. Needs a running server with its UI (`loopwright server start`).
set -euo pipefail
id=${1:?usage: screenshot-ui.sh <workflow-id> [out.png] [ui-base-url]}
out=${2:-tmp/ui-$id.png}
base=${3:-${TEMPORAL_UI_URL:-http://localhost:8233}}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "screenshot-ui: no chromium on PATH; install Debian's package: apt-get install chromium" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1600,1400 \
  --virtual-time-budget=15000 --screenshot="$out" \
  "$base/namespaces/${TEMPORAL_NAMESPACE:-default}/workflows/$id" >/dev/null 2>&1
echo "$out"
