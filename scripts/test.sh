#!/usr/bin/env bash
# `npm test`: every set-up step from a fresh clone, then lint, typecheck and the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "dependencies"
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f node_modules/.ci-stamp ] || [ "$(cat node_modules/.ci-stamp)" != "$lock_sum" ]; then
  npm ci --no-audit --no-fund
  echo "$lock_sum" > node_modules/.ci-stamp
else
  echo "node_modules matches package-lock.json"
fi

step "Go tools (.tools/bin)"
bash scripts/ensure-tools.sh

step "Postgres and Redis"
bash scripts/ensure-services.sh

step "Chromium (browser tests)"
bash scripts/ensure-browser.sh

step "lint"
npm run lint

step "typecheck"
npm run typecheck

step "tests (unit, then integration; the integration setup migrates a template database)"
npx vitest run "$@"
