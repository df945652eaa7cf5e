// Debian's Chromium driven by playwright-core, for the dashboard's browser test and its benchmark.
// Playwright's own browser download cannot work here (no network but the package registries), so the
// system's executable is launched, with the flags that keep it from calling out on its own: this
// machine's closed network refuses those connections, and Chromium stalls on them.
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';

/**
 * Where Chromium is: FEED_AGENT_CHROMIUM, else `chromium` on the PATH (Debian's package puts it in
 * /usr/bin), found as the shell finds it, so that .ci/run's `command -v chromium` agrees; null: nowhere.
 */
function chromiumPath(): string | null {
  const given = process.env.FEED_AGENT_CHROMIUM;
  const candidates = given !== undefined ? [given] : (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '').map((dir) => join(dir, 'chromium'));
  return candidates.find(executable) ?? null;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

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
  const executablePath = chromiumPath();
  if (executablePath === null) {
    const where = process.env.FEED_AGENT_CHROMIUM === undefined ? 'There is no chromium on the PATH' : `FEED_AGENT_CHROMIUM (${process.env.FEED_AGENT_CHROMIUM}) is not an executable`;
    throw new Error(
      `${where}. Install Debian's package with "apt-get update && apt-get install -y chromium" ` +
        '(.ci/run does), or set FEED_AGENT_CHROMIUM to a Chromium executable.',
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'feed-agent-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
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
