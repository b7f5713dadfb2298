#!/usr/bin/env bash
# Runs the Dockerfile's build command outside Docker (there is no Docker
# engine here, and CI's clean clone has none: installing one and pulling
# the golang and distroless images would cost minutes and a registry on
# every run) and checks the binary as the image runs it:
#   - it is static (the final stage, distroless/static, has no libc);
#   - run as the Dockerfile's USER (not root), with only the Dockerfile's
#     ENV (no PATH: nothing to find a shell with), it serves and answers
#     GET /healthz with 200.
# LISTEN_ADDR is moved to a free loopback port: 8080 may be taken here.
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

user=$(sed -n 's/^USER \([0-9]*\):\([0-9]*\)$/\1:\2/p' Dockerfile | tail -n1)
if [ -z "$user" ] || [ "${user%%:*}" = 0 ]; then
  echo "Dockerfile: the final stage has no numeric non-root 'USER uid:gid' (got '$user')" >&2
  exit 1
fi
read -r -a env_args <<<"$(sed -n 's/^ENV //p' Dockerfile | tail -n1)"
run_as=()
if [ "$(id -u)" -eq 0 ]; then # as the image's user; else as ours, not root either
  run_as=(setpriv --reuid "${user%%:*}" --regid "${user##*:}" --clear-groups)
fi
chmod 755 "$out"
(cd / && exec env -i "${env_args[@]}" LISTEN_ADDR=127.0.0.1:0 "${run_as[@]}" "$out/gateway") >"$out/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$out"' EXIT
addr=
for _ in $(seq 1 300); do
  addr=$(grep -o '"addr":"127\.0\.0\.1:[0-9]*"' "$out/log" | head -n1 | cut -d'"' -f4 || true)
  [ -n "$addr" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.2
done
if [ -z "$addr" ]; then
  echo "the binary, run as uid:gid $user with ENV ${env_args[*]}, did not serve:" >&2
  cat "$out/log" >&2
  exit 1
fi
# The subshell execs env, which execs setpriv, which execs the gateway.
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
if [ "$uid" = 0 ]; then
  echo "the gateway runs as root" >&2
  exit 1
fi
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/healthz")
if [ "$code" != 200 ]; then
  echo "GET /healthz answered $code, want 200" >&2
  cat "$out/log" >&2
  exit 1
fi
echo "as uid:gid $user (process uid $uid), ENV ${env_args[*]}: GET /healthz 200"
