// Schema stability gate (run by scripts/check-e2e.sh).
//
// 1. The SDL the gateway serves must equal the committed snapshot
//    schema/schema.graphql: a schema change shows in the commit that makes it.
// 2. GraphQL Inspector diffs the base commit's snapshot against the served
//    schema and reports every change by criticality. Breaking changes fail
//    the gate unless the same change also edits schema/CHANGELOG.md (the
//    entry that says what broke and what clients do about it): that is how
//    a breaking change is made on purpose.
//
// The base commit: $SCHEMA_BASE (or --base REV) when given; else HEAD when
// schema/ has uncommitted changes (a developer's work tree); else HEAD~1
// (CI on a clean clone, where HEAD is the change under test). With no such
// commit (first commit, shallow clone) or no snapshot in it, step 2 says so
// and passes.
//
// Usage: node schema-gate.mjs --served FILE [--repo DIR] [--base REV]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSchema } from 'graphql';
import { diff, CriticalityLevel } from '@graphql-inspector/core';

export const SNAPSHOT = 'schema/schema.graphql';
export const CHANGELOG = 'schema/CHANGELOG.md';
export const UPDATE_COMMAND = 'go test . -run TestSchemaSnapshot -update';

function firstDifference(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return { line: i + 1, served: x[i] ?? '(end of file)', committed: y[i] ?? '(end of file)' };
}

/**
 * The gate on already-read inputs. base and baseChangelog are null when
 * there is no base commit. Returns { ok, lines, changes }.
 */
export async function gate({ served, snapshot, base, baseLabel = 'base', baseChangelog, changelog }) {
  const lines = [];
  if (served !== snapshot) {
    const d = firstDifference(served, snapshot);
    lines.push(
      `FAIL: the schema the gateway serves differs from ${SNAPSHOT} (line ${d.line}):`,
      `  served:    ${JSON.stringify(d.served)}`,
      `  committed: ${JSON.stringify(d.committed)}`,
      `Run \`${UPDATE_COMMAND}\` and commit ${SNAPSHOT}.`,
    );
    return { ok: false, lines, changes: [] };
  }
  lines.push(`ok: the served schema equals ${SNAPSHOT}`);
  if (base == null) {
    lines.push(`no base snapshot (${baseLabel}): no breaking-change report`);
    return { ok: true, lines, changes: [] };
  }
  const changes = await diff(buildSchema(base), buildSchema(served));
  const by = (level) => changes.filter((c) => c.criticality.level === level);
  const breaking = by(CriticalityLevel.Breaking);
  const dangerous = by(CriticalityLevel.Dangerous);
  const safe = by(CriticalityLevel.NonBreaking);
  lines.push(`schema changes since ${baseLabel}: ${breaking.length} breaking, ${dangerous.length} dangerous, ${safe.length} non-breaking`);
  for (const [label, list] of [['BREAKING', breaking], ['DANGEROUS', dangerous], ['non-breaking', safe]]) {
    for (const c of list) lines.push(`  ${label}: ${c.message}${c.criticality.reason ? ` (${c.criticality.reason})` : ''}`);
  }
  if (breaking.length === 0) return { ok: true, lines, changes };
  if ((baseChangelog ?? '') !== (changelog ?? '')) {
    lines.push(`ok: breaking changes made on purpose: ${CHANGELOG} changed in the same change`);
    return { ok: true, lines, changes };
  }
  lines.push(
    `FAIL: ${breaking.length} breaking change(s) since ${baseLabel} and ${CHANGELOG} did not change.`,
    `Clients break on these. If that is intended, add an entry to ${CHANGELOG} saying what changed and`,
    'what clients should do, in the same commit; otherwise keep the old fields (deprecate them with @deprecated).',
  );
  return { ok: false, lines, changes };
}

function git(repo, args) {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryGit(repo, args) {
  try {
    return git(repo, args);
  } catch {
    return null;
  }
}

/** Picks the base commit and reads its snapshot and changelog. */
export function readBase(repo, rev) {
  if (tryGit(repo, ['rev-parse', '--git-dir']) === null) return { base: null, label: 'not a git work tree' };
  let why = 'given';
  if (!rev) {
    const dirty = tryGit(repo, ['status', '--porcelain', '--', 'schema/']);
    if (dirty) {
      rev = 'HEAD';
      why = 'schema/ has uncommitted changes';
    } else {
      rev = 'HEAD~1';
      why = 'the commit before the change under test';
    }
  }
  const commit = tryGit(repo, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
  if (!commit) return { base: null, label: `${rev} does not exist (first commit or shallow clone)` };
  const label = `${rev} (${commit.trim().slice(0, 12)}, ${why})`;
  const base = tryGit(repo, ['show', `${commit.trim()}:${SNAPSHOT}`]);
  if (base === null) return { base: null, label: `${label} has no ${SNAPSHOT}` };
  return { base, label, baseChangelog: tryGit(repo, ['show', `${commit.trim()}:${CHANGELOG}`]) ?? '' };
}

export async function main(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  if (!args.served) {
    console.error('usage: node schema-gate.mjs --served FILE [--repo DIR] [--base REV]');
    return 2;
  }
  const repo = resolve(args.repo ?? join(fileURLToPath(import.meta.url), '..', '..'));
  const changelogPath = join(repo, CHANGELOG);
  const { base, label, baseChangelog } = readBase(repo, args.base ?? process.env.SCHEMA_BASE);
  const result = await gate({
    served: readFileSync(args.served, 'utf8'),
    snapshot: existsSync(join(repo, SNAPSHOT)) ? readFileSync(join(repo, SNAPSHOT), 'utf8') : '',
    base,
    baseLabel: label,
    baseChangelog,
    changelog: existsSync(changelogPath) ? readFileSync(changelogPath, 'utf8') : '',
  });
  console.log(result.lines.join('\n'));
  return result.ok ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
