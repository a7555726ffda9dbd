#!/usr/bin/env bash
# `npm test`: every set-up step from a fresh clone, then lint, typecheck and the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "Node runtime"
# Node 22+ (the system's when it has one, else the pinned LTS in .tools/node/, first on PATH from here on).
source scripts/node-runtime.sh
echo "Node $SVC_NODE_CHOSEN"

step "dependencies"
bash scripts/ensure-deps.sh

step "Go tools (.tools/bin)"
bash scripts/ensure-tools.sh

step "Postgres and Redis"
bash scripts/ensure-services.sh

step "Chromium (browser tests)"
bash scripts/ensure-browser.sh

step "MCP conformance runner (.tools/conformance)"
bash scripts/ensure-conformance.sh

step "lint"
npm run lint

step "typecheck"
npm run typecheck

step "tests (unit, then integration; the integration setup migrates a template database)"
npx vitest run "$@"
