#!/usr/bin/env bash
# Runs the whole test suite, installing first whatever the tests need and
# the machine lacks. Usage: ./test.sh [extra go test flags]
set -euo pipefail
cd "$(dirname "$0")"

log() { printf '==> %s\n' "$*"; }

# --- Generated code must be current -----------------------------------------
# Every file 'go generate ./...' writes, with no list to keep: the script
# fingerprints the whole tree before and after (TestGeneratedCheck proves it
# fails on a stale or missing generated file).
log "scripts/check-generated.sh (go generate ./... changes nothing)"
bash scripts/check-generated.sh

# --- Static checks -----------------------------------------------------------
log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
log "go vet"
go vet ./...

# --- What the tests need ----------------------------------------------------
# Each script installs (only when missing) what one group of tests needs:
# scripts/install-*.sh are run in name order.
for script in scripts/install-*.sh; do
  [ -e "$script" ] || continue
  log "$script"
  bash "$script"
done

# --- Tests -------------------------------------------------------------------
log "go test"
go test -count=1 -timeout 20m "$@" ./...

# --- The race detector on hand-written concurrency ----------------------------
# The packages whose own code shares state between goroutines (the rate
# budget and its fair share, the Redis budget, the metrics' label set),
# whole; and the tests that drive the cursor keys' pools and the fair
# share through a whole gateway.
log "go test -race"
go test -race -count=1 -timeout 10m "$@" ./upstream/ ./redisstate/ ./telemetry/
go test -race -count=1 -timeout 10m -run 'TestCursorMACConcurrent|TestForgedCursorsCannotOpenTheBreaker|TestLightClientIsServedWhileAHeavyOneDrainsTheBudget|TestOperationLabelsRecoverFromJunkNames' "$@" ./graph/ .

# --- Checks beyond go test (browser, real clients, schema, benchmark smoke) ---
# scripts/check-*.sh run in name order; each fails the suite on failure.
for script in scripts/check-*.sh; do
  [ -e "$script" ] || continue
  [ "$script" = scripts/check-generated.sh ] && continue # ran first
  log "$script"
  bash "$script"
done
