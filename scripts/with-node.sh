#!/usr/bin/env bash
# Runs a command on the project's Node (scripts/node-runtime.sh: the system's when it is 22 or newer, else the pinned
# LTS in .tools/node/). The package.json scripts that start Node go through it: `npm run admin -- …` and the like run
# on the same runtime as `npm start` and `npm test`.
set -euo pipefail
source "$(dirname "$0")/node-runtime.sh"
exec "$@"
