// What the live tests share, whatever client they drive: blocks appended
// through the sample service's control route (sample-upstream -control),
// the cursor a subscription resumes from, the gateway's count of open
// subscriptions, and waiting for events under a deadline (a test never
// sleeps to let something happen: it waits for the event, or fails saying
// what did not come).
import { gatewayURL, upstreamURL, gql } from './env.mjs';

/** How long a test waits for any one event before failing. */
export const DEADLINE_MS = 30_000;

/** Chain order: by block, then by index in the block. */
export function chainOrder(a, b) {
  const ba = BigInt(a.block);
  const bb = BigInt(b.block);
  if (ba !== bb) return ba < bb ? -1 : 1;
  return a.index - b.index;
}

/** Appends one block upstream; returns its transactions. */
export async function appendBlock() {
  const res = await fetch(`${upstreamURL()}/_sample/blocks`, { method: 'POST' });
  const text = await res.text();
  if (!res.ok) {
    throw new Error(`POST /_sample/blocks: ${res.status} ${text.slice(0, 300)} (the sample service must run with -control)`);
  }
  return JSON.parse(text).transactions;
}

/**
 * Appends blocks until they hold at least n transactions (at most 20
 * blocks); returns every appended transaction in chain order.
 */
export async function appendTransactions(n) {
  const txs = [];
  for (let i = 0; i < 20 && txs.length < n; i++) txs.push(...(await appendBlock()));
  if (txs.length < n) throw new Error(`20 blocks held ${txs.length} transactions, fewer than ${n}`);
  return txs.sort(chainOrder);
}

/**
 * The cursor of the newest transaction now. A subscription with
 * `after:` it receives exactly what is appended from then on, however
 * late the gateway starts it: no race between subscribing and appending.
 */
export async function headCursor() {
  const data = await gql('{ transactions(first: 1) { edges { cursor } } }');
  return data.transactions.edges[0].cursor;
}

/** The live subscription every transport test uses: every new transaction. */
export const LIVE_SUBSCRIPTION = `subscription Live($after: String) {
  transactions(after: $after) { cursor node { hash block index type } }
}`;

// A delivered edge, or an appended transaction, as comparisons see them.
export const fromEdge = (edge) => ({ hash: edge.node.hash, block: edge.node.block, index: edge.node.index, type: edge.node.type });
export const fromAppended = (tx) => ({ hash: tx.hash, block: tx.block, index: tx.index, type: tx.type });

/**
 * gateway_live_subscriptions from the gateway's /metrics: the
 * subscriptions open in the process, whatever their transport. It is how
 * a test sees that the server, not only the client, ended one.
 */
export async function openSubscriptions() {
  const res = await fetch(`${gatewayURL()}/metrics`);
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /metrics: ${res.status} ${text.slice(0, 200)}`);
  const m = text.match(/^gateway_live_subscriptions (\S+)$/m);
  if (!m) throw new Error('/metrics has no gateway_live_subscriptions');
  return Number(m[1]);
}

/**
 * Resolves once check() (async) returns a truthy value, which it
 * resolves with; rejects after ms. For state the gateway only shows when
 * asked (metrics): it is asked again every 50 ms until then.
 */
export async function waitFor(check, what, ms = DEADLINE_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    last = await check();
    if (last) return last;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the gateway holds at most n open subscriptions; returns the count. */
export async function subscriptionsDropTo(n, what) {
  let seen;
  await waitFor(async () => (seen = await openSubscriptions()) <= n, `${what} (gateway_live_subscriptions at most ${n}; last ${seen})`);
  return seen;
}

/** Rejects with an error naming what after ms; else settles as promise. */
export function withDeadline(promise, what, ms = DEADLINE_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A sink (next, error, complete: graphql-ws's and graphql-sse's clients
 * call these, and an Observable's subscribe takes it) that records what
 * arrives. until(pred, what) resolves with the events once pred(events)
 * holds, rejects on an error or after the deadline; settled(what)
 * resolves once the operation ended, either way, with { events, error,
 * completed }.
 */
export function recorder(map = (v) => v) {
  const events = [];
  const state = { error: undefined, failed: false, completed: false };
  const waiters = new Set();
  const wake = () => [...waiters].forEach((w) => w());
  const wait = (ready, what, ms) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`timed out after ${ms} ms waiting for ${what}; got ${JSON.stringify(events).slice(0, 2000)}`)), ms);
    const finish = (err, value) => {
      clearTimeout(timer);
      waiters.delete(check);
      if (err) reject(err);
      else resolve(value);
    };
    const check = () => {
      try {
        const r = ready();
        if (r) finish(r.error, r.value);
      } catch (err) {
        finish(err);
      }
    };
    waiters.add(check);
    check();
  });
  return {
    events,
    state,
    next(v) {
      events.push(map(v));
      wake();
    },
    error(err) {
      state.failed = true;
      state.error = err;
      wake();
    },
    complete() {
      state.completed = true;
      wake();
    },
    until(pred, what, ms = DEADLINE_MS) {
      return wait(() => {
        if (state.failed) return { error: state.error instanceof Error ? state.error : new Error(`${what}: the operation failed: ${JSON.stringify(state.error)}`) };
        if (pred(events)) return { value: events };
        if (state.completed) return { error: new Error(`${what}: the operation completed first; got ${JSON.stringify(events).slice(0, 2000)}`) };
        return null;
      }, what, ms);
    },
    settled(what, ms = DEADLINE_MS) {
      return wait(() => (state.failed || state.completed ? { value: { events, error: state.error, completed: state.completed } } : null), what, ms);
    },
  };
}

/**
 * A fetch that records each request (method, URL, headers, body) and its
 * response's status and Content-Type, and keeps the request's signal: a
 * test reads what a client really sent, and sees it abort its request.
 * Each entry's `done` resolves once the client has read the response
 * body to its end or dropped it (a streamed response fully handed over).
 * log is an array, or a recorder() (whose until() waits for requests).
 */
export function recordingFetch(log) {
  return async (input, init = {}) => {
    const req = new Request(input, init);
    let bodyDone;
    const entry = {
      method: req.method,
      url: req.url,
      headers: Object.fromEntries(req.headers),
      body: typeof init.body === 'string' ? init.body : undefined,
      signal: init.signal,
      done: new Promise((resolve) => {
        bodyDone = resolve;
      }),
    };
    if (log.next) log.next(entry);
    else log.push(entry);
    let res;
    try {
      res = await fetch(input, init);
    } catch (err) {
      entry.error = err;
      bodyDone();
      throw err;
    }
    entry.status = res.status;
    entry.contentType = res.headers.get('content-type');
    if (!res.body) {
      bodyDone();
      return res;
    }
    const reader = res.body.getReader();
    const body = new ReadableStream({
      async pull(ctrl) {
        try {
          const { value, done } = await reader.read();
          if (done) {
            ctrl.close();
            bodyDone();
          } else {
            ctrl.enqueue(value);
          }
        } catch (err) {
          ctrl.error(err);
          bodyDone();
        }
      },
      cancel(reason) {
        bodyDone();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
