#!/usr/bin/env bash
# End-to-end checks with real clients, against the gateway binary over the
# sample data service (both on loopback ports):
#   The sample service runs with -control (POST /_sample/blocks appends a
#   block now, for the live-feed tests) and makes no blocks by itself.
#   1. schema: the served SDL equals schema/schema.graphql, and GraphQL
#      Inspector's breaking changes since the base commit are on purpose
#      (e2e/schema-gate.mjs; schema/README.md);
#   2. relay-compiler compiles e2e/relay/src against the served schema;
#   3. node --test e2e/test: the playground in Chromium, Apollo Client,
#      Relay failure cases, the examples/ query set, graphql-http's
#      GraphQL-over-HTTP server audit (every audit must be ok), trusted
#      documents (gateways of the test's own from the binary built here,
#      E2E_GATEWAY_BIN, over the same sample service).
# Exits non-zero when any step fails. Screenshots: e2e/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf -- '--> %s\n' "$*"; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

bash scripts/install-e2e.sh

log "building the gateway"
go build -o "$work/gateway" .

# wait_for_log FILE REGEX: prints the first match of REGEX in FILE (waits up to 60 s).
wait_for_log() {
  local file=$1 regex=$2 i match
  for i in $(seq 1 600); do
    match=$(grep -oE "$regex" "$file" 2>/dev/null | head -n1 || true)
    if [ -n "$match" ]; then
      printf '%s\n' "$match"
      return 0
    fi
    sleep 0.1
  done
  echo "timed out waiting for /$regex/ in $file:" >&2
  cat "$file" >&2
  return 1
}

http_ok() {
  node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"
}

log "starting the sample data service"
"$work/gateway" sample-upstream -listen 127.0.0.1:0 -control >"$work/sample.log" 2>&1 &
pids+=($!)
upstream=$(wait_for_log "$work/sample.log" 'data node: http://127\.0\.0\.1:[0-9]+' | sed 's/^data node: //')

log "starting the gateway over $upstream"
"$work/gateway" -listen 127.0.0.1:0 -upstream "$upstream" -explorer "$upstream/rest" >"$work/gateway.log" 2>&1 &
pids+=($!)
gateway="http://$(wait_for_log "$work/gateway.log" 'msg="gateway serving" addr=127\.0\.0\.1:[0-9]+' | sed 's/^.*addr=//')"
for i in $(seq 1 300); do
  http_ok "$gateway/readyz" && break
  if [ "$i" -eq 300 ]; then
    echo "the gateway at $gateway never became ready" >&2
    cat "$work/gateway.log" >&2
    exit 1
  fi
  sleep 0.2
done
log "gateway ready at $gateway"

node -e 'fetch(process.argv[1]).then(async (r) => { if (!r.ok) process.exit(1); process.stdout.write(await r.text()); })' \
  "$gateway/schema.graphql" >"$work/served.graphql"

failed=()
passed=0
step() {
  local name=$1
  shift
  log "$name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed+=("$name")
  fi
}

step "schema: served SDL vs schema/schema.graphql, breaking changes" \
  node e2e/schema-gate.mjs --served "$work/served.graphql"
step "relay-compiler against the served schema" \
  node e2e/relay-compile.mjs "$work/served.graphql"
step "node --test e2e/test (playground in Chromium, Apollo, Relay, examples, graphql-http audit, trusted documents)" \
  env E2E_GATEWAY_URL="$gateway" E2E_UPSTREAM_URL="$upstream" E2E_GATEWAY_BIN="$work/gateway" \
  node --test --test-concurrency=1 --test-timeout=300000 e2e/test/

if [ "${#failed[@]}" -gt 0 ]; then
  echo "--- gateway log (last 40 lines)" >&2
  tail -n 40 "$work/gateway.log" >&2
  echo "--- sample service log (last 20 lines)" >&2
  tail -n 20 "$work/sample.log" >&2
  for name in "${failed[@]}"; do
    echo "FAILED: $name" >&2
  done
fi
log "screenshots in e2e/artifacts/"
echo "e2e: $passed passed, ${#failed[@]} failed"
[ "${#failed[@]}" -eq 0 ]
