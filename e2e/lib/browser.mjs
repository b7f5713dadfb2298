// Debian's Chromium driven by playwright-core: no browser download, a
// fresh profile every launch, no background traffic of its own.
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guardContext } from './origin-guard.mjs';

export const chromiumPath = process.env.E2E_CHROMIUM || '/usr/bin/chromium';

export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
];

/** Launches Chromium with a fresh user-data-dir; close() removes it. */
export async function launch() {
  const profile = await mkdtemp(join(tmpdir(), 'e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    viewport: { width: 1400, height: 900 },
    timeout: 60_000,
  });
  context.setDefaultTimeout(30_000);
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Launches Chromium (launch()) with the origin guard on origin
 * (guardContext) and returns its first page, recording the page's
 * uncaught errors and console errors in problems (a test expects none).
 * The caller closes browser.
 */
export async function launchGuarded(origin) {
  const browser = await launch();
  try {
    const guard = await guardContext(browser.context, origin);
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const problems = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    });
    return { browser, guard, page, problems };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
