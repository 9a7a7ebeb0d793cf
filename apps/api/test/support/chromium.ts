import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/*
 * Debian's Chromium for the browser tests (`apt-get install -y chromium`; .ci/run installs it).
 * Where it is absent the browser tests skip, saying so.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Says, once per test file, that its browser tests will not run here. */
export function warnIfNoChromium(file: string): void {
  if (!hasChromium)
    console.warn(`${file}: ${CHROMIUM} is absent, so the browser tests are skipped (apt-get install -y chromium)`);
}

/**
 * Headless Chromium, quiet (no first-run, sync or component traffic). `hosts` resolve to this
 * machine (`--host-resolver-rules`), so an account host like acme.test reaches the test server.
 */
export function launchChromium(hosts: string[] = []): Promise<Browser> {
  const rules = hosts.map((h) => `MAP ${h} 127.0.0.1`).join(', ');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...(rules ? [`--host-resolver-rules=${rules}`] : []),
    ],
  });
}
