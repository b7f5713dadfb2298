#!/usr/bin/env bash
# Smoke run of the benchmark harness (go run ./bench -smoke; see BENCHMARKS.md), so that it
# cannot rot: every benchmark query runs on both paths (direct REST and through the gateway),
# at every page size, concurrency level and dataset size of the full run, and the harness
# fails on any error: a failed request, a GraphQL error the data does not explain, a gateway
# answer that differs from the direct one, or two identical upstream requests in flight at
# once among 100 concurrent identical queries, or a live subscriber that misses, repeats or
# reorders a transaction, or a browsing person's page view that is not served whole (the
# gateway binary alone and as two replicas over a Redis, each step also with the asset cache
# off, the baseline of the ratios), or a cost-section query on which the gateway binary or
# Tailcall (installed from npm by scripts/install-tailcall.sh) returns other rows than the
# direct call. Takes about a minute; timings are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

tailcall="$(scripts/install-tailcall.sh)"
go run ./bench -smoke -baseline-env ASSET_CACHE_SIZE=0 -tailcall-bin "$tailcall" -out "$out/report.md" -json "$out/cells.json"

# The report holds every section and the four queries of the headline.
for want in '## Headline' '## Growth with page size' '## Growth with concurrency' \
  '## Growth with the dataset' '## Coalescing' '## Live transactions' 'a filter each' \
  '| transactions-50 |' '| assets-100 |' '| party-50 |' '| delegations-1000 |' \
  '| transactions-1000 |' '| delegations-10 |' 'concurrency 16' '| 200 |' \
  '## Browse: people on one upstream budget' '| 2 | as configured (defaults) | 4 |' \
  'As configured ÷ baseline (`ASSET_CACHE_SIZE=0`)' 'Most people served with p95 ≤ 1 s' \
  '## Cost in proportion to what is asked' '| every-field-50 |' '| hashes-50 |' '| one-kind-50 |' \
  '| party-page |' '### Throughput, 16 connections' '### CPU per request: each gateway'\''s process alone' \
  '### The data node 20ms away'; do
  if ! grep -qF -- "$want" "$out/report.md"; then
    echo "bench smoke: the report lacks \"$want\":" >&2
    cat "$out/report.md" >&2
    exit 1
  fi
done
echo "bench smoke: ok"
