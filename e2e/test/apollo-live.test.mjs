// Apollo Client on live pages: a subscription over graphql-ws (one
// WebSocket, the graphql-transport-ws protocol) receives the transactions
// the sample service appends, exactly once and in chain order, filtered,
// and a feed in the cache grows with them (subscribeToMore); a
// resubscription from the last cursor receives exactly the missed ones,
// then goes live; a WebSocket from another origin is refused. @defer over
// multipart/mixed: the page first gets the transactions without their
// deferred parts, then complete, and the cache ends as the plain query's.
//
// Needs the sample service's control route (sample-upstream -control):
// POST /_sample/blocks appends a block and answers its transactions.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { gql } from '@apollo/client/core';
import { print } from 'graphql';
import WebSocket from 'ws';
import { makeLiveClient } from '../lib/apollo.mjs';
import { gatewayURL, upstreamURL, gql as gatewayQuery, servedSDL } from '../lib/env.mjs';

const DEADLINE_MS = 30_000;
// The subscription's filter, and the explorer's type strings it matches
// (each TransactionType value's description names them).
const TYPES = { BATCH_MARKET_INSTRUCTIONS: 'Batch Market Instructions', SUBMIT_ORDER: 'Submit Order' };
const matches = (tx) => Object.values(TYPES).includes(tx.type);
const types = Object.keys(TYPES);

const TX_FIELDS = 'hash block index type command { __typename }';
const SUBSCRIPTION = gql`subscription LiveTransactions($types: [TransactionType!], $after: String) {
  transactions(types: $types, after: $after) { cursor node { ${TX_FIELDS} } }
}`;
const FEED = gql`query LiveFeed($types: [TransactionType!]) {
  transactions(types: $types, first: 5) {
    edges { cursor node { ${TX_FIELDS} } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

let sdl;
before(async () => {
  sdl = await servedSDL();
});

/** Appends one block upstream through the control route; returns its transactions. */
async function appendBlock() {
  const res = await fetch(`${upstreamURL()}/_sample/blocks`, { method: 'POST' });
  const text = await res.text();
  if (!res.ok) {
    throw new Error(`POST /_sample/blocks: ${res.status} ${text.slice(0, 300)} (the sample service must run with -control)`);
  }
  return JSON.parse(text).transactions;
}

/**
 * Appends blocks until they hold at least `matching` transactions the
 * filter matches and `others` it does not (at most 60 blocks). Returns
 * every appended transaction in chain order.
 */
async function appendUntil({ matching, others = 0 }) {
  const txs = [];
  for (let i = 0; i < 60; i++) {
    txs.push(...(await appendBlock()));
    if (txs.filter(matches).length >= matching && txs.filter((t) => !matches(t)).length >= others) {
      return txs.sort((a, b) => (BigInt(a.block) === BigInt(b.block) ? a.index - b.index : BigInt(a.block) < BigInt(b.block) ? -1 : 1));
    }
  }
  throw new Error(`60 blocks did not hold ${matching} matching and ${others} other transactions`);
}

/**
 * Collects what an Observable delivers. until(pred, what) resolves once
 * pred(events) holds, rejects on an error or after DEADLINE_MS.
 */
function collect(observable, map = (r) => r) {
  const events = [];
  const waiters = new Set();
  let failure;
  const wake = () => waiters.forEach((w) => w());
  const sub = observable.subscribe({
    next: (r) => {
      if (r.error) failure = r.error;
      else events.push(map(r));
      wake();
    },
    error: (e) => {
      failure = e;
      wake();
    },
  });
  const until = (pred, what) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`timed out waiting for ${what}; got ${JSON.stringify(events).slice(0, 2000)}`)), DEADLINE_MS);
    const done = (err) => {
      clearTimeout(timer);
      waiters.delete(check);
      if (err) reject(err);
      else resolve(events);
    };
    const check = () => {
      if (failure) done(failure);
      else if (pred(events)) done();
    };
    waiters.add(check);
    check();
  });
  return { events, until, unsubscribe: () => sub.unsubscribe() };
}

// An event or an appended transaction, as the comparisons see it.
const fromEvent = (edge) => ({ hash: edge.node.hash, block: edge.node.block, index: edge.node.index, type: edge.node.type });
const fromAppended = (tx) => ({ hash: tx.hash, block: tx.block, index: tx.index, type: tx.type });
const hasHash = (hash) => (events) => events.some((e) => e.hash === hash);

/** The cursor of the newest transaction the filter lists now. */
async function topCursor() {
  const { transactions } = await gatewayQuery('query ($types: [TransactionType!]) { transactions(types: $types, first: 1) { edges { cursor } } }', { types });
  return transactions.edges[0].cursor;
}

test('graphql-ws subscription: appended transactions arrive once, in order, filtered, and grow the feed in the cache; a resubscription from the last cursor gets exactly the missed ones', async (t) => {
  const { client, wsClient } = makeLiveClient(gatewayURL(), sdl);
  try {
    // The feed a page shows, then the subscription that keeps it current.
    const feed = client.watchQuery({ query: FEED, variables: { types } });
    const feedEvents = collect(feed);
    await feedEvents.until((ev) => ev.some((r) => r.dataState === 'complete'), 'the feed');
    const before = client.readQuery({ query: FEED, variables: { types } }).transactions.edges;
    // Resuming from the feed's top makes the start exact: whatever is
    // appended from now on is newer than it, however soon the gateway
    // starts the subscription.
    const top = await topCursor();
    assert.equal(top, before[0].cursor);
    let updates = 0;
    const stopMore = feed.subscribeToMore({
      document: SUBSCRIPTION,
      variables: { types, after: top },
      updateQuery: (_, { previousData, subscriptionData }) => {
        updates++;
        const edge = subscriptionData.data.transactions;
        const conn = previousData.transactions;
        return { ...previousData, transactions: { ...conn, edges: [edge, ...conn.edges], pageInfo: { ...conn.pageInfo, startCursor: edge.cursor } } };
      },
    });
    const live = collect(client.subscribe({ query: SUBSCRIPTION, variables: { types, after: top } }), (r) => r.data.transactions);

    const appended = await appendUntil({ matching: 3, others: 2 });
    const want = appended.filter(matches).map(fromAppended);
    const last = want.at(-1).hash;
    await live.until((ev) => hasHash(last)(ev.map(fromEvent)), `transaction ${last}`);
    // Delivery is in chain order: once the newest arrived, every earlier
    // one (and any duplicate or non-matching one) would have arrived before.
    assert.deepEqual(live.events.map(fromEvent), want, `events vs the ${appended.length} appended (${want.length} matching)`);
    for (const e of live.events) assert.equal(e.node.command.__typename, e.node.type === TYPES.SUBMIT_ORDER ? 'OrderSubmission' : 'BatchMarketInstructions');
    t.diagnostic(`${appended.length} appended, ${want.length} delivered`);

    // The feed in the cache: the new ones on top, newest first, then what it held.
    await feedEvents.until(() => updates >= want.length, 'the feed updates');
    const cached = client.readQuery({ query: FEED, variables: { types } }).transactions;
    assert.equal(updates, want.length, 'one cache update per delivered transaction');
    assert.deepEqual(cached.edges.map((e) => e.node.hash), [...want.map((w) => w.hash).reverse(), ...before.map((e) => e.node.hash)]);
    assert.equal(cached.pageInfo.startCursor, live.events.at(-1).cursor);
    // The same list as the gateway's connection answers it now, cursors included.
    const fresh = await gatewayQuery(`query ($types: [TransactionType!], $n: Int) { transactions(types: $types, first: $n) { edges { cursor node { ${TX_FIELDS} } } } }`, { types, n: cached.edges.length });
    assert.deepEqual(cached.edges.map(({ cursor, node: { __typename: _, command, ...node } }) => ({ cursor, node: { ...node, command: { __typename: command.__typename } } })),
      fresh.transactions.edges);
    stopMore();

    // Resume: away while more blocks arrive, back with the last cursor seen.
    const lastCursor = live.events.at(-1).cursor;
    live.unsubscribe();
    const missedAppended = await appendUntil({ matching: 2, others: 1 });
    const missed = missedAppended.filter(matches).map(fromAppended);
    const resumed = collect(client.subscribe({ query: SUBSCRIPTION, variables: { types, after: lastCursor } }), (r) => r.data.transactions);
    try {
      await resumed.until((ev) => hasHash(missed.at(-1).hash)(ev.map(fromEvent)), 'the missed transactions');
      assert.deepEqual(resumed.events.map(fromEvent), missed, 'exactly the missed ones, in order');
      // Then live again.
      const more = (await appendUntil({ matching: 1 })).filter(matches).map(fromAppended);
      await resumed.until((ev) => hasHash(more.at(-1).hash)(ev.map(fromEvent)), 'the next live transactions');
      assert.deepEqual(resumed.events.map(fromEvent), [...missed, ...more]);
    } finally {
      resumed.unsubscribe();
    }
    feedEvents.unsubscribe();
  } finally {
    await wsClient.dispose();
    client.stop();
  }
});

/**
 * Opens a WebSocket to /graphql with the graphql-transport-ws protocol and
 * this Origin header: resolves with the handshake's HTTP status when
 * refused, or with 101 once the server acknowledged connection_init.
 */
function openWebSocket(origin) {
  const url = `${gatewayURL().replace(/^http/, 'ws')}/graphql`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws', origin ? { origin } : {});
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no answer to the WebSocket from ${origin}`));
    }, DEADLINE_MS);
    const finish = (v) => {
      clearTimeout(timer);
      resolve(v);
    };
    ws.on('unexpected-response', (_req, res) => {
      finish({ status: res.statusCode });
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init' })));
    ws.on('message', (msg) => {
      const m = JSON.parse(msg);
      ws.close(1000);
      finish({ status: 101, protocol: ws.protocol, type: m.type });
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

test('a WebSocket from another origin is refused; from the gateway\'s own origin (or a non-browser client) it opens', async () => {
  // The harness sets no CORS_ORIGINS: only the gateway's own origin is allowed.
  const refused = await openWebSocket('https://evil.example');
  assert.equal(refused.status, 403, 'refused at the handshake');
  for (const origin of [gatewayURL(), undefined]) {
    assert.deepEqual(await openWebSocket(origin), { status: 101, protocol: 'graphql-transport-ws', type: 'connection_ack' }, `origin ${origin}`);
  }

  // Apollo Client in a page of another origin: the subscription fails, nothing arrives.
  class OtherOriginWebSocket extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols, { origin: 'https://evil.example' });
    }
  }
  const { client, wsClient } = makeLiveClient(gatewayURL(), sdl, { wsOptions: { webSocketImpl: OtherOriginWebSocket } });
  try {
    const sub = collect(client.subscribe({ query: SUBSCRIPTION, variables: { types } }));
    await assert.rejects(sub.until(() => false, 'the refusal'), (err) => {
      assert.match(err.message, /^Socket closed/);
      assert.deepEqual(sub.events, []);
      return true;
    });
  } finally {
    await wsClient.dispose();
    client.stop();
  }
});

test('@defer through HttpLink: transactions first without their deferred parts, then each merged; the cache ends as the plain query\'s', async () => {
  const selection = (deferred) => `
    transactions(types: [TRANSFER_FUNDS], first: 8) {
      edges {
        cursor
        node {
          hash block index type
          submitter { id }
          command {
            __typename
            ... on TransferFunds {
              amount
              ${deferred ? '... @defer(label: "assets") {' : ''}
                asset { id status details { symbol decimals } }
              ${deferred ? '}' : ''}
            }
          }
        }
      }
    }`;
  const DEFERRED = gql`query DeferredTransfers { ${selection(true)} }`;
  const PLAIN = gql`query PlainTransfers { ${selection(false)} }`;

  const http = [];
  const recordingFetch = async (url, init) => {
    const res = await fetch(url, init);
    http.push({ accept: new Headers(init.headers).get('accept'), contentType: res.headers.get('content-type') });
    return res;
  };
  const deferred = makeLiveClient(gatewayURL(), sdl, { fetch: recordingFetch });
  const plain = makeLiveClient(gatewayURL(), sdl);
  try {
    // Apollo hands the watcher the first part, then each merge of a later
    // one: wait for the result holding every deferred fragment.
    const nodesOf = (r) => r.data?.transactions?.edges?.map((e) => e.node) ?? [];
    const merged = (r) => nodesOf(r).length > 0 &&
      nodesOf(r).every((n) => n.command.asset != null);
    const results = collect(deferred.client.watchQuery({ query: DEFERRED }));
    await results.until((ev) => ev.some(merged), 'the result with every deferred part');
    results.unsubscribe();
    assert.equal(http.length, 1);
    assert.match(http[0].accept, /multipart\/mixed/, 'Apollo asks for incremental delivery');
    assert.match(http[0].contentType, /^multipart\/mixed/, 'the gateway answers in parts');

    // On the wire the first part has the transactions without their
    // deferred fragments (gqlgen defers the fields that have resolvers:
    // references and nested connections, not a transaction's plain fields;
    // each is absent there, not null), the later
    // parts carry the fragments at their paths. Apollo merges them as they
    // come; on loopback several may reach it in one read, so how many
    // results it shows on the way is not fixed, only the merged end.
    const wire = await fetch(`${gatewayURL()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: http[0].accept },
      body: JSON.stringify({ query: print(DEFERRED) }),
    });
    const parts = (await wire.text()).split(/\r?\n---/).map((p) => p.slice(p.indexOf('{'))).filter((p) => p.startsWith('{')).map((p) => JSON.parse(p));
    assert.ok(parts.length >= 2, `incremental parts: ${parts.length}`);
    assert.equal(parts[0].hasNext, true);
    const firstNodes = parts[0].data.transactions.edges.map((e) => e.node);
    assert.equal(firstNodes.length, 8);
    for (const n of firstNodes) {
      assert.match(n.hash, /^[0-9A-F]{64}$/);
      assert.equal(n.command.__typename, 'TransferFunds');
      assert.match(n.command.amount, /^\d+$/);
      assert.ok(!('asset' in n.command), 'the deferred asset is absent from the first part (not even null)');
    }
    const labels = parts.slice(1).flatMap((p) => p.incremental ?? []).map((i) => i.label);
    assert.equal(labels.length, 8, `deferred parts: ${labels}`);
    assert.ok(labels.every((l) => l === 'assets'), `deferred parts: ${labels}`);
    assert.equal(parts.at(-1).hasNext, false);

    const withData = results.events.filter((r) => nodesOf(r).length > 0);
    const lastNodes = nodesOf(withData.at(-1));
    assert.deepEqual(lastNodes.map((n) => n.hash), firstNodes.map((n) => n.hash));
    for (const n of lastNodes) {
      assert.match(n.command.asset.id, /^[0-9a-f]{64}$/);
    }

    const res = await plain.client.query({ query: PLAIN });
    assert.equal(res.error, undefined);
    assert.deepEqual(deferred.client.cache.extract(), plain.client.cache.extract(), 'the same cache, deferred or not');
    assert.deepEqual(deferred.client.readQuery({ query: PLAIN }), res.data);
  } finally {
    for (const c of [deferred, plain]) {
      await c.wsClient.dispose();
      c.client.stop();
    }
  }
});
