#!/usr/bin/env bash
# `npm start`: everything a fresh clone needs before the first start (npm dependencies, the Go tools), then the whole
# marketplace in one process on embedded defaults. Plain bash, because on a fresh clone nothing in node_modules exists
# yet; `exec` leaves one Node process, which receives Ctrl-C and SIGTERM itself.
set -euo pipefail
cd "$(dirname "$0")/.."

# Node 22+: the system's when it has one, else the pinned LTS the script installs into .tools/node/ (says so once).
source scripts/node-runtime.sh
bash scripts/ensure-deps.sh
bash scripts/ensure-tools.sh --runtime
# No process-wide V8 heap flags: the gateway's thread sets its own young generation (gateway/thread.ts), and a flag
# such as --max-semi-space-size would override it in every thread (V8's flags win over a worker's resourceLimits).
exec node --import tsx scripts/start.ts all "$@"
