#!/usr/bin/env bash
# The typed-client example, end to end: starts the production build (`next build` first) on a port with a fresh
# embedded database, registers an account through the API and the mailbox, creates an API key, generates the client's
# types from the running server's /api/openapi.json (openapi-typescript), type-checks examples/lifecycle.ts against
# them (tsc) and runs it (openapi-fetch with the key): upload a CSV, create a workflow, run it, poll to SUCCESS.
# Usage: .ci/example.sh [port]   (default 4510)
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-${EXAMPLE_PORT:-4510}}
base="http://localhost:${port}"
[ -d .next ] || { echo "no production build: run \`npm run build\` first"; exit 1; }

data_dir=$(mktemp -d)
log=$(mktemp)
DATA_DIR="$data_dir" AUTH_SECRET="example-secret-0123456789abcdef0123456789abcdef" MAILBOX_ENABLED=true \
  APP_URL="$base" npm start -- -p "$port" >"$log" 2>&1 &
server_pid=$!
# `npm start` runs Next.js's server as a child of its own, which outlives npm: whatever listens on the port goes too.
cleanup() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  bash .ci/free-port.sh "$port"
  rm -rf "$data_dir" "$log"
}
trap cleanup EXIT

for _ in $(seq 1 120); do
  curl -fsS "$base/api/health" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "the server stopped:"; cat "$log"; exit 1; }
  sleep 0.5
done
curl -fsS "$base/api/health" >/dev/null || { echo "the server did not start:"; tail -n 40 "$log"; exit 1; }

echo "-- account and API key"
key=$(node .ci/example-key.mjs "$base")
echo "created ${key:0:12}…"

echo "-- types from $base/api/openapi.json"
FLOWMAIL_URL="$base" npm run -s example:types

echo "-- tsc examples/lifecycle.ts"
npm run -s example:check

echo "-- run the example"
FLOWMAIL_URL="$base" FLOWMAIL_API_KEY="$key" npm run -s example
