// Detects a page that reaches beyond its own origin: a CDN script, a web
// font, an analytics beacon. The playground must work offline, so every
// request it makes has to go to the gateway that served it.

// Schemes that are not network requests to anyone (inline data, the page
// itself); anything else counts.
const LOCAL_SCHEMES = new Set(['data:', 'blob:', 'about:']);

/** The origin of url, or null for a scheme that makes no network request. */
export function requestOrigin(url) {
  const u = new URL(url);
  if (LOCAL_SCHEMES.has(u.protocol)) return null;
  return u.origin;
}

/**
 * The URLs among urls that go to another origin than origin. Scheme, host
 * and port all count: http://127.0.0.1:8080 and http://localhost:8080 are
 * two origins, as the browser sees them. A URL that does not parse counts
 * as foreign.
 */
export function foreignRequests(urls, origin) {
  const own = new URL(origin).origin;
  return urls.filter((url) => {
    let o;
    try {
      o = requestOrigin(url);
    } catch {
      return true;
    }
    return o !== null && o !== own;
  });
}

/**
 * The WebSocket origin of a page's own origin: ws://host:port for
 * http://host:port, wss://host:port for https://host:port (the socket a
 * page opens to its own server, which CSP Level 3's 'self' allows). It is
 * still another origin than the page's: foreignRequests lists it, and a
 * test that expects a same-server WebSocket filters it out by this value.
 */
export function webSocketOrigin(origin) {
  const u = new URL(origin);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${origin} is not an http(s) origin`);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.origin;
}

/**
 * Records every request a browser context makes (pages, workers,
 * WebSockets) and aborts those to other origins before they leave the
 * machine. Returns the recorder: all() every URL seen, foreign() those
 * beyond origin, failures() same-origin requests that failed or answered
 * an HTTP error.
 */
export async function guardContext(context, origin) {
  const seen = [];
  const failures = [];
  const own = new URL(origin).origin;
  const watchPage = (page) => {
    page.on('websocket', (ws) => seen.push(ws.url()));
  };
  context.pages().forEach(watchPage);
  context.on('page', watchPage);
  context.on('request', (req) => seen.push(req.url()));
  context.on('requestfailed', (req) => {
    if (requestOrigin(req.url()) === own) failures.push(`${req.url()}: ${req.failure()?.errorText}`);
  });
  context.on('response', (res) => {
    if (res.status() >= 400) failures.push(`${res.url()}: HTTP ${res.status()}`);
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (foreignRequests([url], own).length > 0) {
      seen.push(url); // recorded even if the request event never fires
      return route.abort('blockedbyclient');
    }
    return route.continue();
  });
  return {
    all: () => [...new Set(seen)],
    foreign: () => [...new Set(foreignRequests(seen, own))],
    failures: () => [...failures],
  };
}
