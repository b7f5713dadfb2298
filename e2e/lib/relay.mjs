// Compiles the Relay documents in e2e/relay/src with relay-compiler against
// a schema, in a temporary copy of e2e/relay (nothing is generated in the
// work tree).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, print, visit } from 'graphql';
import { e2eDir } from './env.mjs';

const relayDir = join(e2eDir, 'relay');
const compiler = join(e2eDir, 'node_modules', '.bin', 'relay-compiler');

/**
 * Runs relay-compiler over e2e/relay/src against sdl. Returns its exit
 * code, its output (colours stripped) and the artifacts it generated.
 */
export function compileRelay(sdl, { keep = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-relay-'));
  try {
    cpSync(join(relayDir, 'relay.config.json'), join(dir, 'relay.config.json'));
    cpSync(join(relayDir, 'src'), join(dir, 'src'), { recursive: true });
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
