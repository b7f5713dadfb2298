// Relay: the fragments and queries in e2e/relay/src, with @connection on
// every list, compile with relay-compiler against the schema the gateway
// serves; they stop compiling when a connection loses what Relay needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, getNamedType, isObjectType } from 'graphql';
import { compileRelay, withoutField } from '../lib/relay.mjs';
import { servedSDL } from '../lib/env.mjs';

test('relay-compiler compiles every @connection against the served schema', async () => {
  const sdl = await servedSDL();
  const run = compileRelay(sdl, { keep: true });
  try {
    assert.equal(run.code, 0, run.output);
    for (const name of ['AssetListPaginationQuery', 'TransactionFeedPaginationQuery', 'PartyPageFundingPaymentsPaginationQuery',
      'PartyPageDelegationsPaginationQuery', 'DelegationListPaginationQuery', 'FundingPaymentsPaginationQuery']) {
      assert.ok(run.artifacts.includes(`${name}.graphql.js`), `${name} generated`);
    }
    // Relay recorded each connection for its store: its key, and the
    // directions its pagination query can page in.
    const artifact = (name) => readFileSync(join(run.dir, '__generated__', `${name}.graphql.js`), 'utf8');
    const feed = artifact('TransactionFeed_transactions');
    assert.match(feed, /"name": "__TransactionFeed_transactions_connection"/);
    assert.match(feed, /"direction": "bidirectional"/);
    assert.match(artifact('AssetList_assets'), /"direction": "forward"/);
    assert.match(artifact('PartyPage_delegations'), /"name": "__PartyPage_delegations_connection"/);
    assert.match(artifact('DelegationList_validator'), /"name": "__DelegationList_validator_delegations_connection"/);
  } finally {
    rmSync(run.dir, { recursive: true, force: true });
  }
});

test('every connection type of the schema is used with @connection (losing its pageInfo breaks the build)', async () => {
  const sdl = await servedSDL();
  const schema = buildSchema(sdl);
  const connections = new Set();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (named.name.endsWith('Connection')) connections.add(named.name);
    }
  }
  assert.deepEqual([...connections].sort(), ['AssetConnection', 'DelegationConnection', 'FundingPaymentConnection', 'TransactionConnection']);
  for (const conn of connections) {
    const run = compileRelay(withoutField(sdl, conn, 'pageInfo'));
    assert.notEqual(run.code, 0, `${conn} without pageInfo still compiled`);
    assert.match(run.output, new RegExp(`Expected the field type '${conn}' to expose a 'pageInfo' field`), run.output);
  }
});

test('relay-compiler fails when an edge loses its cursor or PageInfo a field', async () => {
  const sdl = await servedSDL();
  const cases = [
    ['TransactionEdge', 'cursor', /'TransactionConnection' to expose a 'edges \{ cursor \}' field/],
    ['PageInfo', 'endCursor', /to expose a 'pageInfo \{ endCursor \}' field/],
    ['PageInfo', 'hasPreviousPage', /to expose a 'pageInfo \{ hasPreviousPage \}' field/],
  ];
  for (const [type, field, message] of cases) {
    const run = compileRelay(withoutField(sdl, type, field));
    assert.notEqual(run.code, 0, `${type}.${field} removed, still compiled`);
    assert.match(run.output, message);
  }
});
