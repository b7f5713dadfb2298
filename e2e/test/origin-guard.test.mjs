// The detector behind the playground's "every request stays on the
// gateway's origin" check must itself catch other origins, both as a
// function and in a real browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { foreignRequests, requestOrigin, guardContext } from '../lib/origin-guard.mjs';
import { launch } from '../lib/browser.mjs';

test('foreignRequests flags every other origin and nothing else', () => {
  const own = 'http://127.0.0.1:8080';
  const same = [
    'http://127.0.0.1:8080/',
    'http://127.0.0.1:8080/playground/graphiql.min.abc.js',
    'http://127.0.0.1:8080/graphql?query=%7B__typename%7D',
    'data:font/woff2;base64,AAAA',
    'blob:http://127.0.0.1:8080/0d1c6a2e',
    'about:blank',
  ];
  const foreign = [
    'https://unpkg.com/graphiql/graphiql.min.js',
    'https://fonts.googleapis.com/css?family=Roboto',
    'http://127.0.0.1:8081/graphql', // another port
    'https://127.0.0.1:8080/', // another scheme
    'http://localhost:8080/', // another host name for the same socket
    'ws://127.0.0.1:8080/graphql', // a WebSocket is its own origin
    'not a url',
  ];
  assert.deepEqual(foreignRequests(same, own), []);
  assert.deepEqual(foreignRequests([...same, ...foreign], own), foreign);
  assert.equal(requestOrigin('data:text/plain,x'), null);
  assert.equal(requestOrigin('http://127.0.0.1:8080/a?b'), 'http://127.0.0.1:8080');
});

function serve(handler) {
  return new Promise((resolve) => {
    const hits = [];
    const server = createServer((req, res) => {
      hits.push(req.url);
      handler(req, res);
    });
    server.listen(0, '127.0.0.1', () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}`, hits, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

test('in Chromium, a page that requests another origin is caught and the request never leaves', async () => {
  // "Another origin" is a second loopback port: a CDN stand-in that must
  // receive nothing because the guard aborts the request in the browser.
  const cdn = await serve((req, res) => res.end('window.fromCDN = true;'));
  const page = (body) => (req, res) => {
    if (req.url === '/app.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end('window.own = true;');
    if (req.url === '/favicon.ico') return res.writeHead(204).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  };
  const dirty = await serve(page(`<!doctype html><html><head>
    <link rel="stylesheet" href="${cdn.url}/style.css">
    <script src="/app.js"></script>
    <script src="${cdn.url}/lib.js"></script>
  </head><body><img src="${cdn.url}/pixel.png">
  <script>fetch('${cdn.url}/beacon', {mode: 'no-cors'}).catch(() => {});</script></body></html>`));
  const clean = await serve(page(`<!doctype html><html><head><script src="/app.js"></script>
    <link rel="icon" href="data:,"></head><body><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></body></html>`));
  try {
    const browser = await launch();
    try {
      const guard = await guardContext(browser.context, dirty.url);
      const tab = await browser.context.newPage();
      await tab.goto(dirty.url + '/', { waitUntil: 'load' });
      await tab.waitForFunction(() => window.own === true);
      await tab.waitForTimeout(300); // let the fetch beacon be attempted
      const caught = guard.foreign().map((u) => new URL(u).pathname).sort();
      assert.deepEqual(caught, ['/beacon', '/lib.js', '/pixel.png', '/style.css']);
      assert.equal(await tab.evaluate(() => window.fromCDN === true), false);
      assert.deepEqual(cdn.hits, [], 'an aborted request reached the other origin');
    } finally {
      await browser.close();
    }

    const browser2 = await launch();
    try {
      const guard = await guardContext(browser2.context, clean.url);
      const tab = await browser2.context.newPage();
      await tab.goto(clean.url + '/', { waitUntil: 'load' });
      await tab.waitForFunction(() => window.own === true);
      assert.deepEqual(guard.foreign(), []);
      assert.ok(guard.all().some((u) => u.endsWith('/app.js')), "the recorder saw the page's own requests");
      assert.deepEqual(guard.failures(), []);
    } finally {
      await browser2.close();
    }
  } finally {
    await Promise.all([cdn.close(), dirty.close(), clean.close()]);
  }
});
