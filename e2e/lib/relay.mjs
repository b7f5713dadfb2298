// Compiles the Relay documents in e2e/relay/src with relay-compiler against
// a schema, in a temporary copy of e2e/relay (nothing is generated in the
// work tree), and runs the compiled operations with relay-runtime's store
// as an application would: an Environment whose Network POSTs to the
// gateway.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
 * each operation named after its file: NameSomethingQuery).
 */
export function compileRelay(sdl, { keep = false, sources = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-relay-'));
  try {
    cpSync(join(relayDir, 'relay.config.json'), join(dir, 'relay.config.json'));
    cpSync(join(relayDir, 'src'), join(dir, 'src'), { recursive: true });
    for (const [name, text] of Object.entries(sources)) writeFileSync(join(dir, 'src', name), text);
    mkdirSync(join(dir, '__generated__'));
    writeFileSync(join(dir, 'schema.graphql'), sdl);
    const run = spawnSync(compiler, [join(dir, 'relay.config.json')], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    if (run.error) throw run.error;
    const output = `${run.stdout}${run.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    return { code: run.status, output, artifacts: readdirSync(join(dir, '__generated__')).sort(), dir };
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
 * POSTs each operation's text and variables to /graphql, a Store over a
 * RecordSource. getDataID: undefined gives Relay's default (id alone).
 * requests counts the POSTs.
 */
export function makeRelayEnvironment(gatewayURL, { getDataID } = {}) {
  const requests = [];
  const network = Network.create(async (params, variables) => {
    requests.push({ name: params.name, variables });
    const res = await fetch(`${gatewayURL}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json;q=0.9' },
      body: JSON.stringify({ query: params.text, operationName: params.name, variables }),
    });
    const body = await res.json();
    if (!res.ok && !body.data) throw new Error(`${params.name}: HTTP ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
    return body;
  });
  const environment = new Environment({ network, store: new Store(new RecordSource()), ...(getDataID ? { getDataID } : {}) });
  return { environment, requests };
}
