#!/usr/bin/env bash
# The commands the container image runs, started here without Docker (this machine builds no images) on a fresh
# PostgreSQL database: the one-shot migration, the standalone Next.js server with EXECUTOR=off, and a worker. Then API
# smoke checks through them (health, readiness, register → verify → login → upload → workflow → run → SUCCESS executed
# by the worker, metrics of both processes) and a check that every log line they wrote is a JSON object.
#
# Needs a finished `next build` (output: "standalone") in .next and PostgreSQL at TEST_PG_URL (as .ci/run sets it).
# Usage: .ci/standalone.sh            (ports: STANDALONE_PORT, default 4610, and STANDALONE_PORT+1 for the worker)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PG_URL=${TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
WEB_PORT=${STANDALONE_PORT:-4610}
WORKER_PORT=$((WEB_PORT + 1))
[ -f .next/standalone/server.js ] || { echo "no .next/standalone/server.js: run next build first (next.config.mjs sets output: standalone)"; exit 1; }

# The image's layout: the standalone server with its static files and public folder, and the bundled worker and
# migration (npm run build:worker). The bundles keep their packages external: here they resolve them from this
# checkout's node_modules, in the image from its production node_modules.
APP=$(mktemp -d /tmp/flowmail-standalone-XXXXXX)
LOGS=$APP/logs
mkdir -p "$LOGS"
cp -r .next/standalone/. "$APP/"
mkdir -p "$APP/.next" && cp -r .next/static "$APP/.next/static"
[ -d public ] && cp -r public "$APP/public"
npm run -s build:worker

DB=flowmail_standalone_$$
BASE=${PG_URL%/*}
DB_URL="$BASE/$DB"
psql "$PG_URL" -qc "create database $DB" >/dev/null
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$PG_URL" -qc "drop database if exists $DB with (force)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

COMMON=(NODE_ENV=production DATABASE_URL="$DB_URL" AUTH_SECRET="standalone-check-secret-0123456789abcdef" MAILBOX_ENABLED=true
  METRICS_TOKEN=standalone-metrics-token LOG_FORMAT=json LOG_LEVEL=info APP_URL="http://127.0.0.1:$WEB_PORT" NEXT_TELEMETRY_DISABLED=1)

echo "-- migrate (node --conditions=react-server dist/db/migrate-cli.mjs)"
env "${COMMON[@]}" node --conditions=react-server dist/db/migrate-cli.mjs | tee "$LOGS/migrate.log"

echo "-- web (node server.js, EXECUTOR=off) on :$WEB_PORT"
(cd "$APP" && exec env "${COMMON[@]}" EXECUTOR=off PORT="$WEB_PORT" HOSTNAME=127.0.0.1 node server.js >"$LOGS/web.out" 2>"$LOGS/web.err") &
PIDS+=($!)
echo "-- worker (node --conditions=react-server dist/worker/index.mjs) probes on :$WORKER_PORT"
env "${COMMON[@]}" WORKER_PORT="$WORKER_PORT" node --conditions=react-server dist/worker/index.mjs >"$LOGS/worker.out" 2>"$LOGS/worker.err" &
PIDS+=($!)

rc=0
node .ci/standalone-smoke.mjs "http://127.0.0.1:$WEB_PORT" "http://127.0.0.1:$WORKER_PORT" standalone-metrics-token || rc=$?

# Stop both the way a container runtime does (SIGTERM), so their shutdown lines are checked too.
for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
PIDS=()
node .ci/check-json-logs.mjs "$LOGS/migrate.log" "$LOGS/web.out" "$LOGS/web.err" "$LOGS/worker.out" "$LOGS/worker.err" || rc=$?
if [ "$rc" != 0 ]; then
  for f in "$LOGS"/*; do echo "== $f"; tail -n 40 "$f"; done
else
  rm -rf "$APP"
fi
exit "$rc"
