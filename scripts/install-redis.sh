#!/usr/bin/env bash
# Installs redis-server (Debian package) when it is missing: the tests of
# the shared state (APQ, asset cache, rate budget across replicas) start
# their own redis-server on a loopback port.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends redis-server
# The package starts a system service on port 6379 where an init system
# runs; the tests never use it (each starts its own server), so leave it be.
command -v redis-server >/dev/null 2>&1 || { echo "redis-server is still missing after apt-get install" >&2; exit 1; }
