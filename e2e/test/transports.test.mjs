// The streaming transports of /graphql through the clients apps use, each
// written against the wire contract the transports follow (README, and
// each client's own protocol text):
//   - graphql-ws's createClient (graphql-transport-ws over one WebSocket):
//     subscriptions and queries side by side; a validation error ends its
//     operation with `error` alone and the socket goes on serving;
//   - graphql-sse's createClient, distinct connections (a POST per
//     operation) and single connection (a PUT reservation, one GET
//     stream, operations POSTed with the token, DELETE to stop one);
//   - Apollo Client's HttpLink: @defer as multipart/mixed (2022-08-24
//     incremental format), merged into the same cache as the plain
//     query's, also for a deferred connection under a party the page
//     repeats; subscriptions as Apollo's multipart protocol;
//   - urql's fetchExchange: @defer over its default GET;
//   - eventsource-parser, which dispatches what a browser's EventSource
//     dispatches, over raw SSE streams: every event the server sends,
//     `complete` included, reaches it.
// Live transactions come from the sample service's control route
// (sample-upstream -control); every wait has a deadline, and every test
// ends its clients and streams.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { createClient as createWsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import { Client as UrqlClient, fetchExchange } from '@urql/core';
import { gql as apolloGql } from '@apollo/client/core';
import { makeHttpClient } from '../lib/apollo.mjs';
import { gatewayURL, gql, servedSDL } from '../lib/env.mjs';
import {
  DEADLINE_MS, LIVE_SUBSCRIPTION, appendTransactions, fromAppended, fromEdge, headCursor,
  openSubscriptions, recorder, recordingFetch, subscriptionsDropTo, withDeadline,
} from '../lib/live.mjs';
import { fetchMultipart, mediaType, openEventStream, openMultipart, sentEvents } from '../lib/wire.mjs';

// A test's own bound, besides every wait's: the harness's --test-timeout
// does not apply when a file is run by hand.
const TEST = { timeout: 180_000 };
// A query answers on loopback in well under a second: waiting longer
// only delays the report of a lost answer.
const QUERY_DEADLINE_MS = 10_000;

const graphqlURL = () => `${gatewayURL()}/graphql`;

// Queries every transport runs, compared with the same query over plain
// HTTP. The oldest transactions: appended blocks never change them.
const OLDEST = 'query Oldest { transactions(last: 3) { edges { cursor node { hash block index type } } } }';
const OLDEST_SUBMITTERS = 'query OldestSubmitters { transactions(last: 2) { edges { node { hash submitter { id } } } } }';
// Invalid: Transaction has no field `nope` (a validation error, before
// any execution).
const INVALID = 'query Invalid { transactions(last: 1) { edges { node { hash nope } } } }';

/** A validation error about the unknown field, as the gateway words and codes it. */
function assertUnknownField(errors, where) {
  assert.ok(Array.isArray(errors) && errors.length > 0, `${where}: GraphQL errors, got ${JSON.stringify(errors)}`);
  assert.ok(errors.some((e) => /"nope"/.test(e.message)), `${where}: an error names the unknown field: ${JSON.stringify(errors)}`);
  for (const e of errors) assert.equal(e.extensions?.code, 'BAD_USER_INPUT', `${where}: ${JSON.stringify(e)}`);
}

/** Fails with the error itself as the message (not a diff of the error object). */
function assertNoError(err, what) {
  if (err !== undefined && err !== null) {
    assert.fail(`${what}: ${err instanceof Error ? `${err.name}: ${err.message}` : JSON.stringify(err)}`);
  }
}

// A subscription's result as its edge, or its errors (then no edge
// comparison can pass, and the failure shows them).
const edgeOf = (r) => r?.data?.transactions ?? { errors: r?.errors ?? r };
const hasAll = (txs) => (edges) => txs.every((tx) => edges.some((e) => e.node?.hash === tx.hash));

// ---------------------------------------------------------------------------
// graphql-ws

describe('graphql-ws createClient, one socket (graphql-transport-ws)', () => {
  // Every frame both ways, and every socket the client opened.
  const frames = [];
  const sockets = [];
  class RecordingWebSocket extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols);
      sockets.push(this);
      this.on('message', (data) => frames.push({ from: 'server', ...JSON.parse(String(data)) }));
    }

    send(data, ...rest) {
      frames.push({ from: 'client', ...JSON.parse(String(data)) });
      return super.send(data, ...rest);
    }
  }
  const closes = [];
  const connectionErrors = [];
  let client;
  // The first subscription, open from the first test to the end.
  const live = recorder(edgeOf);
  let stopLive = () => {};
  const delivered = [];
  before(() => {
    client = createWsClient({
      url: graphqlURL().replace(/^http/, 'ws'),
      webSocketImpl: RecordingWebSocket,
      // Not lazy: the socket opens now and stays open between operations
      // (a lazy client closes it whenever no operation runs), so every
      // operation of these tests goes over this one socket.
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: (err) => connectionErrors.push(err),
      on: { closed: (e) => closes.push({ code: e?.code, reason: e?.reason }) },
    });
  });
  after(async () => {
    stopLive();
    await client?.dispose();
  });

  const subscribeFrames = (query) => frames.filter((f) => f.from === 'client' && f.type === 'subscribe' && f.payload.query === query);
  const fromServer = (id) => frames.filter((f) => f.from === 'server' && f.id === id);
  const query = async (q) => {
    const rec = recorder();
    client.subscribe({ query: q }, rec);
    return rec.settled(`the answer to ${q.slice(0, 40)}…`, QUERY_DEADLINE_MS);
  };
  const assertAnswers = async (q) => {
    const want = await gql(q);
    const out = await query(q);
    assertNoError(out.error, q);
    assert.equal(out.completed, true);
    assert.equal(out.events.length, 1, `one result: ${JSON.stringify(out.events)}`);
    assert.deepEqual(out.events[0].data, want, q);
  };

  test('a subscription receives appended transactions, once each, in chain order', TEST, async () => {
    stopLive = client.subscribe({ query: LIVE_SUBSCRIPTION, variables: { after: await headCursor() } }, live);
    const appended = await appendTransactions(3);
    delivered.push(...appended);
    await live.until(hasAll(appended), 'the appended transactions');
    assert.deepEqual(live.events.map(fromEdge), appended.map(fromAppended));
  });

  test('on the same socket: a valid query, an invalid one (GraphQL errors; on the wire `error` alone, no `complete` after it), another valid one: each answered', TEST, async () => {
    await assertAnswers(OLDEST);
    const bad = await query(INVALID);
    assert.equal(bad.completed, false, 'the invalid query fails, it does not complete');
    assert.deepEqual(bad.events, [], 'no result for the invalid query');
    assertUnknownField(bad.error, 'the error message\'s payload');
    // The operation after the error must still be answered (a server that
    // followed the error with `complete` lost it).
    await assertAnswers(OLDEST_SUBMITTERS);
    // PROTOCOL.md: `error` ends the operation, no `complete` follows it.
    assert.deepEqual(fromServer(subscribeFrames(INVALID)[0].id).map((f) => f.type), ['error'], 'the server\'s messages for the invalid query');
  });

  test('a second subscription completed by the client (`complete`) ends cleanly, on the server too; the first still receives, the socket serves on and never closed', TEST, async (t) => {
    const second = recorder(edgeOf);
    const stopSecond = client.subscribe({ query: LIVE_SUBSCRIPTION, variables: { after: await headCursor() } }, second);
    try {
      const more = await appendTransactions(1);
      delivered.push(...more);
      await second.until(hasAll(more), 'the second subscription\'s transactions');
      await live.until(hasAll(more), 'the first subscription\'s next transactions');
      assert.deepEqual(second.events.map(fromEdge), more.map(fromAppended));
      const open = await openSubscriptions();
      stopSecond();
      const ended = await second.settled('the second subscription to end on the client');
      assertNoError(ended.error, 'the completed subscription');
      assert.equal(ended.completed, true);
      const secondId = subscribeFrames(LIVE_SUBSCRIPTION).at(-1).id;
      assert.ok(frames.some((f) => f.from === 'client' && f.type === 'complete' && f.id === secondId), 'the client sent complete');
      await subscriptionsDropTo(open - 1, 'the completed subscription to end on the server');

      // The socket serves on: the first subscription still receives, a query answers.
      const last = await appendTransactions(1);
      delivered.push(...last);
      await live.until(hasAll(last), 'the first subscription\'s transactions after the second ended');
      await assertAnswers(OLDEST);
      assert.deepEqual(live.events.map(fromEdge), delivered.map(fromAppended), 'the first subscription: each once, in chain order');
      assert.ok(!second.events.some((e) => last.some((tx) => tx.hash === e.node?.hash)), 'nothing reaches the completed subscription');
      assert.ok(!fromServer(secondId).some((f) => f.type === 'next' && last.some((tx) => tx.hash === f.payload?.data?.transactions?.node?.hash)),
        'the server sends nothing for the completed subscription');
      assert.equal(sockets.length, 1, 'one socket for everything');
      assert.equal(sockets[0].protocol, 'graphql-transport-ws');
      assert.deepEqual(closes, [], 'the socket never closed');
      assert.deepEqual(connectionErrors, []);
      t.diagnostic(`${frames.length} frames; ${live.events.length} transactions to the first subscription, ${second.events.length} to the second`);
    } finally {
      stopSecond();
    }
  });
});

// ---------------------------------------------------------------------------
// graphql-sse

for (const singleConnection of [false, true]) {
  describe(`graphql-sse createClient, ${singleConnection ? 'single connection mode' : 'distinct connections mode'}`, () => {
    let client;
    const requests = [];
    before(() => {
      client = createSseClient({
        url: graphqlURL(),
        singleConnection,
        // Errors surface to the test instead of retries with back-off.
        retryAttempts: 0,
        fetchFn: recordingFetch(requests),
      });
    });
    after(() => client?.dispose());

    const run = (payload, sink) => client.subscribe(payload, sink);
    const tokenOf = (r) => r.headers['x-graphql-event-stream-token'];

    /**
     * The requests from index from on, checked against the protocol of
     * the mode: distinct, one POST per operation that accepts only
     * text/event-stream, answered as such; single, a PUT reservation
     * (201), one GET stream with its token, each operation a POST with
     * the token and its operationId (202). Returns the operations' POSTs.
     */
    function checkRequests(from) {
      const rs = requests.slice(from);
      if (!singleConnection) {
        for (const r of rs) {
          assert.equal(r.method, 'POST');
          assert.equal(r.headers.accept, 'text/event-stream');
          assert.equal(r.status, 200, JSON.stringify(r));
          assert.equal(mediaType(r.contentType).type, 'text/event-stream');
        }
        return rs;
      }
      const put = rs.find((r) => r.method === 'PUT');
      assert.ok(put, `a reservation: ${JSON.stringify(rs.map((r) => [r.method, r.status]))}`);
      assert.equal(put.status, 201, 'PUT /graphql reserves a stream (201, the token as text)');
      const stream = rs.find((r) => r.method === 'GET');
      assert.ok(stream, 'the stream is opened');
      assert.equal(stream.headers.accept, 'text/event-stream');
      assert.ok(tokenOf(stream), 'the stream request carries the token');
      assert.equal(stream.status, 200);
      assert.equal(mediaType(stream.contentType).type, 'text/event-stream');
      const posts = rs.filter((r) => r.method === 'POST');
      for (const p of posts) {
        assert.equal(tokenOf(p), tokenOf(stream), 'an operation carries the stream\'s token');
        assert.ok(JSON.parse(p.body).extensions?.operationId, 'an operation carries its operationId');
        assert.equal(p.status, 202, 'an operation is accepted (202) and answered on the stream');
      }
      return posts;
    }

    test('a query returns its result', TEST, async () => {
      const from = requests.length;
      const want = await gql(OLDEST);
      const rec = recorder();
      run({ query: OLDEST }, rec);
      const out = await rec.settled('the query\'s answer', QUERY_DEADLINE_MS);
      assertNoError(out.error, 'the query');
      assert.equal(out.completed, true, 'complete ends the operation');
      assert.equal(out.events.length, 1);
      assert.deepEqual(out.events[0].data, want);
      checkRequests(from);
    });

    test('a subscription receives appended transactions and is disposed cleanly', TEST, async (t) => {
      const from = requests.length;
      const live = recorder(edgeOf);
      const stop = run({ query: LIVE_SUBSCRIPTION, variables: { after: await headCursor() } }, live);
      try {
        const appended = await appendTransactions(3);
        await live.until(hasAll(appended), 'the appended transactions');
        assert.deepEqual(live.events.map(fromEdge), appended.map(fromAppended), 'each once, in chain order');
        // A query while the subscription runs (in single connection mode,
        // on the same stream).
        const want = await gql(OLDEST_SUBMITTERS);
        const q = recorder();
        run({ query: OLDEST_SUBMITTERS }, q);
        const answer = await q.settled('the query beside the subscription', QUERY_DEADLINE_MS);
        assertNoError(answer.error, 'the query beside the subscription');
        assert.deepEqual(answer.events.map((r) => r.data), [want]);

        const open = await openSubscriptions();
        stop();
        const ended = await live.settled('the subscription to end on the client');
        assertNoError(ended.error, 'the disposed subscription');
        assert.equal(ended.completed, true);
        await subscriptionsDropTo(open - 1, 'the disposed subscription to end on the server');

        const posts = checkRequests(from);
        if (singleConnection) {
          assert.equal(requests.slice(from).filter((r) => r.method === 'PUT').length, 1, 'one reservation for both operations');
          const subscribed = posts.find((p) => JSON.parse(p.body).query === LIVE_SUBSCRIPTION);
          const id = JSON.parse(subscribed.body).extensions.operationId;
          const del = requests.slice(from).find((r) => r.method === 'DELETE');
          assert.ok(del, 'disposing sends DELETE');
          assert.equal(new URL(del.url).searchParams.get('operationId'), id, 'DELETE names the subscription\'s operationId');
          assert.equal(tokenOf(del), tokenOf(subscribed), 'DELETE carries the token');
          assert.equal(del.status, 200, 'DELETE stops the operation (200)');
        } else {
          assert.equal(posts.length, 2, 'one connection per operation');
          assert.equal(posts[0].signal.aborted, true, 'disposing aborted the subscription\'s request');
        }
        t.diagnostic(requests.slice(from).map((r) => `${r.method} ${r.status}`).join(', '));
      } finally {
        stop();
      }
    });

    test('an invalid query yields GraphQL errors through the client', TEST, async () => {
      const from = requests.length;
      const rec = recorder();
      run({ query: INVALID }, rec);
      const out = await rec.settled('the invalid query\'s errors', QUERY_DEADLINE_MS);
      if (singleConnection) {
        // PROTOCOL.md, single connection mode: "Validation issues and other
        // request problems are handled as documented in the GraphQL over
        // HTTP spec": the operation's POST is answered with the errors
        // (200 for the client's Accept */*, application/json), and
        // nothing goes on the stream. graphql-sse's client does not read
        // that body: it fails the operation with a NetworkError naming
        // the status (its own server answers 400 there, to the same end).
        const rs = requests.slice(from);
        const seen = JSON.stringify(rs.map((r) => [r.method, r.status]));
        const post = rs.find((r) => r.method === 'POST');
        assert.ok(post, `no operation was sent (requests: ${seen})`);
        assert.ok(out.error, `the client reported no error (requests: ${seen})`);
        assert.equal(out.events.length, 0, `events on the stream for a request error: ${JSON.stringify(out.events)}`);
        assert.ok([200, 400].includes(post.status), `the operation's POST answered ${post.status} (requests: ${seen})`);
        return;
      }
      // PROTOCOL.md, distinct connections: validation errors MUST come as
      // next events on the accepted stream, then complete. In single
      // connection mode the same, through the operation's id.
      assertNoError(out.error, 'the errors come on the stream, not as a failed request');
      assert.equal(out.completed, true);
      assert.equal(out.events.length, 1, JSON.stringify(out.events));
      assert.equal(out.events[0].data ?? null, null, 'no data');
      assertUnknownField(out.events[0].errors, 'the next event');
      checkRequests(from);
    });
  });
}

// ---------------------------------------------------------------------------
// @defer: Apollo Client (HttpLink, multipart/mixed), on the wire, urql

// The oldest page of transactions, in which parties submit several
// transactions each: the deferred fragment sits under a party the page
// repeats, so its parts merge into one cache record from several paths.
const PAGE = 20;
// Apollo's runs: a wrong merge showed intermittently.
const RUNS = 20;
const deferSelection = (deferred) => `transactions(last: ${PAGE}) {
  edges {
    cursor
    node {
      hash block index type
      submitter {
        id
        ${deferred ? '... @defer(label: "d") {' : ''}
          delegations(first: 1) { edges { node { amount } } }
        ${deferred ? '}' : ''}
      }
    }
  }
}`;
const DEFERRED = `query DeferredSubmitters { ${deferSelection(true)} }`;
const PLAIN = `query PlainSubmitters { ${deferSelection(false)} }`;
// The wire checks' Accept: incremental delivery, JSON as the fallback
// (Apollo Client sends `multipart/mixed;deferSpec=20220824,` before its
// usual `application/graphql-response+json,application/json;q=0.9`).
const DEFER_ACCEPT = 'multipart/mixed;deferSpec=20220824, application/json';

describe('@defer', () => {
  let sdl;
  let plainData;
  before(async () => {
    sdl = await servedSDL();
    // The page must show what it is chosen for: a party submitting at
    // least two of its transactions, with a delegation to defer.
    plainData = await gql(PLAIN);
    const bySubmitter = new Map();
    for (const e of plainData.transactions.edges) bySubmitter.set(e.node.submitter.id, [...(bySubmitter.get(e.node.submitter.id) ?? []), e]);
    const repeated = [...bySubmitter].filter(([, edges]) => edges.length >= 2 && edges[0].node.submitter.delegations.edges.length > 0);
    if (plainData.transactions.edges.length !== PAGE || repeated.length === 0) {
      throw new Error(`the oldest ${PAGE} transactions should repeat a submitter that has delegations: ${JSON.stringify([...bySubmitter].map(([id, e]) => [id.slice(0, 8), e.length]))}`);
    }
  });

  test(`Apollo Client (HttpLink, Defer20220824Handler) follows the watcher until every deferred part is merged; its cache equals the plain query's on a fresh client, ${RUNS} runs`, TEST, async (t) => {
    const allMerged = (r) => {
      if (r.error) throw r.error;
      const edges = r.data?.transactions?.edges;
      return r.dataState === 'complete' && edges?.length === PAGE && edges.every((e) => Array.isArray(e.node.submitter.delegations?.edges));
    };
    for (let run = 1; run <= RUNS; run++) {
      const sent = recorder();
      const requests = sent.events;
      const deferred = makeHttpClient(gatewayURL(), sdl, { fetch: recordingFetch(sent) });
      const plain = makeHttpClient(gatewayURL(), sdl);
      try {
        const results = recorder();
        const watching = deferred.watchQuery({ query: apolloGql(DEFERRED) }).subscribe(results);
        try {
          // The response read to its end (every part handed to Apollo:
          // a party the page repeats may read as complete from the cache
          // before its later paths' parts arrive), then the watcher's
          // result with every deferred part merged.
          await sent.until((rs) => rs.length > 0, `run ${run}: the deferred query's request`);
          await withDeadline(requests[0].done, `run ${run}: the deferred query's response read to its end`);
          await results.until((ev) => ev.some(allMerged), `run ${run}: the result with every deferred part merged`);
        } finally {
          watching.unsubscribe();
        }
        assert.equal(requests.length, 1, `run ${run}: one request`);
        assert.match(requests[0].headers.accept, /multipart\/mixed;\s*deferSpec=20220824/, 'Apollo asks for incremental delivery');
        assert.equal(mediaType(requests[0].contentType).type, 'multipart/mixed', 'the gateway answers in parts');

        const res = await withDeadline(plain.query({ query: apolloGql(PLAIN) }), 'the plain query', QUERY_DEADLINE_MS);
        assertNoError(res.error, `run ${run}: the plain query`);
        assert.deepEqual(deferred.cache.extract(), plain.cache.extract(), `run ${run}: the same cache, deferred or not`);
        assert.deepEqual(deferred.readQuery({ query: apolloGql(PLAIN) }), res.data, `run ${run}`);
        if (run === 1) t.diagnostic(`Apollo's Accept: ${requests[0].headers.accept}; answered ${requests[0].contentType}; ${results.events.length} results to the watcher`);
      } finally {
        deferred.stop();
        plain.stop();
      }
    }
  });

  for (const method of ['POST', 'GET']) {
    test(`on the wire (${method}): the first part without the deferred field, hasNext; then labelled incremental parts that merge into the plain query's data`, TEST, async (t) => {
      const init = method === 'GET'
        ? { method, headers: { accept: DEFER_ACCEPT } }
        : { method, headers: { accept: DEFER_ACCEPT, 'content-type': 'application/json' }, body: JSON.stringify({ query: DEFERRED }) };
      const url = method === 'GET' ? `${graphqlURL()}?${new URLSearchParams({ query: DEFERRED })}` : graphqlURL();
      const { contentType, rawContentType, parts, closed } = await fetchMultipart(url, init, DEADLINE_MS);
      assert.equal(contentType.params.deferspec, '20220824', rawContentType);
      assert.ok(closed, 'the close delimiter ends the body');
      for (const p of parts) {
        const ct = p.headers['content-type'];
        assert.ok(ct === undefined || /application\/json/.test(ct), `a part's Content-Type: ${ct}`);
      }
      assert.ok(parts.length >= 2, `parts: ${parts.length}`);
      const [first, ...later] = parts.map((p) => p.json);

      assert.equal(first.hasNext, true, 'the first part says more follow');
      const edges = first.data.transactions.edges;
      assert.equal(edges.length, PAGE);
      for (const [i, e] of edges.entries()) {
        assert.deepEqual(e.node, { ...plainData.transactions.edges[i].node, submitter: { id: plainData.transactions.edges[i].node.submitter.id } },
          `edge ${i}: its fields, the submitter's id, and no deferred delegations, not even as null`);
      }

      const merged = structuredClone(first.data);
      const paths = [];
      for (const [n, part] of later.entries()) {
        const extra = Object.keys(part).filter((k) => !['incremental', 'hasNext', 'errors', 'extensions'].includes(k));
        assert.deepEqual(extra, [], `later part ${n}: only incremental, hasNext (and errors, extensions): ${JSON.stringify(part).slice(0, 300)}`);
        assert.equal(part.hasNext, n < later.length - 1, `later part ${n}: hasNext`);
        assert.equal(part.errors, undefined);
        for (const inc of part.incremental ?? []) {
          const keys = Object.keys(inc).filter((k) => !['data', 'path', 'label', 'errors', 'extensions'].includes(k));
          assert.deepEqual(keys, [], `an incremental item is { data, path, label } (errors, extensions): ${JSON.stringify(inc).slice(0, 300)}`);
          assert.equal(inc.label, 'd');
          assert.equal(inc.errors, undefined);
          assert.deepEqual(Object.keys(inc.data), ['delegations']);
          assert.equal(inc.path.length, 5);
          assert.deepEqual([inc.path[0], inc.path[1], inc.path[3], inc.path[4]], ['transactions', 'edges', 'node', 'submitter'], JSON.stringify(inc.path));
          paths.push(inc.path[2]);
          let at = merged;
          for (const k of inc.path) at = at[k];
          Object.assign(at, inc.data);
        }
      }
      assert.deepEqual(paths.toSorted((a, b) => a - b), [...Array(PAGE).keys()], 'one deferred part per transaction\'s submitter');
      assert.deepEqual(merged, plainData, 'the parts merge into the plain query\'s data');
      t.diagnostic(`${rawContentType}; ${parts.length} parts`);
    });
  }

  test('urql (fetchExchange, default options): @defer over its default GET delivers the deferred data, merged equal to the plain query\'s', TEST, async (t) => {
    const requests = [];
    const client = new UrqlClient({ url: graphqlURL(), exchanges: [fetchExchange], fetch: recordingFetch(requests) });
    const plain = await withDeadline(client.query(PLAIN, {}).toPromise(), 'urql\'s plain query', QUERY_DEADLINE_MS);
    assertNoError(plain.error, 'urql\'s plain query');
    assert.deepEqual(plain.data, plainData);

    const results = recorder();
    const { unsubscribe } = client.query(DEFERRED, {}).subscribe((r) => results.next(r));
    try {
      await results.until((ev) => {
        const bad = ev.find((r) => r.error);
        if (bad) throw new Error(`urql's result: ${bad.error}`);
        return ev.at(-1)?.hasNext === false;
      }, 'urql\'s last result (hasNext false)');
    } finally {
      unsubscribe();
    }
    const req = requests.at(-1);
    assert.equal(req.method, 'GET', 'urql sends a query within the URL limit as GET');
    assert.match(new URL(req.url).searchParams.get('query'), /@defer/);
    assert.equal(req.status, 200);
    assert.match(mediaType(req.contentType).type, /^(multipart\/mixed|text\/event-stream)$/, 'a stream answers');
    assert.ok(results.events.length >= 2, `urql saw the parts: ${results.events.length} results`);
    assert.equal(results.events[0].hasNext, true);
    assert.deepEqual(results.events.at(-1).data, plainData, 'the merged result is the plain query\'s data');
    t.diagnostic(`urql's GET: Accept ${req.headers.accept}; answered ${req.contentType}; ${results.events.length} results`);
  });
});

// ---------------------------------------------------------------------------
// Raw SSE through eventsource-parser

describe('eventsource-parser over raw SSE (Accept: text/event-stream)', () => {
  /**
   * Every event the stream sent (a blank-line-ended block with a field)
   * was dispatched: an event without a data line, which the standard
   * drops, would make the counts differ.
   */
  function assertAllDispatched(stream) {
    const sent = sentEvents(stream.raw());
    // Each event as its type and whether it had a data line: the data
    // itself would hide the point in a long message.
    const summary = (fields) => `${fields.match(/^event: ?(.*)$/m)?.[1] ?? 'message'}${/^data(:|$)/m.test(fields) ? '' : ' (no data line)'}`;
    assert.equal(stream.events.length, sent.length,
      `the stream sent ${sent.length} events (${sent.map(summary).join(', ')}), eventsource-parser dispatched ${stream.events.length} (${stream.events.map((e) => e.event).join(', ')}): an event needs a data: line to be dispatched`);
  }

  /** A next event's data: an execution result (data, errors, extensions). */
  function executionResult(event) {
    assert.equal(event.event, 'next');
    const result = JSON.parse(event.data);
    assert.deepEqual(Object.keys(result).filter((k) => !['data', 'errors', 'extensions'].includes(k)), [], event.data);
    return result;
  }

  const queryStream = (method, query) => method === 'GET'
    ? openEventStream(`${graphqlURL()}?${new URLSearchParams({ query })}`)
    : openEventStream(graphqlURL(), { method, body: JSON.stringify({ query }) });

  for (const method of ['POST', 'GET']) {
    test(`a query (${method}): next with its result, then complete, both dispatched; the server ends the stream`, TEST, async (t) => {
      const want = await gql(OLDEST);
      const stream = await queryStream(method, OLDEST);
      try {
        const events = await stream.ended('the server to end the stream');
        assertAllDispatched(stream);
        assert.deepEqual(events.map((e) => e.event), ['next', 'complete']);
        assert.deepEqual(executionResult(events[0]).data, want);
        t.diagnostic(`${stream.res.headers.get('content-type')}; ${stream.comments.length} comment lines`);
      } finally {
        stream.abort();
      }
    });
  }

  test('a subscription (POST): each appended transaction a next event whose data is an execution result; every event sent is dispatched', TEST, async () => {
    const stream = await openEventStream(graphqlURL(), {
      method: 'POST',
      body: JSON.stringify({ query: LIVE_SUBSCRIPTION, variables: { after: await headCursor() } }),
    });
    try {
      const appended = await appendTransactions(3);
      const edges = (events) => events.map((e) => edgeOf(JSON.parse(e.data)));
      await stream.until((events) => hasAll(appended)(edges(events)), 'the appended transactions');
      for (const e of stream.events) executionResult(e);
      assert.deepEqual(edges(stream.events).map(fromEdge), appended.map(fromAppended), 'each once, in chain order');
      assertAllDispatched(stream);
      const open = await openSubscriptions();
      stream.abort();
      await subscriptionsDropTo(open - 1, 'the closed stream\'s subscription to end on the server');
    } finally {
      stream.abort();
    }
  });

  test('a subscription the server ends (a cursor beyond the replay limit): next with the error, then complete, dispatched; the stream ends', TEST, async () => {
    const { transactions } = await gql('{ transactions(last: 1) { edges { cursor } } }');
    const stream = await openEventStream(graphqlURL(), {
      method: 'POST',
      body: JSON.stringify({ query: LIVE_SUBSCRIPTION, variables: { after: transactions.edges[0].cursor } }),
    });
    try {
      const events = await stream.ended('the server to end the stream');
      assertAllDispatched(stream);
      assert.deepEqual(events.map((e) => e.event), ['next', 'complete']);
      const result = executionResult(events[0]);
      assert.equal(result.data ?? null, null);
      assert.equal(result.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', JSON.stringify(result));
      assert.match(result.errors[0].message, /more than \d+ matching transactions/);
    } finally {
      stream.abort();
    }
  });
});

// ---------------------------------------------------------------------------
// Subscriptions over HTTP in Apollo's multipart subscription protocol.
// Last in the file: a server that gets this protocol wrong may fail
// beyond the one request (gqlgen's multipart transport panicked in a
// goroutine of its own, which ended the process), and the tests before
// these should still report on their own transports.

test('Apollo Client subscription over HttpLink (multipart subscriptions): appended transactions arrive once each, in chain order; unsubscribing ends the request, on the server too', TEST, async (t) => {
  const sdl = await servedSDL();
  const requests = [];
  const client = makeHttpClient(gatewayURL(), sdl, { fetch: recordingFetch(requests) });
  const live = recorder();
  const sub = client.subscribe({ query: apolloGql(LIVE_SUBSCRIPTION), variables: { after: await headCursor() } }).subscribe(live);
  try {
    const appended = await appendTransactions(3);
    await live.until((ev) => {
      const bad = ev.find((r) => r.error);
      if (bad) throw new Error(`Apollo's result: ${bad.error}`);
      return hasAll(appended)(ev.map((r) => r.data.transactions));
    }, 'the appended transactions');
    assert.deepEqual(live.events.map((r) => fromEdge(r.data.transactions)), appended.map(fromAppended), 'each once, in chain order');

    assert.equal(requests.length, 1);
    assert.equal(requests[0].method, 'POST');
    assert.match(requests[0].headers.accept, /multipart\/mixed;\s*boundary=graphql;\s*subscriptionSpec=1\.0/);
    assert.equal(requests[0].status, 200);
    assert.equal(mediaType(requests[0].contentType).type, 'multipart/mixed');

    const open = await openSubscriptions();
    sub.unsubscribe();
    assert.equal(requests[0].signal.aborted, true, 'unsubscribing aborts the request');
    await withDeadline(requests[0].done, 'the response stream to be dropped');
    await subscriptionsDropTo(open - 1, 'the subscription to end on the server');
    assert.equal(live.state.failed, false, `no error: ${live.state.error}`);
    t.diagnostic(`Apollo's Accept: ${requests[0].headers.accept}; answered ${requests[0].contentType}`);
  } finally {
    sub.unsubscribe();
    client.stop();
  }
});

test('multipart subscriptions on the wire: each part `{"payload": ExecutionResult}` (or a `{}` heartbeat), one per appended transaction, in chain order', TEST, async (t) => {
  const stream = await openMultipart(graphqlURL(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json' },
    body: JSON.stringify({ query: LIVE_SUBSCRIPTION, variables: { after: await headCursor() } }),
  });
  try {
    const appended = await appendTransactions(3);
    const payloads = (parts) => parts.filter((p) => 'payload' in p).map((p) => p.payload);
    await stream.until((parts) => hasAll(appended)(payloads(parts).map(edgeOf)), 'the appended transactions');
    for (const p of stream.parts) {
      const keys = Object.keys(p);
      assert.ok(keys.length === 0 || (keys.length === 1 && keys[0] === 'payload'), `a part is {"payload": …} or {}: ${JSON.stringify(p).slice(0, 300)}`);
    }
    for (const r of payloads(stream.parts)) {
      assert.deepEqual(Object.keys(r).filter((k) => !['data', 'errors', 'extensions'].includes(k)), [], JSON.stringify(r).slice(0, 300));
    }
    assert.deepEqual(payloads(stream.parts).map((r) => fromEdge(edgeOf(r))), appended.map(fromAppended), 'each once, in chain order');
    const open = await openSubscriptions();
    stream.abort();
    await subscriptionsDropTo(open - 1, 'the closed stream\'s subscription to end on the server');
    t.diagnostic(`${stream.res.headers.get('content-type')}; ${stream.parts.length} parts, ${stream.parts.filter((p) => !('payload' in p)).length} heartbeats`);
  } finally {
    stream.abort();
  }
});
