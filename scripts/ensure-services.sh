#!/usr/bin/env bash
# Starts the local Postgres and Redis the test suite uses when they are not already running.
set -euo pipefail

PGHOST=127.0.0.1 PGPORT=5432
if ! pg_isready -q -h "$PGHOST" -p "$PGPORT" 2>/dev/null; then
  echo "Starting PostgreSQL..."
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
fi
for _ in $(seq 1 60); do pg_isready -q -h "$PGHOST" -p "$PGPORT" && break; sleep 0.5; done
pg_isready -q -h "$PGHOST" -p "$PGPORT" || { echo "error: PostgreSQL did not become ready on $PGHOST:$PGPORT" >&2; exit 1; }

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "Starting Redis..."
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no
fi
for _ in $(seq 1 60); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || { echo "error: Redis did not become ready on 127.0.0.1:6379" >&2; exit 1; }
