// Compiles the Relay documents in e2e/relay/src with relay-compiler against
// a schema, in a temporary copy of e2e/relay (nothing is generated in the
// work tree), and runs the compiled operations with relay-runtime's store
// as an application would: an Environment whose Network POSTs to the
// gateway.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse, print, visit } from 'graphql';
import relayRuntime from 'relay-runtime';
import { e2eDir } from './env.mjs';

const { Environment, Network, RecordSource, Store } = relayRuntime;

const relayDir = join(e2eDir, 'relay');
const compiler = join(e2eDir, 'node_modules', '.bin', 'relay-compiler');

/**
 * Runs relay-compiler over e2e/relay/src against sdl. Returns its exit
 * code, its output (colours stripped) and the artifacts it generated.
 * sources adds files to src ({ 'Name.js': text }; relay-compiler wants
 * each operation named after its file: NameSomethingQuery). persist
 * (MD5, SHA1 or SHA256) compiles for persisted queries: the operations
 * carry an id and no text, and the compiler writes their texts by id to
 * persisted_queries.json in the run's directory (run.manifest).
 */
export function compileRelay(sdl, { keep = false, sources = {}, persist } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-relay-'));
  try {
    const config = JSON.parse(readFileSync(join(relayDir, 'relay.config.json'), 'utf8'));
    if (persist) {
      // relay-compiler wants the file to exist before it writes it.
      writeFileSync(join(dir, 'persisted_queries.json'), '{}');
      config.persistConfig = { file: './persisted_queries.json', algorithm: persist };
    }
    writeFileSync(join(dir, 'relay.config.json'), JSON.stringify(config, null, 2));
    cpSync(join(relayDir, 'src'), join(dir, 'src'), { recursive: true });
    for (const [name, text] of Object.entries(sources)) writeFileSync(join(dir, 'src', name), text);
    mkdirSync(join(dir, '__generated__'));
    writeFileSync(join(dir, 'schema.graphql'), sdl);
    const run = spawnSync(compiler, [join(dir, 'relay.config.json')], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    if (run.error) throw run.error;
    const output = `${run.stdout}${run.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    const manifest = persist ? join(dir, 'persisted_queries.json') : undefined;
    return { code: run.status, output, artifacts: readdirSync(join(dir, '__generated__')).sort(), dir, manifest };
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** sdl without the field fieldName of type typeName. */
export function withoutField(sdl, typeName, fieldName) {
  let removed = false;
  const doc = visit(parse(sdl), {
    ObjectTypeDefinition(node) {
      if (node.name.value !== typeName) return undefined;
      const fields = node.fields.filter((f) => f.name.value !== fieldName);
      removed = fields.length !== node.fields.length;
      return { ...node, fields };
    },
  });
  if (!removed) throw new Error(`${typeName}.${fieldName} is not in the schema`);
  return print(doc);
}

/**
 * The compiled artifact (ConcreteRequest or fragment) named name from a
 * compileRelay({ keep: true }) run: what babel-plugin-relay puts where an
 * application writes graphql`…`. relay-compiler writes ES modules
 * (`export default node`).
 */
export async function relayArtifact(run, name) {
  const generated = join(run.dir, '__generated__');
  writeFileSync(join(generated, 'package.json'), '{"type":"module"}\n');
  return (await import(pathToFileURL(join(generated, `${name}.graphql.js`)).href)).default;
}

/**
 * The getDataID the README and examples/README.md recommend: records keyed
 * by type and id, because ids here are the network's keys and a Party, a
 * ValidatorNode and an AnnounceNode can have the same one.
 */
export const typedDataID = (value, typeName) => (value.id == null ? undefined : `${typeName}:${value.id}`);

/**
 * A relay-runtime Environment over the gateway: a Network whose fetch
 * POSTs each operation's text (or, compiled for persisted queries, its id
 * as doc_id) and variables to /graphql, a Store over a
 * RecordSource. getDataID: undefined gives Relay's default (id alone).
 * requests records the POSTs (name, variables, the response body).
 */
export function makeRelayEnvironment(gatewayURL, { getDataID } = {}) {
  const requests = [];
  const network = Network.create(async (params, variables) => {
    const request = { name: params.name, variables };
    requests.push(request);
    // A persisted operation (compiled with persist) has an id and no
    // text: the README's network layer sends the id as doc_id.
    const operation = params.id != null ? { doc_id: params.id } : { query: params.text };
    const res = await fetch(`${gatewayURL}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json;q=0.9' },
      body: JSON.stringify({ ...operation, operationName: params.name, variables }),
    });
    const body = await res.json();
    request.response = body;
    if (!res.ok && !body.data) throw new Error(`${params.name}: HTTP ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
    return body;
  });
  const environment = new Environment({ network, store: new Store(new RecordSource()), ...(getDataID ? { getDataID } : {}) });
  return { environment, requests };
}
