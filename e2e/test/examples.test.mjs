// The frontend query set in examples/ is valid against the served schema
// and every operation in it runs on the gateway without errors, returning
// the sample data.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { gatewayURL, upstreamURL, getJSON, repoDir, servedSDL, dataNodeList } from '../lib/env.mjs';

const examplesDir = join(repoDir, 'examples');
const files = readdirSync(examplesDir).filter((f) => f.endsWith('.graphql')).sort();
const executed = new Set();
let schema;

before(async () => {
  schema = buildSchema(await servedSDL());
});

// Errors a frontend must expect with real data, which the sample data
// reproduces: a reference to an asset that does not exist (null plus
// NOT_FOUND at its path) and an enum value the schema does not know yet
// (null plus UPSTREAM_ERROR naming it). Anything else fails.
function expectedPartial(err) {
  // (A reference to an unknown asset is the asset with its id: the fields
  // it cannot give, status and details, carry the error.)
  const [ref, leaf] = (err.path ?? []).slice(-2);
  if (err.extensions?.code === 'NOT_FOUND' && /^(asset|settlementAsset|baseAsset|quoteAsset|assetForMetric)$/.test(ref) && /^(status|details)$/.test(leaf)) return true;
  return err.extensions?.code === 'UPSTREAM_ERROR' && /which this schema does not know/.test(err.message);
}

async function run(file, operationName, variables = {}) {
  const query = readFileSync(join(examplesDir, file), 'utf8');
  const res = await fetch(`${gatewayURL()}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, operationName, variables }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  const unexpected = (body.errors ?? []).filter((e) => !expectedPartial(e));
  assert.deepEqual(unexpected, [], `${file} ${operationName}`);
  assert.ok(body.data, `${file} ${operationName}: no data`);
  executed.add(operationName);
  return body.data;
}

test('the examples are valid against the served schema', () => {
  assert.deepEqual(files, ['asset-list.graphql', 'party-page.graphql', 'transaction-feed.graphql', 'transaction-page.graphql']);
  for (const file of files) {
    const errors = validate(schema, parse(readFileSync(join(examplesDir, file), 'utf8')));
    assert.deepEqual(errors.map((e) => e.message), [], file);
  }
});

test('every graphql block in README.md and examples/README.md is valid against the served schema', () => {
  for (const doc of [join(repoDir, 'README.md'), join(examplesDir, 'README.md')]) {
    const blocks = [...readFileSync(doc, 'utf8').matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]);
    assert.ok(blocks.length > 0, `${doc} has graphql blocks`);
    blocks.forEach((block, i) => {
      const errors = validate(schema, parse(block)).map((e) => e.message);
      assert.deepEqual(errors, [], `${doc}, graphql block ${i + 1}:\n${block}`);
    });
  }
});

test('asset list: first page, next page, previous page', async () => {
  const expected = (await dataNodeList('/api/v2/assets', {}, 'assets')).map((a) => a.id);
  const p1 = await run('asset-list.graphql', 'AssetList');
  assert.deepEqual(p1.assets.edges.map((e) => e.node.id), expected.slice(0, 25));
  assert.equal(p1.assets.pageInfo.hasNextPage, true);
  const p2 = await run('asset-list.graphql', 'AssetList', { after: p1.assets.pageInfo.endCursor });
  assert.deepEqual(p2.assets.edges.map((e) => e.node.id), expected.slice(25, 50));
  const back = await run('asset-list.graphql', 'AssetList', { first: null, last: 25, before: p2.assets.pageInfo.startCursor });
  assert.deepEqual(back.assets.edges.map((e) => e.node.id), expected.slice(0, 25));
  assert.equal(back.assets.pageInfo.hasPreviousPage, false);
  for (const { node } of p1.assets.edges) {
    assert.equal((node.details.erc20 ? 1 : 0) + (node.details.builtinAsset ? 1 : 0) <= 1, true, 'one-of source');
  }
});

// A party with both funding payments and delegations in the sample data.
async function partyWithBoth() {
  const delegations = await getJSON(`${upstreamURL()}/api/v2/delegations?pagination.first=500`);
  const parties = [...new Set(delegations.delegations.edges.map((e) => e.node.party))];
  for (const party of parties) {
    const f = await getJSON(`${upstreamURL()}/api/v2/funding-payments?partyId=${party}&pagination.first=30`);
    if (f.fundingPayments.edges.length > 20) return party;
  }
  throw new Error('no party with delegations and over 20 funding payments in the sample data');
}

test('party page: funding payments and delegations, then more of each', async () => {
  const party = await partyWithBoth();
  const funding = await dataNodeList('/api/v2/funding-payments', { partyId: party }, 'fundingPayments');
  const delegations = await dataNodeList('/api/v2/delegations', { partyId: party }, 'delegations');
  const page = await run('party-page.graphql', 'PartyPage', { party });
  assert.equal(page.party.id, party);
  const fkey = (f) => `${f.marketId}/${f.fundingPeriodSeq}/${f.amount}`;
  const dkey = (d) => `${d.nodeId}/${d.epochSeq}/${d.amount}`;
  assert.deepEqual(page.party.fundingPayments.edges.map((e) => fkey(e.node)), funding.slice(0, 20).map(fkey));
  assert.deepEqual(page.party.delegations.edges.map((e) => dkey(e.node)), delegations.slice(0, 20).map(dkey));

  const more = await run('party-page.graphql', 'PartyFundingPayments', { party, after: page.party.fundingPayments.pageInfo.endCursor });
  assert.deepEqual(more.party.fundingPayments.edges.map((e) => fkey(e.node)), funding.slice(20, 40).map(fkey));
  const market = funding[0].marketId;
  const oneMarket = await run('party-page.graphql', 'PartyFundingPayments', { party, market, count: 5 });
  assert.ok(oneMarket.party.fundingPayments.edges.every((e) => e.node.marketId === market));

  if (page.party.delegations.pageInfo.hasNextPage) {
    const moreD = await run('party-page.graphql', 'PartyDelegations', { party, after: page.party.delegations.pageInfo.endCursor });
    assert.deepEqual(moreD.party.delegations.edges.map((e) => dkey(e.node)), delegations.slice(20, 40).map(dkey));
  } else {
    await run('party-page.graphql', 'PartyDelegations', { party, epoch: delegations[0].epochSeq });
  }
});

test('transaction feed: newest page, older page, newer since a point, a governance feed', async () => {
  const newest = await run('transaction-feed.graphql', 'TransactionFeed', { first: 40 });
  assert.equal(newest.transactions.edges.length, 40);
  const kinds = new Set(newest.transactions.edges.map((e) => e.node.command?.__typename));
  assert.ok(kinds.has('UnknownCommand') || kinds.has('BatchMarketInstructions'), [...kinds].join());
  const older = await run('transaction-feed.graphql', 'TransactionFeed', { after: newest.transactions.pageInfo.endCursor });
  const last = newest.transactions.edges.at(-1).node;
  const firstOlder = older.transactions.edges[0].node;
  assert.ok(BigInt(firstOlder.block) < BigInt(last.block) || (firstOlder.block === last.block && firstOlder.index < last.index), 'older page continues the feed');

  // "Newer since" the 31st newest transaction: the 20 above it, in feed order.
  const anchor = newest.transactions.edges[30];
  const newer = await run('transaction-feed.graphql', 'TransactionFeedNewer', { before: anchor.cursor });
  assert.deepEqual(newer.transactions.edges.map((e) => e.node.hash), newest.transactions.edges.slice(10, 30).map((e) => e.node.hash));

  const governance = await run('transaction-feed.graphql', 'TransactionFeed', { cmdTypes: ['Batch Proposal'], first: 50 });
  assert.ok(governance.transactions.edges.length > 0);
  for (const { node } of governance.transactions.edges) {
    assert.equal(node.command.__typename, 'BatchProposalSubmission');
    assert.ok(node.command.terms.changes.every((c) => c.change.__typename), 'each change has a kind');
  }
});

test('transaction page by a lower-case hash, block page with a submitter filter', async () => {
  const newest = await getJSON(`${upstreamURL()}/rest/transactions?first=30`);
  const tx = newest.transactions[20];
  const page = await run('transaction-page.graphql', 'TransactionPage', { hash: tx.hash.toLowerCase() });
  assert.equal(page.transaction.hash, tx.hash);
  assert.equal(page.transaction.block, tx.block);

  // The block of that transaction: every one of its transactions, newest first.
  const inBlock = newest.transactions.filter((t) => t.block === tx.block);
  const block = await run('transaction-page.graphql', 'BlockPage', { block: tx.block, first: 1000 });
  assert.deepEqual(block.transactions.edges.map((e) => e.node.hash).slice(0, inBlock.length), inBlock.map((t) => t.hash));
  const mine = await run('transaction-page.graphql', 'BlockPage', { block: tx.block, submitter: tx.submitter });
  assert.ok(mine.transactions.edges.length >= 1);
  assert.ok(mine.transactions.edges.every((e) => e.node.submitter.id === tx.submitter));
});

test('every operation in examples/ was run', () => {
  const operations = files.flatMap((f) => parse(readFileSync(join(examplesDir, f), 'utf8')).definitions
    .filter((d) => d.kind === 'OperationDefinition').map((d) => d.name.value));
  assert.deepEqual([...executed].sort(), operations.sort());
});
