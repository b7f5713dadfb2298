// Debian's Chromium driven by playwright-core: no browser download, a
// fresh profile every launch, no background traffic of its own.
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
