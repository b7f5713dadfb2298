// Where the gateway under test and its sample data service run, and small
// HTTP helpers. scripts/check-e2e.sh starts both and sets the variables.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const e2eDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const repoDir = join(e2eDir, '..');
export const artifactsDir = join(e2eDir, 'artifacts');

function required(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set: run scripts/check-e2e.sh, which starts the sample service and the gateway and sets it`);
  }
  return v.replace(/\/+$/, '');
}

/** Base URL of the gateway under test, e.g. http://127.0.0.1:8080 */
export const gatewayURL = () => required('E2E_GATEWAY_URL');
/** Base URL of the sample data service's data node (the explorer is under /rest). */
export const upstreamURL = () => required('E2E_UPSTREAM_URL');

/** GETs a JSON document, failing on any non-2xx status. */
export async function getJSON(url) {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Runs a GraphQL operation on the gateway; any error in the response fails. */
export async function gql(query, variables = {}) {
  const res = await fetch(`${gatewayURL()}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (!res.ok || body.errors) {
    throw new Error(`GraphQL ${res.status}: ${JSON.stringify(body.errors ?? body).slice(0, 1000)}`);
  }
  return body.data;
}

/** The SDL the gateway serves at /schema.graphql. */
export async function servedSDL() {
  const res = await fetch(`${gatewayURL()}/schema.graphql`);
  if (!res.ok) throw new Error(`GET /schema.graphql: ${res.status}`);
  return res.text();
}

/** The snapshot committed at schema/schema.graphql. */
export const committedSDL = () => readFileSync(join(repoDir, 'schema', 'schema.graphql'), 'utf8');

/**
 * Every row of a data-node list, in the data node's order, from one
 * request of up to 5000 rows (the data node's page maximum). Fails if the
 * list is longer: tests pick lists that fit.
 */
export async function dataNodeList(path, params, key) {
  const q = new URLSearchParams({ ...params, 'pagination.first': '5000' });
  const body = await getJSON(`${upstreamURL()}${path}?${q}`);
  const conn = body[key];
  if (conn.pageInfo?.hasNextPage) throw new Error(`${path} ${q}: more than 5000 rows`);
  return conn.edges.map((e) => e.node);
}

/** Every transaction the explorer lists for these filters, newest first. */
export async function explorerList(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ first: '100000', ...params })) {
    for (const item of [].concat(v)) q.append(k, item);
  }
  const body = await getJSON(`${upstreamURL()}/rest/transactions?${q}`);
  return body.transactions;
}
