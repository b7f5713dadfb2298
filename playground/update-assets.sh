#!/usr/bin/env bash
# update-assets.sh — refresh the vendored GraphiQL browser build in assets/.
#
# Not run by the build: the files it writes are committed, and the Go package
# embeds them with //go:embed. Run it by hand (it needs node + npm and access
# to the npm registry), then review the diff, update the versions table in
# assets/README.md and run `go test ./playground/`.
#
#   ./playground/update-assets.sh                       # pinned versions below
#   GRAPHIQL_VERSION=3.9.0 GRAPHQL_WS_VERSION=6.4.2 ./playground/update-assets.sh
#
# Only a GraphiQL version that still ships the UMD browser build
# (graphiql/graphiql.min.js + graphiql.min.css, GraphiQL <= 3.x) works here;
# GraphiQL 4+/5 dropped it in favour of ES modules that need a bundler.
# Likewise graphql-ws (the WebSocket client playground.js uses for
# subscriptions) must ship umd/graphql-ws.min.js, which defines the global
# graphqlWs (5.x and 6.x do).
set -euo pipefail

GRAPHIQL_VERSION="${GRAPHIQL_VERSION:-3.9.0}"
REACT_VERSION="${REACT_VERSION:-18.3.1}"
GRAPHQL_WS_VERSION="${GRAPHQL_WS_VERSION:-6.4.2}"
# graphql-js is bundled inside graphiql.min.js; it is installed only to satisfy
# GraphiQL's peer dependency and to collect its licence.
GRAPHQL_VERSION="${GRAPHQL_VERSION:-16}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dst="$here/assets"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cd "$tmp"
npm init -y >/dev/null
npm install --no-audit --no-fund --ignore-scripts --save-exact \
  "graphiql@$GRAPHIQL_VERSION" "react@$REACT_VERSION" "react-dom@$REACT_VERSION" \
  "graphql@$GRAPHQL_VERSION" "graphql-ws@$GRAPHQL_WS_VERSION" >/dev/null

nm="$tmp/node_modules"
for f in "$nm/graphiql/graphiql.min.js" "$nm/graphiql/graphiql.min.css" \
         "$nm/react/umd/react.production.min.js" "$nm/react-dom/umd/react-dom.production.min.js" \
         "$nm/graphql-ws/umd/graphql-ws.min.js"; do
  [ -f "$f" ] || { echo "missing $f: this version has no UMD browser build" >&2; exit 1; }
done

# Minified builds only. The trailing sourceMappingURL comment is dropped: the
# .map files are not vendored, and devtools would otherwise request them.
strip_map() { sed -e '/^\/[/*][#@] sourceMappingURL=/d' "$1" > "$2"; }
strip_map "$nm/graphiql/graphiql.min.js"                  "$dst/graphiql.min.js"
strip_map "$nm/graphiql/graphiql.min.css"                 "$dst/graphiql.min.css"
strip_map "$nm/react/umd/react.production.min.js"         "$dst/react.production.min.js"
strip_map "$nm/react-dom/umd/react-dom.production.min.js" "$dst/react-dom.production.min.js"
# graphql-ws's UMD build has no dependencies (graphql is a peer dependency
# it only needs for types and server helpers, not in the browser client).
strip_map "$nm/graphql-ws/umd/graphql-ws.min.js"          "$dst/graphql-ws.min.js"

cp "$nm/graphiql/LICENSE"  "$dst/LICENSE.graphiql"
cp "$nm/react/LICENSE"     "$dst/LICENSE.react"
cp "$nm/react-dom/LICENSE" "$dst/LICENSE.react-dom"
cp "$nm/graphql-ws/LICENSE.md" "$dst/LICENSE.graphql-ws"

# graphiql.min.js bundles its whole dependency tree (graphql-js, CodeMirror 5,
# markdown-it, Radix UI, ...); collect their licences into one file.
node - "$nm" "$dst/THIRD-PARTY-LICENSES.graphiql" <<'JS'
const fs = require('fs'), path = require('path');
const [nm, out] = process.argv.slice(2);
const seen = new Map();
function pkgDir(name, from) {
  for (let d = from; ; d = path.dirname(d)) {
    const p = path.join(d, 'node_modules', name);
    if (fs.existsSync(path.join(p, 'package.json'))) return p;
    if (d === path.dirname(d)) return null;
  }
}
function walk(dir) {
  const pj = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const key = pj.name + '@' + pj.version;
  if (seen.has(key)) return;
  seen.set(key, { pj, dir });
  const deps = { ...(pj.dependencies || {}), ...(pj.peerDependencies || {}) };
  for (const name of Object.keys(deps)) {
    if (name === 'react' || name === 'react-dom') continue; // external, vendored separately
    const d = pkgDir(name, dir);
    if (d) walk(d);
  }
}
walk(path.join(nm, 'graphiql'));
// Group packages whose licence text is identical once copyright lines are set
// aside (most are MIT): each group lists its packages with their copyright
// notices, followed by the shared licence text once.
const groups = new Map();
for (const key of [...seen.keys()].sort()) {
  if (key.startsWith('graphiql@')) continue; // LICENSE.graphiql
  const { pj, dir } = seen.get(key);
  const lf = fs.readdirSync(dir).find(f => /^(licen[cs]e|copying)(\.|$)/i.test(f));
  const raw = lf ? fs.readFileSync(path.join(dir, lf), 'utf8').replace(/\r\n/g, '\n').trim() : '';
  const lines = raw.split('\n');
  const copyright = lines.filter(l => /copyright\s*(\(c\)|©|\d)/i.test(l)).map(l => l.trim());
  const body = lines.filter(l => !/copyright\s*(\(c\)|©|\d)/i.test(l)).join('\n')
    .replace(/\n{3,}/g, '\n\n').trim() ||
    '(no licence file in the package; package.json declares: ' + (pj.license || 'nothing') + ')';
  const id = (pj.license || '?') + '\0' + body;
  if (!groups.has(id)) groups.set(id, { license: pj.license || '?', body, pkgs: [] });
  groups.get(id).pkgs.push({ key, copyright });
}
let text = 'Licences of the packages in the dependency tree of graphiql, which\n' +
  'graphiql.min.js bundles (React and ReactDOM are loaded separately; see\n' +
  'LICENSE.react and LICENSE.react-dom). Generated by update-assets.sh.\n' +
  'Packages with the same licence text share one copy of it, after the list\n' +
  'of those packages and their copyright notices.\n';
for (const g of groups.values()) {
  text += '\n' + '='.repeat(78) + '\n' + g.license + '\n' + '='.repeat(78) + '\n\n';
  for (const p of g.pkgs) {
    text += p.key + (p.copyright.length ? '\n' + p.copyright.map(c => '    ' + c).join('\n') : '') + '\n';
  }
  text += '\n' + '-'.repeat(78) + '\n\n' + g.body + '\n';
}
fs.writeFileSync(out, text);
JS

echo "vendored into $dst:"
for p in graphiql react react-dom graphql graphql-ws; do
  printf '  %-10s %s\n' "$p" "$(node -p "require('$nm/$p/package.json').version")"
done
echo "Update the versions table in assets/README.md, then run: go test ./playground/"
