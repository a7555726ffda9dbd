#!/usr/bin/env bash
# Builds the Go tools the marketplace runs against into .tools/bin/ (go install with GOBIN), skipping what is
# already built at the pinned version: the Temporal CLI (dev server + Web UI) and stripe-mock.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="$PWD/.tools/bin"
TEMPORAL_VERSION="v1.5.1"      # newest tag whose go.mod has no replace directive (go install refuses those)
STRIPE_MOCK_VERSION="v0.197.0"

build() { # name module version
  local name=$1 module=$2 version=$3 stamp="$BIN/.$1.version"
  if [ -x "$BIN/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "error: Go is needed to build $name ($module@$version) into .tools/bin/." >&2
    echo "       Install Go 1.22 or newer (https://go.dev/dl/), or place a $name binary at $BIN/$name." >&2
    exit 1
  fi
  echo "Building $name $version into .tools/bin/ (first time only; this takes a few minutes)..."
  mkdir -p "$BIN"
  if ! GOBIN="$BIN" go install "$module@$version"; then
    echo "error: go install $module@$version failed (GOPROXY=$(go env GOPROXY))." >&2
    exit 1
  fi
  echo "$version" > "$stamp"
}

build temporal github.com/temporalio/cli/cmd/temporal "$TEMPORAL_VERSION"
build stripe-mock github.com/stripe/stripe-mock "$STRIPE_MOCK_VERSION"
