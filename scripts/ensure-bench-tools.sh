#!/usr/bin/env bash
# Installs the system tools the gateway benchmark (npm run bench:gateway) runs: nginx (the upstream and the reference
# reverse proxy) and wrk (the capacity load generator). Idempotent: does nothing when both are already installed.
# Non-interactive, so it works on a fresh Debian/Ubuntu machine or in CI.
set -euo pipefail

have() { # command; nginx lives in /usr/sbin, which is not on a normal user's PATH
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/local/sbin/$1" ]
}

wanted=()
have nginx || wanted+=(nginx-light)
have wrk || wanted+=(wrk)
[ ${#wanted[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: the benchmark needs ${wanted[*]}, and this script only knows apt-get." >&2
  echo "       Install nginx and wrk with your package manager, then run it again." >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "error: installing ${wanted[*]} needs root (or sudo)." >&2
    exit 1
  fi
  SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

candidate() { # package -> prints the candidate version, empty when the package lists do not know it
  apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2 }'
}

# Refresh the package lists only when they cannot serve what we need (never fetched, or the package is unknown).
need_update=0
for pkg in "${wanted[@]}"; do
  [ -n "$(candidate "$pkg")" ] || need_update=1
done
if [ "$need_update" -eq 1 ]; then
  "${SUDO[@]}" apt-get update -qq
fi

# nginx-light is Debian 12's minimal nginx; newer releases dropped the flavours, so fall back to plain nginx.
if [[ " ${wanted[*]} " == *" nginx-light "* ]] && [ -z "$(candidate nginx-light)" ]; then
  wanted=("${wanted[@]/nginx-light/nginx}")
fi

# The benchmark runs its own nginx on loopback ports; keep the package's service from starting on port 80.
# Docker images already ship a policy-rc.d that does this; otherwise add a temporary one.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
  "${SUDO[@]}" chmod 755 "$policy"
  trap '"${SUDO[@]}" rm -f "$policy"' EXIT
fi

echo "Installing ${wanted[*]} for the gateway benchmark..."
install() { "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null; }
if ! install; then
  # Stale package lists point at versions the mirror no longer has: refresh once and retry.
  "${SUDO[@]}" apt-get update -qq
  install
fi

for tool in nginx wrk; do
  if ! have "$tool"; then
    echo "error: $tool is still missing after installing ${wanted[*]}." >&2
    exit 1
  fi
done
