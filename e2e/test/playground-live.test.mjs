// The playground receives live transactions: in Debian's headless Chromium,
// a subscription typed into GraphiQL runs over one WebSocket to the
// gateway's own /graphql (graphql-transport-ws, with the headers editor's
// object as the connection_init payload), and blocks appended on the sample
// service (its control route, served with `sample-upstream -control`) show
// up in the result pane one after the other, while every request stays on
// the gateway's origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchGuarded } from '../lib/browser.mjs';
import { webSocketOrigin } from '../lib/origin-guard.mjs';
import { artifactsDir, gatewayURL, upstreamURL } from '../lib/env.mjs';

const SUBSCRIPTION = 'subscription { transactions { cursor node { hash block type } } }';

// How long one appended block may take to reach the result pane before the
// test appends another (a block appended before the gateway's feed took
// its starting point is, rightly, not delivered to a subscription without a
// cursor), and how many blocks it tries.
const DELIVERY_DEADLINE_MS = 15_000;
const ATTEMPTS = 8;

/** Appends one block of one transaction on the sample service. */
async function appendBlock() {
  const res = await fetch(`${upstreamURL()}/_sample/blocks?transactions=1`, { method: 'POST' });
  const text = await res.text();
  if (!res.ok) {
    throw new Error(`POST /_sample/blocks: ${res.status} ${text.slice(0, 300)} (is the sample service started with -control?)`);
  }
  const body = JSON.parse(text);
  assert.equal(body.transactions.length, 1, `one transaction per block: ${text}`);
  const tx = body.transactions[0];
  assert.ok(tx.hash && tx.block, `appended transaction: ${text}`);
  return tx;
}

/** Resolves as promise does, or fails after ms. */
function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The result pane's text as GraphiQL's editor holds it. */
const responseText = (page) =>
  page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror?.getValue() ?? '');

/** Waits until the result pane shows hash; false after ms. */
async function paneShows(page, hash, ms) {
  try {
    await page.waitForFunction(
      (h) => (document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror?.getValue() ?? '').includes(h),
      hash,
      { timeout: ms },
    );
    return true;
  } catch (err) {
    if (err.name === 'TimeoutError') return false;
    throw err;
  }
}

/** The pane's event, checked against the appended transaction. */
async function assertEvent(page, tx) {
  const text = await responseText(page);
  const event = JSON.parse(text);
  assert.equal(event.errors, undefined, text);
  const edge = event.data.transactions;
  assert.equal(edge.node.hash, tx.hash, text);
  assert.equal(String(edge.node.block), String(tx.block), text);
  assert.equal(typeof edge.node.type, 'string', text);
  assert.ok(edge.node.type.length > 0, text);
  assert.equal(typeof edge.cursor, 'string', text);
  assert.ok(edge.cursor.length > 0, text);
  return edge;
}

test('webSocketOrigin: the ws(s) origin of a page origin', () => {
  assert.equal(webSocketOrigin('http://127.0.0.1:8080'), 'ws://127.0.0.1:8080');
  assert.equal(webSocketOrigin('https://gw.example.test/playground'), 'wss://gw.example.test');
  assert.throws(() => webSocketOrigin('ws://127.0.0.1:8080'), /not an http/);
});

test('the playground in Chromium: a subscription streams appended transactions over a same-origin WebSocket', async () => {
  const origin = gatewayURL();
  const wsURL = webSocketOrigin(origin) + '/graphql';
  mkdirSync(artifactsDir, { recursive: true });

  const { browser, guard, page, problems } = await launchGuarded(origin);
  try {
    // Every WebSocket the page opens, with the graphql-transport-ws
    // messages it sends and receives.
    const sockets = [];
    let completeSent, subscribeSent;
    const completed = new Promise((resolve) => {
      completeSent = resolve;
    });
    const subscribed = new Promise((resolve) => {
      subscribeSent = resolve;
    });
    page.on('websocket', (ws) => {
      const s = { url: ws.url(), sent: [], received: [], closed: false };
      sockets.push(s);
      const parse = (payload) => {
        try {
          return JSON.parse(payload);
        } catch {
          return { unparsed: String(payload) };
        }
      };
      ws.on('framesent', (f) => {
        const m = parse(f.payload);
        s.sent.push(m);
        if (m.type === 'complete') completeSent(m.id);
        if (m.type === 'subscribe') subscribeSent(m.id);
      });
      ws.on('framereceived', (f) => s.received.push(parse(f.payload)));
      ws.on('close', () => {
        s.closed = true;
      });
    });

    await page.goto(origin + '/', { waitUntil: 'load' });
    const editor = page.locator('.graphiql-query-editor .CodeMirror');
    await editor.waitFor();

    // A header typed into the headers editor goes into connection_init.
    await page.getByText('Headers', { exact: true }).click();
    await page.locator('.graphiql-editor-tool .CodeMirror').last().click();
    await page.keyboard.type('{"X-Playground-Test": "live"', { delay: 5 }); // the editor closes the brace

    // The subscription, typed as a person would.
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(SUBSCRIPTION, { delay: 5 });
    const typed = await page.evaluate(() => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue());
    assert.equal(typed, SUBSCRIPTION, 'the editor holds what was typed');
    await page.getByLabel(/^Prettify query/).click(); // for the screenshot
    await page.waitForFunction(() => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.lineCount() > 5);
    // GraphiQL parses the editor's text after a short debounce.
    await page.waitForFunction(
      () => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.documentAST?.definitions?.[0]?.operation === 'subscription',
    );
    await page.locator('.graphiql-execute-button').click();
    await within(subscribed, 30_000, 'subscribe message');

    // Append blocks of one transaction until one reaches the pane.
    let first = null;
    for (let i = 0; i < ATTEMPTS && !first; i++) {
      const tx = await appendBlock();
      if (await paneShows(page, tx.hash, DELIVERY_DEADLINE_MS)) first = tx;
    }
    assert.ok(first, `no appended transaction reached the result pane; it shows: ${await responseText(page)}`);
    // Transactions arrive in chain order, so the pane ends on the newest
    // appended one; the event is that transaction.
    const firstEdge = await assertEvent(page, first);

    // The same subscription goes on: the next block replaces the event.
    const next = await appendBlock();
    assert.ok(await paneShows(page, next.hash, 60_000), `the next block never arrived; the pane shows: ${await responseText(page)}`);
    const nextEdge = await assertEvent(page, next);
    assert.notEqual(nextEdge.cursor, firstEdge.cursor);
    await page.screenshot({ path: join(artifactsDir, 'playground-live.png') });

    // One WebSocket to the gateway's own /graphql, speaking
    // graphql-transport-ws: connection_init with the typed header, one
    // subscribe for the typed operation, then its events.
    assert.deepEqual(sockets.map((s) => s.url), [wsURL]);
    const [ws] = sockets;
    assert.equal(ws.sent[0]?.type, 'connection_init', JSON.stringify(ws.sent));
    assert.deepEqual(ws.sent[0].payload, { 'X-Playground-Test': 'live' });
    assert.equal(ws.received[0]?.type, 'connection_ack', JSON.stringify(ws.received[0]));
    const subscribes = ws.sent.filter((m) => m.type === 'subscribe');
    assert.equal(subscribes.length, 1, JSON.stringify(ws.sent));
    assert.equal(subscribes[0].payload.query.replace(/\s+/g, ''), SUBSCRIPTION.replace(/\s+/g, ''));
    const events = ws.received.filter((m) => m.type === 'next');
    assert.ok(events.every((m) => m.id === subscribes[0].id), 'events for the one subscription');
    const hashes = events.map((m) => m.payload.data.transactions.node.hash);
    assert.equal(new Set(hashes).size, hashes.length, `no transaction twice: ${hashes}`);
    assert.deepEqual(hashes.slice(-2), [first.hash, next.hash], 'the last two events are the two blocks, in order');

    // The stop button ends the subscription: graphql-ws sends complete.
    await page.locator('.graphiql-execute-button').click();
    await page.waitForFunction(
      () => document.querySelector('.graphiql-execute-button')?.getAttribute('aria-label')?.startsWith('Execute'),
    );
    assert.equal(await within(completed, 30_000, 'complete message'), subscribes[0].id, 'complete for the subscription');

    // --- Every request stayed on the gateway's origin ---------------------
    // (its WebSocket, on the same host and port, is the one expected above)
    assert.deepEqual(guard.foreign().filter((u) => u !== wsURL), [], 'requests to other origins');
    assert.deepEqual(guard.failures(), [], 'failed requests');
    assert.ok(guard.all().some((u) => u.startsWith(origin + '/playground/graphql-ws.min.')), 'graphql-ws came from the gateway');
    assert.deepEqual(problems, []);
  } catch (err) {
    await page.screenshot({ path: join(artifactsDir, 'playground-live-failure.png') }).catch(() => {});
    throw err;
  } finally {
    await browser.close();
  }
});
