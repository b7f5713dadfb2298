// The schema stability gate: fails when the served schema differs from the
// committed snapshot, reports breaking changes against the base commit and
// fails on them unless schema/CHANGELOG.md changed too; works from git as
// CI runs it (clean clone, first commit, uncommitted work).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, print, visit } from 'graphql';
import { gate, main, SNAPSHOT, CHANGELOG } from '../schema-gate.mjs';
import { withoutField } from '../lib/relay.mjs';
import { committedSDL } from '../lib/env.mjs';

const sdl = committedSDL();

function withExtraField(s, typeName, fieldName) {
  return print(visit(parse(s), {
    ObjectTypeDefinition(node) {
      if (node.name.value !== typeName) return undefined;
      const extra = parse(`type X { "An added field." ${fieldName}: String }`).definitions[0].fields[0];
      return { ...node, fields: [...node.fields, extra] };
    },
  }));
}

function withExtraEnumValue(s, enumName, value) {
  return print(visit(parse(s), {
    EnumTypeDefinition(node) {
      if (node.name.value !== enumName) return undefined;
      const extra = parse(`enum X { ${value} }`).definitions[0].values[0];
      return { ...node, values: [...node.values, extra] };
    },
  }));
}

const text = (r) => r.lines.join('\n');

test('the served schema must equal the committed snapshot', async () => {
  const ok = await gate({ served: sdl, snapshot: sdl, base: null });
  assert.equal(ok.ok, true, text(ok));
  const changed = sdl.replace('A page of assets.', 'A page of coins.');
  const r = await gate({ served: changed, snapshot: sdl, base: null });
  assert.equal(r.ok, false);
  assert.match(text(r), /differs from schema\/schema\.graphql/);
  assert.match(text(r), /A page of coins\./);
  assert.match(text(r), /go test \. -run TestSchemaSnapshot -update/);
});

test('a connection that loses its pageInfo is a breaking change: it fails unless the changelog says so', async () => {
  const served = withoutField(sdl, 'AssetConnection', 'pageInfo');
  const r = await gate({ served, snapshot: served, base: sdl, baseChangelog: '# log\n', changelog: '# log\n' });
  assert.equal(r.ok, false, text(r));
  assert.match(text(r), /BREAKING: Field 'pageInfo' .*removed from object type 'AssetConnection'/);
  assert.match(text(r), /1 breaking change\(s\)/);
  assert.match(text(r), /schema\/CHANGELOG\.md did not change/);

  const acknowledged = await gate({ served, snapshot: served, base: sdl, baseChangelog: '# log\n', changelog: '# log\n\n## Removed AssetConnection.pageInfo\n' });
  assert.equal(acknowledged.ok, true, text(acknowledged));
  assert.match(text(acknowledged), /BREAKING: Field 'pageInfo'/, 'still reported');
  assert.match(text(acknowledged), /made on purpose/);
});

test('additions pass and are reported; a new enum value is reported as dangerous', async () => {
  const added = withExtraField(sdl, 'Asset', 'website');
  const r = await gate({ served: added, snapshot: added, base: sdl, baseChangelog: '', changelog: '' });
  assert.equal(r.ok, true, text(r));
  assert.match(text(r), /0 breaking, 0 dangerous, [1-9]\d* non-breaking/);
  assert.match(text(r), /non-breaking: Field 'website' was added to object type 'Asset'/);

  const enumAdded = withExtraEnumValue(sdl, 'AccountType', 'ACCOUNT_TYPE_NEW');
  const d = await gate({ served: enumAdded, snapshot: enumAdded, base: sdl, baseChangelog: '', changelog: '' });
  assert.equal(d.ok, true, text(d));
  assert.match(text(d), /DANGEROUS: Enum value 'ACCOUNT_TYPE_NEW' was added to enum 'AccountType'/);

  const same = await gate({ served: sdl, snapshot: sdl, base: sdl, baseChangelog: '', changelog: '' });
  assert.match(text(same), /0 breaking, 0 dangerous, 0 non-breaking/);
});

// --- From git, as the check script runs it ------------------------------------

function repoWith(t) {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-schema-gate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'schema'));
  const git = (...args) => execFileSync('git', ['-C', dir, '-c', 'user.name=e2e', '-c', 'user.email=e2e@localhost', '-c', 'commit.gpgsign=false', ...args], { stdio: 'pipe' });
  git('init', '-q');
  const write = (snapshot, changelog) => {
    writeFileSync(join(dir, SNAPSHOT), snapshot);
    writeFileSync(join(dir, CHANGELOG), changelog);
  };
  const commit = (msg) => {
    git('add', '-A');
    git('commit', '-q', '-m', msg);
  };
  return { dir, write, commit };
}

async function runGate(dir, served, extra = []) {
  const file = join(dir, 'served.graphql');
  writeFileSync(file, served);
  const logs = [];
  const orig = console.log;
  console.log = (...a) => logs.push(a.join(' '));
  try {
    const code = await main(['--served', file, '--repo', dir, ...extra]);
    return { code, out: logs.join('\n') };
  } finally {
    console.log = orig;
  }
}

test('from git: first commit passes, a breaking commit fails without a changelog entry and passes with one', async (t) => {
  const repo = repoWith(t);
  const broken = withoutField(sdl, 'DelegationConnection', 'pageInfo');

  repo.write(sdl, '# Schema changelog\n');
  repo.commit('first');
  let r = await runGate(repo.dir, sdl);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /HEAD~1 does not exist/);

  // A developer's tree: schema/ changed but not committed: base is HEAD.
  repo.write(broken, '# Schema changelog\n');
  r = await runGate(repo.dir, broken);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /HEAD \(.*uncommitted/);
  assert.match(r.out, /BREAKING: Field 'pageInfo'.*'DelegationConnection'/);

  // CI on a clean clone of the breaking commit: base is HEAD~1.
  repo.commit('break it');
  r = await runGate(repo.dir, broken);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /HEAD~1 \(/);

  // The same break with a changelog entry in the same commit passes.
  repo.write(sdl, '# Schema changelog\n');
  repo.commit('restore');
  repo.write(broken, '# Schema changelog\n\n## DelegationConnection.pageInfo removed\n');
  repo.commit('break it on purpose');
  r = await runGate(repo.dir, broken);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /made on purpose/);

  // SCHEMA_BASE picks another base: against "first", still a breaking change, and the changelog changed.
  r = await runGate(repo.dir, broken, ['--base', 'HEAD~3']);
  assert.equal(r.code, 0, r.out);

  // A served schema that differs from the commit fails whatever the history.
  r = await runGate(repo.dir, sdl);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /differs from schema\/schema\.graphql/);
});

test('outside a git work tree the gate still compares with the snapshot', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-schema-nogit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'schema'));
  writeFileSync(join(dir, SNAPSHOT), sdl);
  const r = await runGate(dir, sdl);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /not a git work tree/);
});
