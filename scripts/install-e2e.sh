#!/usr/bin/env bash
# Installs what the end-to-end checks (scripts/check-e2e.sh) need, only when
# missing: Debian's Chromium (driven by playwright-core; no browser download)
# and the npm packages of e2e/ at the versions e2e/package-lock.json pins.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then
    $SUDO apt-get update
    apt_updated=1
  fi
  $SUDO apt-get install -y "$@"
}

if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium
fi
/usr/bin/chromium --version >/dev/null 2>&1 || { echo "install-e2e: /usr/bin/chromium does not run" >&2; exit 1; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "install-e2e: Node.js $(node --version) is too old: the e2e checks need Node 20 or newer" >&2
  exit 1
fi

# npm ci when node_modules is missing or was installed from another lock file.
lock_sum=$(sha256sum e2e/package-lock.json | cut -d' ' -f1)
stamp=e2e/node_modules/.installed-lock.sha256
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ] \
  || ! e2e/node_modules/.bin/relay-compiler --version >/dev/null 2>&1; then
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
  # relay-compiler ships its binary inside the npm package: check it runs here.
  e2e/node_modules/.bin/relay-compiler --version >/dev/null
  echo "$lock_sum" >"$stamp"
fi
