// The playground in Debian's headless Chromium, against the gateway over
// the sample service: it loads with every request on the gateway's own
// origin, a query typed into the editor runs and its result appears, and
// the docs pane lists the schema's types with their descriptions. The
// larger responses reach the browser compressed (zstd, which current
// Chromium offers, or gzip), and it decodes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, isIntrospectionType, isSpecifiedScalarType } from 'graphql';
import { launchGuarded } from '../lib/browser.mjs';
import { artifactsDir, gatewayURL, dataNodeList, servedSDL } from '../lib/env.mjs';

// The first sentence of a description as the docs pane shows it: markdown
// code spans lose their backticks, whitespace collapses.
function shownText(description) {
  const plain = description.replace(/`([^`]*)`/g, '$1').replace(/\s+/g, ' ').trim();
  const end = plain.search(/[.:](\s|$)/);
  return end > 0 ? plain.slice(0, end + 1) : plain;
}

const squash = (s) => s.replace(/\s+/g, ' ');

test('the playground in Chromium: same origin only, a typed query runs, the docs describe the schema', async () => {
  const origin = gatewayURL();
  const schema = buildSchema(await servedSDL());
  const expectedAssets = (await dataNodeList('/api/v2/assets', {}, 'assets')).slice(0, 3);
  mkdirSync(artifactsDir, { recursive: true });

  const { browser, guard, page, problems } = await launchGuarded(origin);
  try {
    // The content coding of each /graphql response. (What the browser
    // offered is added below the level playwright reports; the gateway's
    // Go tests check that it answers only in a coding offered.)
    const pendingCodings = [];
    page.on('response', (res) => {
      if (new URL(res.url()).pathname !== '/graphql') return;
      pendingCodings.push(res.allHeaders().then((h) => h['content-encoding'] ?? 'identity'));
    });

    await page.goto(origin + '/', { waitUntil: 'load' });
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor();

    // --- A query typed into the editor runs and its result appears ------
    const query = 'query FirstAssets { assets(first: 3) { edges { node { id status details { name symbol decimals } } } } }';
    await page.locator('.graphiql-query-editor .CodeMirror').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(query, { delay: 5 });
    const typed = await page.evaluate(() => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue());
    assert.equal(typed, query, 'the editor holds what was typed');
    await page.getByLabel(/^Prettify query/).click(); // as a person would, for the screenshot
    await page.waitForFunction(() => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.lineCount() > 5);
    // GraphiQL parses the editor's text after a short debounce; run once
    // it has picked up the typed operation.
    await page.waitForFunction(() => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.operationName === 'FirstAssets');

    await page.locator('.graphiql-execute-button').click();
    const resultHandle = await page.waitForFunction(() => {
      const cm = document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror;
      const text = cm?.getValue() ?? '';
      return text.includes('"assets"') ? text : false;
    });
    const result = JSON.parse(await resultHandle.jsonValue());
    assert.equal(result.errors, undefined, JSON.stringify(result.errors));
    assert.deepEqual(
      result.data.assets.edges.map((e) => [e.node.id, e.node.status, e.node.details.symbol, e.node.details.name, e.node.details.decimals]),
      expectedAssets.map((a) => [a.id, a.status, a.details.symbol, a.details.name, a.details.decimals]),
    );
    // The values are on screen, not only in the editor's model.
    await page.locator('.graphiql-response').getByText(expectedAssets[0].details.name).first().waitFor();
    await page.screenshot({ path: join(artifactsDir, 'playground-result.png') });

    // --- The docs pane lists the schema's types with their descriptions --
    await page.getByLabel('Show Documentation Explorer').click();
    const docs = page.locator('.graphiql-doc-explorer');
    await docs.waitFor();
    await docs.getByText('All Schema Types').waitFor();
    const listed = new Set(await docs.locator('a.graphiql-doc-explorer-type-name').allInnerTexts());
    const ours = Object.values(schema.getTypeMap()).filter((t) => !isIntrospectionType(t) && !isSpecifiedScalarType(t));
    const missing = ours.map((t) => t.name).filter((n) => !listed.has(n));
    assert.deepEqual(missing, [], 'types the docs pane does not list');

    // The root query type: its description, and a field with its own.
    const queryType = schema.getQueryType();
    await docs.locator('a.graphiql-doc-explorer-type-name', { hasText: /^Query$/ }).first().click();
    await docs.locator('.graphiql-doc-explorer-title', { hasText: 'Query' }).waitFor();
    assert.ok(squash(await docs.innerText()).includes(shownText(queryType.description)), 'Query description shown');
    const transactions = queryType.getFields().transactions;
    await docs.locator('a.graphiql-doc-explorer-field-name', { hasText: /^transactions$/ }).click();
    await docs.locator('.graphiql-doc-explorer-title', { hasText: 'transactions' }).waitFor();
    const fieldText = squash(await docs.innerText());
    assert.ok(fieldText.includes(shownText(transactions.description)), 'transactions description shown');
    // An argument's description (GraphiQL hides deprecated arguments, such as cmdTypes, by default).
    assert.ok(fieldText.includes(shownText(transactions.args.find((a) => a.name === 'types').description)), 'argument description shown');

    // Types reached by navigation and by the search box, each with its
    // description: an object type, the two unions (with their members).
    await docs.locator('a.graphiql-doc-explorer-type-name', { hasText: /^TransactionConnection$/ }).first().click();
    await docs.locator('.graphiql-doc-explorer-title', { hasText: 'TransactionConnection' }).waitFor();
    assert.ok(squash(await docs.innerText()).includes(shownText(schema.getType('TransactionConnection').description)));
    // The introspection query behind the docs pane (well over 1 KiB) came
    // compressed, and the browser decoded it: the docs above are its.
    const codings = await Promise.all(pendingCodings);
    assert.ok(codings.some((c) => c === 'zstd' || c === 'gzip'), `no /graphql response was compressed: ${codings}`);
    assert.deepEqual(codings.filter((c) => !['zstd', 'gzip', 'identity'].includes(c)), [], 'unknown content codings');
    console.log(`# /graphql content codings seen: ${[...new Set(codings)].join(', ')}`);

    for (const name of ['Asset', 'Delegation', 'FundingPayment', 'Command', 'ProposalChangeKind']) {
      const type = schema.getType(name);
      // The search box looks for types from the docs' root page.
      while (await docs.locator('a.graphiql-doc-explorer-back').count()) {
        await docs.locator('a.graphiql-doc-explorer-back').click();
      }
      await docs.locator('input[data-cy="doc-explorer-input"]').fill(name);
      await docs.locator('li[data-cy="doc-explorer-option"]').filter({ hasText: new RegExp(`^${name}$`) }).click();
      await docs.locator('.graphiql-doc-explorer-title', { hasText: new RegExp(`^${name}$`) }).waitFor();
      const text = squash(await docs.innerText());
      assert.ok(text.includes(shownText(type.description)), `${name}: description "${shownText(type.description)}" not shown`);
      if (type.getTypes) {
        for (const member of type.getTypes()) assert.ok(text.includes(member.name), `${name} lists ${member.name}`);
      }
    }
    await page.screenshot({ path: join(artifactsDir, 'playground-docs.png') });

    // --- Every request stayed on the gateway's origin --------------------
    const seen = guard.all();
    assert.deepEqual(guard.foreign(), [], 'requests to other origins');
    assert.deepEqual(guard.failures(), [], 'failed requests');
    assert.ok(seen.some((u) => u.startsWith(origin + '/playground/graphiql.min.')), 'GraphiQL came from the gateway');
    assert.ok(seen.includes(origin + '/graphql'), 'operations went to the gateway');
    assert.deepEqual(problems, []);
  } catch (err) {
    await page.screenshot({ path: join(artifactsDir, 'playground-failure.png') }).catch(() => {});
    throw err;
  } finally {
    await browser.close();
  }
});
