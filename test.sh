#!/usr/bin/env bash
# Runs the whole test suite, installing first whatever the tests need and
# the machine lacks. Usage: ./test.sh [extra go test flags]
set -euo pipefail
cd "$(dirname "$0")"

log() { printf '==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

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
# Every package whose own code shares state between goroutines, whole:
#   upstream               coalesced flights, retries, the breaker, the local
#                          budget and its fair share, the concurrency slots,
#                          commands decoded once however many read them;
#   transport              the transports' own goroutines (WebSocket sessions,
#                          SSE reservations and streams, pumps), over an
#                          executor without upstream; graph's e2e tests run
#                          them under load;
#   graph                  the direct executor's goroutines and @defer payloads,
#                          the document cache, the per-request memo, the
#                          loaders and page batches, the cursor keys' pools, the asset
#                          cache (allocation counts are not checked under -race:
#                          race_on_test.go / race_off_test.go, as sync.Pool drops
#                          items at random there);
#   . (root)               the client-key middleware and fair-share wiring,
#                          APQ, replicas over Redis, shutdown, metrics labels;
#   live                   the feed: its poller, fan-out, catch-up, linger
#                          and drain;
#   redisstate, telemetry  the Redis budget and the live feed's lease; the
#                          metrics' label set, subscriptions' counters;
#   sampleservice          its response cache, rate limiter and faults, under
#                          the concurrent load the other packages' tests send;
#   bench                  the harness's load phases and the cost section's
#                          processes (its tests run each section briefly);
#   internal/ctxwait, internal/httpcompress (its writer pools; skipped if the
#                          package is gone), internal/testutil (LockedBuffer).
# Measured here (go test -race, each package alone, 2 busy cores): bench 29 s,
# upstream 35 s, graph 164 s, root 143 s, sampleservice 35 s, redisstate 8 s,
# telemetry 8 s, httpcompress 7 s, ctxwait 3 s, testutil 2 s (with the
# other helpers' load: upstream 217 s, graph 234 s, root 166 s). Skipped under
# -race, as they are long and add no concurrency of their own: graph's page
# walks over the whole sample dataset (TestWalkFundingPaymentsDespiteBroken-
# Cursors 77 s, TestWalkTransactions 18 s, TestWalkDelegations 7 s: one query
# after another), the root's TestSoakFairShare (61 s of load; the fair share
# under -race is TestLightClientIsServedWhileAHeavyOneDrainsTheBudget) and
# TestGeneratedCheck (42 s of shell and go generate), and sampleservice's
# dataset generation (TestGeneratedDataset, TestCoverageCommandAndChange-
# Kinds, TestGenerateScale, TestGenerateDeterministic: 24 s of one
# goroutine; the generator starts none). Not run under -race:
# playground (static assets),
# internal/jsonscan and internal/swar (pure functions), internal/gqlgen and
# internal/fastexec (generators), graph/model (generated types). This keeps
# the race pass to about 3 minutes on a quiet machine (see the phase times
# that log prints).
log "go test -race"
race_pkgs=()
for p in ./upstream ./transport ./graph . ./live ./redisstate ./telemetry ./sampleservice ./bench \
  ./internal/ctxwait ./internal/httpcompress ./internal/testutil; do
  [ -d "$p" ] && race_pkgs+=("$p/")
done
go test -race -count=1 -timeout 15m \
  -skip '^(TestWalkFundingPaymentsDespiteBrokenCursors|TestWalkTransactions|TestWalkDelegations|TestSoakFairShare|TestLiveFairnessUnderAResumeFlood|TestReadyzFailsWhileTheLiveFeedIsStuck|TestGeneratedCheck|TestGeneratedDataset|TestCoverageCommandAndChangeKinds|TestGenerateScale|TestGenerateDeterministic)$' \
  "$@" "${race_pkgs[@]}"

# --- Checks beyond go test (browser, real clients, schema, benchmark smoke) ---
# scripts/check-*.sh run in name order; each fails the suite on failure.
for script in scripts/check-*.sh; do
  [ -e "$script" ] || continue
  [ "$script" = scripts/check-generated.sh ] && continue # ran first
  log "$script"
  bash "$script"
done
