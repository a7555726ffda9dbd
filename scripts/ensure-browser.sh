#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests when it is missing (playwright-core drives it; it never downloads
# a browser of its own).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "error: the browser tests need Chromium at /usr/bin/chromium (Debian: apt-get install chromium)." >&2
  exit 1
fi
echo "Installing Chromium (Debian package) for the browser tests..."
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
