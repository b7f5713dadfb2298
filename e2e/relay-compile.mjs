// Usage: node relay-compile.mjs SCHEMA_FILE
// Compiles e2e/relay/src with relay-compiler against SCHEMA_FILE (in a
// temporary directory) and exits with the compiler's status.
import { readFileSync } from 'node:fs';
import { compileRelay } from './lib/relay.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node relay-compile.mjs SCHEMA_FILE');
  process.exit(2);
}
const run = compileRelay(readFileSync(file, 'utf8'));
process.stdout.write(run.output);
console.log(`relay-compiler exit ${run.code}; ${run.artifacts.length} artifacts`);
process.exit(run.code === 0 ? 0 : 1);
