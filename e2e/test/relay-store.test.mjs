// One public key, three objects: a node operator's master key is a Party's
// id, a ValidatorNode's id and the id of the AnnounceNode command that
// announced the node. Relay's store (relay-runtime, fed by real responses
// of the gateway) keeps them as three records only with the getDataID the
// README recommends (type and id); Relay's default (id alone) folds them
// into one record and a page's data is overwritten by another's. Apollo
// Client's cache, set up as e2e/lib/apollo.mjs and examples/README.md say,
// keeps them apart too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import relayRuntime from 'relay-runtime';
import { gql as apolloGql } from '@apollo/client/core';
import { compileRelay, makeRelayEnvironment, relayArtifact, typedDataID } from '../lib/relay.mjs';
import { makeClient } from '../lib/apollo.mjs';
import { gatewayURL, gql, servedSDL } from '../lib/env.mjs';

const { createOperationDescriptor, fetchQuery } = relayRuntime;

// What a party page, a validator page and a transaction page select, and
// one query holding all three (a response with the key three times).
const PARTY = `party(id: $key) {
      id
      delegations(first: 5) { edges { node { nodeId epochSeq amount } } }
      transactions(first: 5) { edges { node { hash type } } }
    }`;
const VALIDATOR = `validatorNode(id: $key) {
      id
      delegations(first: 5) { edges { node { nodeId epochSeq amount party { id } } } }
    }`;
const ANNOUNCEMENT = `transaction(hash: $hash) {
      hash
      block
      command {
        __typename
        ... on AnnounceNode { id name country infoUrl netPubKey node { id } }
      }
    }`;
const RELAY_DOCUMENTS = `
export const party = graphql\`query StoreKeysPartyQuery($key: ID!) { ${PARTY} }\`;
export const validator = graphql\`query StoreKeysValidatorQuery($key: ID!) { ${VALIDATOR} }\`;
export const announcement = graphql\`query StoreKeysAnnouncementQuery($hash: String!) { ${ANNOUNCEMENT} }\`;
export const all = graphql\`query StoreKeysAllQuery($key: ID!, $hash: String!) { ${PARTY} ${VALIDATOR} ${ANNOUNCEMENT} }\`;
`;

let run;
let key;
let hash;
let want; // each object as the gateway answers it on its own
before(async () => {
  const sdl = await servedSDL();
  run = compileRelay(sdl, { keep: true, sources: { 'StoreKeys.js': RELAY_DOCUMENTS } });
  assert.equal(run.code, 0, run.output);

  // A node announcement of the sample data whose node has delegations (so
  // the ValidatorNode's list differs from the Party's, which is empty).
  const { transactions } = await gql(`{ transactions(types: [REGISTER_NEW_NODE], first: 50) {
    edges { node { hash command { ... on AnnounceNode { id node { delegations(first: 1) { edges { node { amount } } } } } } } }
  } }`);
  const found = transactions.edges.map((e) => e.node).find((n) => n.command.node.delegations.edges.length > 0);
  assert.ok(found, 'the sample data has an AnnounceNode whose node has delegations');
  key = found.command.id;
  hash = found.hash;
  want = await gql(`query ($key: ID!, $hash: String!) { ${PARTY} ${VALIDATOR} ${ANNOUNCEMENT} }`, { key, hash });
  assert.equal(want.party.id, key);
  assert.equal(want.validatorNode.id, key);
  assert.equal(want.transaction.command.id, key);
  assert.equal(want.transaction.command.__typename, 'AnnounceNode');
  assert.ok(want.validatorNode.delegations.edges.length > 0, 'the node has delegations');
  assert.notDeepEqual(want.party.delegations, want.validatorNode.delegations, 'the party\'s and the node\'s delegations differ');
});
after(() => run && rmSync(run.dir, { recursive: true, force: true }));

/** Runs a compiled query through relay-runtime, retains it, returns its operation and the store's snapshot of it. */
async function relayQuery(environment, name, variables) {
  const request = await relayArtifact(run, name);
  await fetchQuery(environment, request, variables).toPromise();
  const operation = createOperationDescriptor(request, variables);
  environment.retain(operation);
  return operation;
}
const read = (environment, operation) => {
  const snap = environment.lookup(operation.fragment);
  assert.equal(snap.isMissingData, false, `${operation.request.node.params.name}: the store has every field`);
  return snap.data;
};
/** The store's records as plain objects, by data id. */
const records = (environment) => environment.getStore().getSource().toJSON();

/**
 * Relay's development build reports id collisions with console.error
 * (RelayResponseNormalizer's warnings): collected while fn runs.
 */
async function relayWarnings(fn) {
  const orig = console.error;
  const seen = [];
  console.error = (...args) => seen.push(args.map(String).join(' '));
  try {
    await fn();
  } finally {
    console.error = orig;
  }
  return seen;
}

test('Relay store, getDataID by type and id: Party, ValidatorNode and AnnounceNode are three records, each intact', async () => {
  const { environment, requests } = makeRelayEnvironment(gatewayURL(), { getDataID: typedDataID });
  let party, validator, announcement, all;
  const warnings = await relayWarnings(async () => {
    // Pages visited one after the other, then one response holding the key three times.
    party = await relayQuery(environment, 'StoreKeysPartyQuery', { key });
    validator = await relayQuery(environment, 'StoreKeysValidatorQuery', { key });
    announcement = await relayQuery(environment, 'StoreKeysAnnouncementQuery', { hash });
    all = await relayQuery(environment, 'StoreKeysAllQuery', { key, hash });
  });
  assert.deepEqual(warnings, [], 'Relay reports no id collision');
  assert.deepEqual(requests.map((r) => r.name), ['StoreKeysPartyQuery', 'StoreKeysValidatorQuery', 'StoreKeysAnnouncementQuery', 'StoreKeysAllQuery']);

  const src = records(environment);
  const ids = [`Party:${key}`, `ValidatorNode:${key}`, `AnnounceNode:${key}`];
  for (const id of ids) assert.ok(src[id], `record ${id} in the store`);
  assert.deepEqual(ids.map((id) => src[id].__typename), ['Party', 'ValidatorNode', 'AnnounceNode']);
  assert.deepEqual(ids.map((id) => src[id].id), [key, key, key], 'each record keeps the key as its id field');
  assert.equal(src[key], undefined, 'no record under the bare key');
  // The announcement's node is the ValidatorNode record, not the command itself.
  assert.deepEqual(src[`AnnounceNode:${key}`].node, { __ref: `ValidatorNode:${key}` });
  assert.equal(src[`AnnounceNode:${key}`].name, want.transaction.command.name);

  // Every page reads back from the store exactly what the gateway answered.
  assert.deepEqual(read(environment, party), { party: want.party });
  assert.deepEqual(read(environment, validator), { validatorNode: want.validatorNode });
  assert.deepEqual(read(environment, announcement), { transaction: want.transaction });
  assert.deepEqual(read(environment, all), want);
});

test('Relay store, default getDataID (id alone): the three objects fold into one record and pages overwrite each other', async () => {
  const { environment } = makeRelayEnvironment(gatewayURL());
  let party, validator, all;
  const warnings = await relayWarnings(async () => {
    party = await relayQuery(environment, 'StoreKeysPartyQuery', { key });
    validator = await relayQuery(environment, 'StoreKeysValidatorQuery', { key });
    await relayQuery(environment, 'StoreKeysAnnouncementQuery', { hash });
    all = await relayQuery(environment, 'StoreKeysAllQuery', { key, hash });
  });
  // Relay itself says the server's ids are not unique across types.
  assert.ok(warnings.some((w) => w.includes('conflicting types') && w.includes(key)), `Relay warns of the collision:\n${warnings.join('\n')}`);

  const src = records(environment);
  assert.ok(src[key], 'one record under the bare key');
  for (const id of [`Party:${key}`, `ValidatorNode:${key}`, `AnnounceNode:${key}`]) assert.equal(src[id], undefined);
  // The record holds the announcement's fields beside the party's and the node's lists.
  assert.equal(src[key].name, want.transaction.command.name, 'the party record carries the announcement\'s name');
  // The announced node is the command's own record.
  assert.deepEqual(src[key].node, { __ref: key });

  // The party page, read again after the validator page loaded, shows the
  // validator's delegations: one `delegations(first:5)` field for both.
  const partyNow = read(environment, party).party;
  assert.notDeepEqual(partyNow.delegations, want.party.delegations, 'the party page\'s delegations were overwritten');
  assert.deepEqual(partyNow.delegations, stripParty(want.validatorNode.delegations));
  assert.deepEqual(read(environment, validator).validatorNode.delegations, want.validatorNode.delegations);
  // In the response holding all three, the party is not what the gateway sent.
  assert.notDeepEqual(read(environment, all), want);
});

/** A validator's delegations as the party page selects them (no party field). */
function stripParty(conn) {
  return { edges: conn.edges.map(({ node: { party: _p, ...rest } }) => ({ node: rest })) };
}

test('Apollo cache (possibleTypes, keyFields as e2e/lib/apollo.mjs): Party and ValidatorNode apart, the AnnounceNode in its transaction', async () => {
  const sdl = await servedSDL();
  const client = makeClient(gatewayURL(), sdl);
  const queries = {
    party: apolloGql(`query ApolloParty($key: ID!) { ${PARTY} }`),
    validator: apolloGql(`query ApolloValidator($key: ID!) { ${VALIDATOR} }`),
    announcement: apolloGql(`query ApolloAnnouncement($hash: String!) { ${ANNOUNCEMENT} }`),
    all: apolloGql(`query ApolloAll($key: ID!, $hash: String!) { ${PARTY} ${VALIDATOR} ${ANNOUNCEMENT} }`),
  };
  const vars = { party: { key }, validator: { key }, announcement: { hash }, all: { key, hash } };
  for (const name of ['party', 'validator', 'announcement', 'all']) {
    const res = await client.query({ query: queries[name], variables: vars[name], fetchPolicy: 'network-only' });
    assert.equal(res.error, undefined, `${name}: ${res.error}`);
  }

  const cache = client.cache.extract();
  assert.equal(cache[`Party:${key}`].__typename, 'Party');
  assert.equal(cache[`ValidatorNode:${key}`].__typename, 'ValidatorNode');
  assert.equal(cache[`AnnounceNode:${key}`], undefined, 'the command is not a cache entity');
  assert.equal(cache[key], undefined);
  // Each entity holds its own list under the same field name.
  const delegationsOf = (entity) => Object.entries(entity).filter(([f]) => f.startsWith('delegations')).map(([, v]) => v.edges.length);
  assert.deepEqual(delegationsOf(cache[`Party:${key}`]), [want.party.delegations.edges.length]);
  assert.deepEqual(delegationsOf(cache[`ValidatorNode:${key}`]), [want.validatorNode.delegations.edges.length]);
  // The command sits inside its transaction, with its fields, and its node is a reference to the ValidatorNode.
  const tx = cache.ROOT_QUERY[`transaction({"hash":"${hash}"})`];
  assert.equal(tx.command.__typename, 'AnnounceNode');
  assert.equal(tx.command.id, key);
  assert.equal(tx.command.name, want.transaction.command.name);
  assert.deepEqual(tx.command.node, { __ref: `ValidatorNode:${key}` });

  for (const name of ['party', 'validator', 'announcement', 'all']) {
    const data = client.readQuery({ query: queries[name], variables: vars[name] });
    const expected = { party: { party: want.party }, validator: { validatorNode: want.validatorNode }, announcement: { transaction: want.transaction }, all: want }[name];
    assert.deepEqual(withoutTypename(data), withoutTypename(expected), `${name} reads back from the cache as answered`);
  }
});

/** data without __typename (Apollo adds it to every object; the union's is checked above). */
function withoutTypename(v) {
  if (Array.isArray(v)) return v.map(withoutTypename);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== '__typename').map(([k, x]) => [k, withoutTypename(x)]));
  }
  return v;
}
