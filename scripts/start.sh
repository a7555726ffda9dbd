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
# A 64 MB young generation (V8's semi-space; the default is 16 MB): the marketplace's short-lived per-request objects
# die young instead of being promoted, so old-generation collections, whose pauses showed as event-loop stalls over
# 20 ms under load, come less often (issue 32; bench/gateway/allinone.ts starts the all-in-one with the same flags).
exec node --max-semi-space-size=64 --import tsx scripts/start.ts all "$@"
