// The GraphQL-over-HTTP server audit of graphql-http (the specification's
// MUST and SHOULD rules, https://graphql.github.io/graphql-over-http/draft/)
// against the running gateway. Every audit must be ok: a SHOULD the gateway
// does not meet ("warn") fails as surely as a MUST ("error"), so a change
// that loses conformance cannot pass unnoticed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverAudits } from 'graphql-http';
import { gatewayURL } from '../lib/env.mjs';

test('graphql-http server audit: every MUST and SHOULD is ok', async () => {
  const url = `${gatewayURL()}/graphql`;
  const audits = serverAudits({ url });
  const results = [];
  for (const audit of audits) {
    // One at a time: the results stay readable in the gateway's log.
    results.push(await audit.fn());
  }
  const failing = [];
  for (const r of results) {
    if (r.status === 'ok') continue;
    let body = '';
    try {
      body = r.response ? (await r.response.text()).slice(0, 300) : '';
    } catch {
      // the body was read by the audit already
    }
    failing.push(`${r.status.toUpperCase()} ${r.id} ${r.name}: ${r.reason}${body ? `\n    body: ${body}` : ''}`);
  }
  const ok = results.length - failing.length;
  console.log(`graphql-http audit: ${ok}/${results.length} ok`);
  assert.ok(results.length > 0, 'graphql-http returned no audits');
  assert.equal(failing.length, 0, `${failing.length} audits not ok:\n${failing.join('\n')}`);
});
