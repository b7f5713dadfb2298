// Trusted documents with the clients' own tooling (README, Trusted
// documents): a gateway of the test's own runs with TRUSTED_DOCUMENTS_ONLY
// and a manifest, in Relay's format as relay-compiler writes it, or in
// Apollo's with the texts Apollo Client sends; each client runs its
// operations by id and gets what the plain gateway answers for their
// text, and anything else is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import relayRuntime from 'relay-runtime';
import { ApolloClient, ApolloLink, HttpLink, gql as apolloGql } from '@apollo/client/core';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { getMainDefinition } from '@apollo/client/utilities';
import { print } from 'graphql';
import { compileRelay, makeRelayEnvironment, relayArtifact } from '../lib/relay.mjs';
import { makeCache } from '../lib/apollo.mjs';
import { gatewayURL, gql, servedSDL } from '../lib/env.mjs';
import { gatewayBin, startGateway } from '../lib/gateway.mjs';

const { fetchQuery } = relayRuntime;
const skip = gatewayBin() ? false : 'E2E_GATEWAY_BIN is not set (scripts/check-e2e.sh sets it)';
const sha256 = (text) => createHash('sha256').update(text).digest('hex');

let sdl;
let dir;
const gateways = [];
before(async () => {
  sdl = await servedSDL();
  dir = mkdtempSync(join(tmpdir(), 'e2e-trusted-'));
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function trustedGateway(manifest) {
  const g = await startGateway(['-persisted-documents', manifest, '-trusted-documents-only', '-log-format', 'text']);
  gateways.push(g);
  assert.match(g.log(), /persisted documents loaded/);
  return g;
}

/** POSTs a request body to a gateway; returns the response body. */
async function post(url, body) {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return res.json();
}

/** The value of a metric's series with the given label on a gateway's /metrics. */
async function metric(url, name, label, value) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${label}="${value}"}`));
  return line ? Number(line.split(' ').at(-1)) : undefined;
}

function assertRefused(body, says) {
  assert.equal(body.data, undefined, JSON.stringify(body));
  assert.equal(body.errors?.length, 1, JSON.stringify(body));
  assert.equal(body.errors[0].extensions.code, 'BAD_USER_INPUT');
  assert.match(body.errors[0].message, says);
}

test('Relay: relay-compiler\'s persisted_queries.json, operations sent as doc_id', { skip }, async () => {
  const run = compileRelay(sdl, { keep: true, persist: 'SHA256' });
  try {
    assert.equal(run.code, 0, run.output);
    const manifest = JSON.parse(readFileSync(run.manifest, 'utf8'));
    assert.ok(Object.keys(manifest).length >= 5, `relay-compiler wrote ${Object.keys(manifest).length} documents`);
    const g = await trustedGateway(run.manifest);
    assert.match(g.log(), new RegExp(`format=relay documents=${Object.keys(manifest).length} trusted_only=true`));

    const request = await relayArtifact(run, 'AssetListQuery');
    assert.equal(request.params.text, null, 'a persisted operation carries no text');
    assert.ok(manifest[request.params.id], 'its id is in the manifest');
    const { environment, requests } = makeRelayEnvironment(g.url);
    const variables = { count: 7, cursor: null };
    await fetchQuery(environment, request, variables).toPromise();
    assert.equal(requests.length, 1);
    assert.equal(requests[0].response.errors, undefined, JSON.stringify(requests[0].response));
    // What the gateway answers for the manifest's text sent in full (a
    // manifest document's text is trusted too; cursors are signed with
    // each gateway's own key, so not the plain gateway's answer), and the
    // plain gateway's assets.
    assert.deepEqual(requests[0].response, await post(g.url, { query: manifest[request.params.id], variables }));
    const plainAssets = await gql(manifest[request.params.id], variables);
    assert.deepEqual(
      requests[0].response.data.assets.edges.map((e) => e.node),
      plainAssets.assets.edges.map((e) => e.node),
    );
    assert.equal(requests[0].response.data.assets.edges.length, 7);

    // Over GET, with documentId and GraphQL over HTTP's sha256: identifier.
    const q = new URLSearchParams({ documentId: `sha256:${request.params.id}`, variables: JSON.stringify(variables) });
    const byGet = await (await fetch(`${g.url}/graphql?${q}`, { headers: { accept: 'application/json' } })).json();
    assert.deepEqual(byGet, requests[0].response);

    // The compiled text of an operation not in the manifest is refused.
    assertRefused(await post(g.url, { query: '{ assets(first: 1) { edges { cursor } } }' }), /only trusted documents are accepted/);
    assert.equal(await metric(g.url, 'gateway_persisted_documents_served_total', 'source', 'manifest'), 2);
    assert.equal(await metric(g.url, 'gateway_documents_refused_total', 'reason', 'untrusted'), 1);
  } finally {
    rmSync(run.dir, { recursive: true, force: true });
  }
});

// The operations of an Apollo app, and a query it does not list.
const ASSETS = apolloGql`query TrustedAssetList($first: Int!) { assets(first: $first) { edges { node { id details { symbol decimals } } } } }`;
const DELEGATIONS = apolloGql`query TrustedDelegations { delegations(first: 4) { edges { node { nodeId epochSeq amount party { id } } } } }`;
const UNLISTED = apolloGql`query NotInTheManifest { assets(first: 2) { edges { cursor } } }`;

test('Apollo: a persisted query manifest, sent by Apollo Client\'s PersistedQueryLink', { skip }, async () => {
  // The manifest as generate-persisted-query-manifest writes it: each
  // operation as Apollo Client sends it (its cache's transforms applied,
  // __typename added), id the SHA-256 of that body. The texts are taken
  // where the client hands them to its HTTP link, against the plain
  // gateway.
  const sent = new Map();
  const capture = new ApolloLink((operation, forward) => {
    sent.set(operation.operationName, print(operation.query));
    return forward(operation);
  });
  const plain = new ApolloClient({ link: ApolloLink.from([capture, new HttpLink({ uri: `${gatewayURL()}/graphql` })]), cache: makeCache(sdl) });
  const want = {
    assets: (await plain.query({ query: ASSETS, variables: { first: 3 } })).data,
    delegations: (await plain.query({ query: DELEGATIONS })).data,
  };
  assert.equal(want.assets.assets.edges.length, 3);
  assert.match(sent.get('TrustedAssetList'), /__typename/);
  const operations = [...sent].map(([name, body]) => ({ id: sha256(body), name, type: 'query', body }));
  const file = join(dir, 'persisted-query-manifest.json');
  writeFileSync(file, JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations }, null, 2));
  const g = await trustedGateway(file);
  assert.match(g.log(), /format=apollo documents=2 trusted_only=true/);

  // A client whose link takes the ids from the manifest (what
  // @apollo/persisted-query-lists' generatePersistedQueryIdsFromManifest
  // does): GETs with the id alone, never the text.
  const ids = Object.fromEntries(operations.map((o) => [o.name, o.id]));
  const urls = [];
  const fetchSeen = (url, init) => {
    urls.push(String(url));
    return fetch(url, init);
  };
  const listed = new ApolloClient({
    link: ApolloLink.from([
      new PersistedQueryLink({ generateHash: (doc) => ids[getMainDefinition(doc).name.value], useGETForHashedQueries: true, retry: () => false }),
      new HttpLink({ uri: `${g.url}/graphql`, fetch: fetchSeen }),
    ]),
    cache: makeCache(sdl),
  });
  assert.deepEqual((await listed.query({ query: ASSETS, variables: { first: 3 } })).data, want.assets);
  assert.deepEqual((await listed.query({ query: DELEGATIONS })).data, want.delegations);
  assert.equal(urls.length, 2);
  for (const u of urls) {
    const params = new URL(u).searchParams;
    assert.equal(params.get('query'), null, `sent the text: ${u}`);
    assert.match(params.get('extensions'), /"sha256Hash":"[0-9a-f]{64}"/);
  }

  // Apollo Client's default link (the SHA-256 of the text it sends) finds
  // the manifest's documents at once; an operation the manifest lacks is
  // not found, sent again with its text, and refused: nothing registered.
  const requests = [];
  const watched = new ApolloLink((operation, forward) => {
    requests.push({ name: operation.operationName, withText: operation.getContext().http?.includeQuery !== false });
    return forward(operation);
  });
  const apq = new ApolloClient({
    link: ApolloLink.from([new PersistedQueryLink({ sha256 }), watched, new HttpLink({ uri: `${g.url}/graphql` })]),
    cache: makeCache(sdl),
  });
  assert.deepEqual((await apq.query({ query: ASSETS, variables: { first: 3 } })).data, want.assets);
  assert.deepEqual(requests, [{ name: 'TrustedAssetList', withText: false }]);
  await assert.rejects(apq.query({ query: UNLISTED }), /only trusted documents are accepted/);
  assert.deepEqual(requests.slice(1), [
    { name: 'NotInTheManifest', withText: false },
    { name: 'NotInTheManifest', withText: true },
  ]);

  assert.equal(await metric(g.url, 'gateway_persisted_documents_served_total', 'source', 'manifest'), 3);
  assert.equal(await metric(g.url, 'gateway_documents_refused_total', 'reason', 'apq_registration'), 1);
});
