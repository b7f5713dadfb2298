#!/usr/bin/env bash
# Runs the Dockerfile's build command outside Docker (there may be no
# Docker engine here) and checks that it gives a static binary that runs:
# what the image's final stage needs, having no libc.
set -euo pipefail
cd "$(dirname "$0")/.."

cmd=$(sed -n 's/^RUN \(CGO_ENABLED=0 .*go build .*\) -o \/out\/gateway \.$/\1/p' Dockerfile)
if [ -z "$cmd" ]; then
  echo "Dockerfile: no 'RUN CGO_ENABLED=0 … go build … -o /out/gateway .' line" >&2
  exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "+ $cmd -o $out/gateway ."
eval "$cmd -o \"$out/gateway\" ."  # as the image build's /bin/sh runs it
if ldd "$out/gateway" >/dev/null 2>&1; then
  echo "the image's binary is dynamically linked: $(ldd "$out/gateway" | head -3)" >&2
  exit 1
fi
"$out/gateway" -help >/dev/null 2>&1
echo "static binary: $(du -h "$out/gateway" | cut -f1)"
