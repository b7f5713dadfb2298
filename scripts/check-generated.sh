#!/usr/bin/env bash
# Checks that the generated code is current: runs 'go generate ./...' and
# fails, naming each file, when that changed, created or deleted any file.
#
# There is no list of generated files to keep up to date: the check
# fingerprints every file of the tree (git's tracked and untracked files,
# minus what .gitignore excludes) before and after, so a generated file
# added later (or a resolver stub gqlgen rewrites) is covered the day it
# appears. A tree with uncommitted edits is fine: only what the generator
# changes counts. The regenerated files are left in place, to be committed.
#
# Usage: scripts/check-generated.sh   (from anywhere; checks this repository)
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C

# fingerprint prints "<sha256>  <path>" for every file of the tree, sorted.
fingerprint() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard
  else # an exported tree without .git
    find . -type f -not -path './.git/*' -not -path '*/node_modules/*' -printf '%P\0'
  fi | sort -z | while IFS= read -r -d '' f; do
    # A tracked file deleted from the work tree is listed without content.
    if [ -f "$f" ]; then sha256sum -- "$f"; else echo "missing  $f"; fi
  done
}

# listed PATH < LIST prints PATH's fingerprint in LIST (nothing when absent).
listed() {
  awk -v p="$1" 'substr($0, index($0, "  ") + 2) == p { print $1 }'
}

before=$(fingerprint)
go generate ./...
after=$(fingerprint)

if [ "$before" != "$after" ]; then
  echo "generated code is stale: 'go generate ./...' changed these files:" >&2
  # The paths whose line differs, each classified by the two lists.
  comm -3 <(sort <<<"$before") <(sort <<<"$after") |
    sed 's/^\t//; s/^[^ ]*  //' | sort -u |
    while IFS= read -r path; do
      if [ ! -e "$path" ]; then
        echo "  deleted:  $path"
      elif [ "$(listed "$path" <<<"$before")" = missing ]; then
        echo "  missing:  $path (go generate creates it)"
      elif [ -z "$(listed "$path" <<<"$before")" ]; then
        echo "  created:  $path"
      else
        echo "  changed:  $path"
      fi
    done >&2
  echo "commit the regenerated files (they are in the work tree now)" >&2
  exit 1
fi
echo "generated code is current"
