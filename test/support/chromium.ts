// Debian's Chromium driven by playwright-core, for the dashboard's browser test and its benchmark.
// Playwright's own browser download cannot work here (no network but the package registries), so the
// system's executable is launched, with the flags that keep it from calling out on its own: this
// machine's closed network refuses those connections, and Chromium stalls on them.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';

/** Where Chromium is: FEED_AGENT_CHROMIUM, else Debian's /usr/bin/chromium. */
export const CHROMIUM = process.env.FEED_AGENT_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile, removed on close. Throws, saying how to install it, when missing. */
export async function launchChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM}. Install Debian's package with "apt-get update && apt-get install -y chromium" ` +
        '(.ci/run does), or set FEED_AGENT_CHROMIUM to a Chromium executable.',
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'feed-agent-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
