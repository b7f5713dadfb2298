#!/usr/bin/env bash
# Lists the gateway's files whose code runs for one request of a query: the
# blocks a coverage profile counts once more after one more request. Used for
# the count in docs/architecture.md ("Execution, one path").
#
#   scripts/count-field-files.sh                       # the default query below
#   scripts/count-field-files.sh '{ assets(first: 1) { edges { node { id } } } }'
#
# It builds the gateway with coverage of every package of this module, runs it
# twice over its embedded sample service (upstream cache off, no new blocks),
# sends the query 3 times to the first run and 4 times to the second, and
# prints the files (the embedded sample service's own excepted) where the second
# run counted more.
set -euo pipefail
cd "$(dirname "$0")/.."
default='{ transactions(first: 1) { edges { node { hash } } } }'
query="${1:-$default}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -cover -covermode=count -coverpkg=./... -o "$work/gateway" .
body="$(printf '%s' "$query" | python3 -c 'import json,sys; print(json.dumps({"query": sys.stdin.read()}))')"

run() { # run DIR N: the gateway, N requests, then its coverage in DIR
  local dir="$1" n="$2" port
  mkdir -p "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  GOCOVERDIR="$dir" LISTEN_ADDR="127.0.0.1:$port" UPSTREAM_CACHE_BYTES=0 SAMPLE_BLOCK_INTERVAL=0 \
    METRICS=true LOG_LEVEL=error "$work/gateway" &
  local pid=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  for _ in $(seq "$n"); do
    curl -fs -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$port/graphql" >/dev/null
  done
  kill -TERM "$pid"
  wait "$pid" || true
  go tool covdata textfmt -i="$dir" -o "$dir.txt"
}
run "$work/a" 3
run "$work/b" 4
python3 - "$work/a.txt" "$work/b.txt" <<'PY'
import sys, collections
def counts(path):
    c = collections.Counter()
    for line in open(path):
        if line.startswith("mode:"):
            continue
        block, _, n = line.rpartition(" ")
        c[block.rsplit(" ", 1)[0]] += int(n)
    return c
a, b = counts(sys.argv[1]), counts(sys.argv[2])
files = sorted({k.split(":")[0] for k in b if b[k] > a.get(k, 0)})
files = [f.split("/gateway/", 1)[-1] if "/gateway/" in f else f.split("/")[-1] for f in files]
files = [f for f in files if not f.startswith("sampleservice/")]
for f in files:
    print(f)
print(len(files), "files", file=sys.stderr)
PY
