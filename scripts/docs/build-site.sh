#!/usr/bin/env bash
# Builds the documentation site (`npm run docs:build`): the client API reference from the code's TSDoc
# (TypeDoc, into docs/reference/api/; its warnings are errors), the HTTP API's page from serve/API.md and the
# examples' pages from their READMEs (scripts/docs/site-pages.ts), then the site itself (VitePress, into docs/.vitepress/dist/), which fails on a
# dead link. A warning of the site build fails it too, so the site CI publishes has none.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

npx --no-install typedoc --logLevel Warn
npx --no-install ts-node --transpile-only scripts/docs/site-pages.ts
log=$(mktemp)
trap 'rm -f "$log"' EXIT
npx --no-install vitepress build docs 2>&1 | tee "$log"
if grep -nE '\(!\)|\bwarn(ing)?\b' -i "$log"; then
  echo "docs:build: the site was built with the warnings above; fix them" >&2
  exit 1
fi
