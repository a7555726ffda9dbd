#!/usr/bin/env bash
# Installs the npm dependencies when node_modules does not match package-lock.json (`npm ci`, then a stamp file holding
# the lock's SHA-256), and says nothing when it does. `npm start` and `npm test` both run it first, so a fresh clone
# needs no `npm install`. Plain bash and node: nothing from node_modules is needed to run it. Which dependencies may run
# install scripts is decided in package.json `allowScripts` (README, "Install scripts"), so npm 11 warns about none.
set -euo pipefail
cd "$(dirname "$0")/.."

# A node_modules that is a symbolic link belongs to another checkout (a git worktree sharing its install): that
# checkout's own runs keep it current; `npm ci` here would empty it under the other checkout's feet.
if [ -L node_modules ]; then
  exit 0
fi

stamp=node_modules/.ci-stamp
lock_sum=$(node -e "process.stdout.write(require('crypto').createHash('sha256').update(require('fs').readFileSync('package-lock.json')).digest('hex'))")
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_sum" ]; then
  exit 0
fi

if [ -d node_modules ]; then why="node_modules does not match package-lock.json"; else why="first run: no node_modules yet"; fi
echo "Installing npm dependencies with npm ci ($why; about a minute, once per lock file change)..."
npm ci --no-audit --no-fund
echo "$lock_sum" > "$stamp"
