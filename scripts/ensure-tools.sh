#!/usr/bin/env bash
# Builds the Go tools the marketplace runs against into .tools/bin/ (go install with GOBIN), skipping what is
# already built at the pinned version: the Temporal CLI (dev server + Web UI), stripe-mock, and Toxiproxy (the fault
# tests put it between a process and Redis, Postgres, an upstream or Stripe; `--runtime`, as `npm start` runs it,
# leaves it out). A build is announced
# before it starts (what, that it happens once, roughly how long) and then reports every 30 s that it is still going,
# because `go install` itself prints nothing for minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="$PWD/.tools/bin"
TEMPORAL_VERSION="v1.5.1"      # newest tag whose go.mod has no replace directive (go install refuses those)
STRIPE_MOCK_VERSION="v0.197.0"
TOXIPROXY_VERSION="v2.5.0"       # the newest tag the Go module proxy lists for github.com/Shopify/toxiproxy/v2
PROGRESS_SECONDS="${ENSURE_TOOLS_PROGRESS_SECONDS:-30}"

build() { # name module version what how-long [binary go install writes, when not named like the tool]
  local name=$1 module=$2 version=$3 what=$4 how_long=$5 produced=${6:-$1} stamp="$BIN/.$1.version"
  if [ -x "$BIN/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "error: Go is needed to build $name ($module@$version) into .tools/bin/." >&2
    echo "       Install Go 1.22 or newer (https://go.dev/dl/), or place a $name binary at $BIN/$name." >&2
    exit 1
  fi
  echo "Building $name $version ($what) into .tools/bin/ with go install: once only, later starts skip it;" \
    "usually $how_long (downloads its Go modules, then compiles)..."
  mkdir -p "$BIN"
  local started=$SECONDS status=0
  # The heartbeat runs in the background and go install in the foreground, so Ctrl-C reaches go install as usual.
  # (sleep's output goes nowhere, so a sleep outliving the killed loop does not hold our stdout open.)
  (
    while sleep "$PROGRESS_SECONDS" >/dev/null 2>&1; do
      echo "  ... still building $name ($((SECONDS - started)) s so far)"
    done
  ) &
  HEARTBEAT=$!
  trap 'kill "$HEARTBEAT" 2>/dev/null || true' EXIT
  GOBIN="$BIN" go install "$module@$version" || status=$?
  kill "$HEARTBEAT" 2>/dev/null || true
  trap - EXIT
  if [ "$status" != 0 ]; then
    echo "error: go install $module@$version failed (GOPROXY=$(go env GOPROXY))." >&2
    exit 1
  fi
  if [ "$produced" != "$name" ]; then mv -f "$BIN/$produced" "$BIN/$name"; fi
  echo "Built $name in $((SECONDS - started)) s."
  echo "$version" > "$stamp"
}

build temporal github.com/temporalio/cli/cmd/temporal "$TEMPORAL_VERSION" \
  "the Temporal dev server and Web UI for the embedded mode" "3 to 10 minutes"
build stripe-mock github.com/stripe/stripe-mock "$STRIPE_MOCK_VERSION" \
  "a local Stripe API for billing without a Stripe account" "about a minute"
# `--runtime` (npm start): only what the marketplace itself runs; Toxiproxy is for the tests alone (issue 22).
if [ "${1:-}" != "--runtime" ]; then
  build toxiproxy-server github.com/Shopify/toxiproxy/v2/cmd/server "$TOXIPROXY_VERSION" \
    "a TCP proxy that injects faults for the fault-matrix tests" "about a minute" server
fi
