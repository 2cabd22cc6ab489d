import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where Debian's chromium lives; .ci/run installs it with apt when missing. */
export const CHROMIUM_PATH = process.env.CHATLOAD_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or undefined when they can. They skip only when chromium is absent AND this is
 * not CI: in CI a missing browser is a failure, not a skip.
 */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  if (process.env.CI) return undefined;
  return `${CHROMIUM_PATH} not found (install Debian's chromium, e.g. apt-get install -y chromium); skipped outside CI`;
}

/**
 * A headless Chromium with no background network. playwright-core gives every launch() a fresh temporary profile (it
 * refuses --user-data-dir here) and removes it on close().
 */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: 30_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}
