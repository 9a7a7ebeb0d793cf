import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';

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

/** A synthetic camera (a moving test pattern) and microphone (a tone), allowed without asking. */
export const FAKE_MEDIA_DEVICES = ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'];

/**
 * Headless Chromium, quiet (no first-run, sync or component traffic). `hosts` resolve to this
 * machine (`--host-resolver-rules`), so an account host like acme.test reaches the test server.
 */
export function launchChromium(hosts: string[] = [], extraArgs: string[] = []): Promise<Browser> {
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
      ...extraArgs,
    ],
  });
}

const axeSource: string = createRequire(import.meta.url)('axe-core').source;

/** A rule axe-core found broken on a page: its id, how severe (minor … critical) and what it asks. */
export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
}

/**
 * What axe-core finds on the page as it stands. axe is injected as a script, which a page's own
 * policy rightly forbids: open the page in a context made with `bypassCSP: true`.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: axeSource });
  const found: unknown = await page.evaluate(
    'axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help })))',
  );
  return Array.isArray(found) ? found : [];
}

/**
 * A screenshot for people to look at (the tests' temp folder). Chromium now and then refuses one
 * capture ("Unable to capture screenshot") and takes the same one a moment later: asked again
 * once, so a browser's hiccup does not fail a test whose assertions passed.
 */
export async function screenshot<O>(target: { screenshot(options?: O): Promise<unknown> }, options: O): Promise<void> {
  try {
    await target.screenshot(options);
  } catch (e) {
    if (!(e instanceof Error && e.message.includes('Unable to capture screenshot'))) throw e;
    await new Promise((r) => setTimeout(r, 250));
    await target.screenshot(options);
  }
}
