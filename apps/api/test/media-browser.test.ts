import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSeed } from '@convo/db';
import { serve } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { diskMedia } from '../src/media/backend.ts';
import { recordingAudio } from '../src/media/extract-audio.ts';
import { openAiTranscriber } from '../src/media/openai-transcriber.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { startTranscriptWorker } from '../src/workers/transcripts.ts';
import {
  axeViolations,
  FAKE_MEDIA_DEVICES,
  hasChromium,
  launchChromium,
  screenshot,
  warnIfNoChromium,
} from './support/chromium.ts';
import { listen } from './support/events.ts';
import { auth, call, type Harness, openHarness, until } from './support/harness.ts';
import { engine, json } from './support/speech-engine.ts';

/*
 * Recording on the page as a person does it, in Chromium with a synthetic camera and microphone:
 * with JavaScript, "Record video" and "Record audio" (the preview and devices, then 3-2-1), stop after
 * about 3 s, post; "Record screen" with the camera in a bubble on a canvas; with JavaScript
 * off, a recording chosen in the file input. The API then shows the kind and the duration the
 * server measured, and the page's player plays what was sent.
 */

warnIfNoChromium('media-browser.test.ts');

const TOKEN = 'media-browser-token-0123456789';
const SHOTS = join(tmpdir(), 'convo-pages');
const FIXTURE = new URL('./fixtures/media/video-3s-fragmented.mp4', import.meta.url).pathname;

let h: Harness;
let server: ReturnType<typeof serve>;
let site: string;
let browser: Browser;
let mediaDir: string;
let speech: Awaited<ReturnType<typeof engine>>;
let transcribing: QueueWorker;
let listener: { close(): Promise<void> };
/** The engine answers once this settles: a test holds it to see a page gain a transcript live. */
let held: Promise<void> = Promise.resolve();

beforeAll(async () => {
  if (!hasChromium) return;
  mediaDir = mkdtempSync(join(tmpdir(), 'convo-media-browser-'));
  h = await openHarness({
    services: { media: { backend: diskMedia(mediaDir) }, transcribing: true },
    app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } },
  });
  // A speech engine (OpenAI's protocol) that hears the same two stretches in every recording.
  speech = await engine(
    (_got, res) =>
      void held.then(() =>
        json(res, 200, {
          language: 'en',
          text: 'Here is the chart. The numbers went up in the third quarter, as we hoped.',
          segments: [
            { start: 0, end: 1.4, text: 'Here is the chart.' },
            { start: 1.5, end: 2.9, text: 'The numbers went up in the third quarter, as we hoped.' },
          ],
        }),
      ),
  );
  listener = listen(h);
  transcribing = startTranscriptWorker(h.services.transcripts, {
    transcriber: openAiTranscriber({ url: speech.url, model: 'test', timeoutMs: 5_000 }),
    audio: recordingAudio({ store: h.services.media.store, dir: join(mediaDir, 'audio'), maxBytes: 24 * 1024 * 1024 }),
    logger: createLogger('silent'),
    timeoutMs: 5_000,
    intervalMs: 50,
  });
  server = serve({ fetch: (req) => h.app.fetch(req), port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  site = `http://media.test:${(server.address() as AddressInfo).port}`;
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'media',
        name: 'Media',
        host: site,
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [{ title: 'Recorded', slug: 'recorded', allow_anonymous_messages: true }],
      },
    ],
  });
  // Cameras are offered to secure origins only: an account host is https in production.
  browser = await launchChromium(
    ['media.test'],
    [...FAKE_MEDIA_DEVICES, `--unsafely-treat-insecure-origin-as-secure=${site}`],
  );
}, 60_000);

afterAll(async () => {
  await transcribing?.stop();
  await listener?.close();
  await speech?.close();
  await browser?.close();
  if (server) await new Promise((r) => server.close(r));
  await h?.close();
  if (mediaDir) rmSync(mediaDir, { recursive: true, force: true });
});

/** The conversation's message `id`, as the API answers it. */
async function apiMessage(id: number) {
  const res = await call(
    h,
    new Request('http://api.test/api/v1/conversations/get_conversation?slug=recorded', { headers: auth(TOKEN) }),
  );
  const messages = (res.body as { messages: { id: number; recorded_duration_seconds: number }[] }).messages;
  return messages.find((m) => m.id === id);
}

/** The id of the message the page landed on after posting (its #message-N). */
const landedOn = (page: Page) => Number(/#message-(\d+)$/.exec(page.url())?.[1]);

/**
 * How long the page's player says message `id` is, once it has loaded it: a WebM from
 * MediaRecorder has no duration in its header, so the player is sent to its end to learn it.
 */
async function playedDuration(page: Page, id: number): Promise<number> {
  const duration: unknown = await page.evaluate(`(async () => {
    const player = document.querySelector('[src^="/media/media/${id}?"]');
    if (!player) return -1;
    player.muted = true;
    if (player.readyState < 1) await new Promise((r) => player.addEventListener('loadedmetadata', r, { once: true }));
    if (!Number.isFinite(player.duration)) {
      player.currentTime = 1e6;
      await new Promise((r) => player.addEventListener('durationchange', r, { once: true }));
    }
    return player.duration;
  })()`);
  return Number(duration);
}

describe.skipIf(!hasChromium)('recording in Chromium', () => {
  it.each([
    ['Record video', 'video', true],
    ['Record audio', 'audio', false],
  ])(
    'with JavaScript: %s (%s, a dropped connection: %s) sent as a resumable upload, posted, played',
    async (button, kind, cut) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      // What the page sent: the upload's requests, and the reply form's body.
      const sent: string[] = [];
      let posted = '';
      page.on('request', (r) => {
        if (r.url().includes('/uploads')) sent.push(r.method());
        if (r.method() === 'POST' && r.url().endsWith('/c/recorded')) posted = r.postData() ?? '';
      });
      if (cut) {
        // The connection drops under the first bytes sent: the upload asks where it stands, and resumes.
        let dropped = false;
        await page.route('**/uploads/*', (route) => {
          if (route.request().method() !== 'PATCH' || dropped) return route.continue();
          dropped = true;
          return route.abort('connectionreset');
        });
      }
      await page.goto(`${site}/c/recorded`);
      await page.getByRole('button', { name: button }).click();
      // First the preview, with the devices to choose from; then 3, 2, 1.
      await page.getByRole('button', { name: 'Start recording' }).waitFor();
      if (kind === 'video') {
        expect(await page.locator('video.recorder-preview').isVisible()).toBe(true);
        expect(await page.getByLabel('Camera').locator('option').count()).toBeGreaterThanOrEqual(1);
      }
      await page.getByRole('button', { name: 'Start recording' }).click();
      await page.getByText('Recording starts in 3…').waitFor();
      expect(await page.locator('.recorder-countdown').textContent()).toBe('3');
      await page.getByText(/Recording 0:0\d of 10:00/).waitFor({ timeout: 6_000 });
      if (cut) {
        await page.waitForTimeout(3_000);
      } else {
        // Paused for a second in the middle: the pause is not recorded, nor counted.
        await page.waitForTimeout(1_500);
        await page.getByRole('button', { name: 'Pause' }).click();
        await page.getByText(/Paused at 0:0\d of 10:00/).waitFor();
        await page.waitForTimeout(1_000);
        await page.getByRole('button', { name: 'Resume' }).click();
        await page.waitForTimeout(1_500);
      }
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.getByText(/Recorded 0:0\d/).waitFor();
      // The form says what it carries; the file input that still said "No file chosen" is gone.
      await page.getByText(new RegExp(`Attached: an? ${kind} recording of 0:0\\d`)).waitFor();
      expect(await page.getByLabel(/Recording \(video or audio/).isVisible()).toBe(false);
      if (!cut) {
        // Leaving now would lose it: the browser asks first; staying keeps it.
        const asked = page.waitForEvent('dialog');
        const leaving = page.goto(`${site}/`).catch(() => null);
        const dialog = await asked;
        expect(dialog.type()).toBe('beforeunload');
        await dialog.dismiss();
        await leaving;
        expect(new URL(page.url()).pathname).toBe('/c/recorded');
      }
      await Promise.all([page.waitForURL(/#message-\d+$/), page.getByRole('button', { name: 'Post reply' }).click()]);
      expect(sent[0]).toBe('POST');
      expect(sent).toContain('PATCH');
      if (cut) expect(sent).toContain('HEAD');
      // The form named the finished upload instead of sending the recording again.
      expect(posted).toMatch(/name="upload"\r\n\r\n[0-9a-f]{32}\r\n/);
      expect(posted).not.toContain('filename="recording.');
      const id = landedOn(page);
      const message = await apiMessage(id);
      expect(message).toMatchObject({ message_type: kind, download_media_url: `${site}/media/media/${id}` });
      const seconds = message?.recorded_duration_seconds ?? 0;
      expect(seconds).toBeGreaterThanOrEqual(2);
      expect(seconds).toBeLessThanOrEqual(4);
      if (kind === 'video') {
        // The still the recorder made of its first second: the player's poster, a JPEG.
        const poster = await page.locator(`video[src^="/media/media/${id}?"]`).getAttribute('poster');
        expect(poster).toMatch(new RegExp(`^/media/media/${id}/poster\\?`));
        const head = await page.evaluate(
          `fetch(${JSON.stringify(poster)}).then((r) => r.arrayBuffer()).then((b) => Array.from(new Uint8Array(b).slice(0, 3)))`,
        );
        expect(head).toEqual([0xff, 0xd8, 0xff]);
      }
      const played = await playedDuration(page, id);
      expect(played).toBeGreaterThan(2);
      expect(played).toBeLessThan(5);
      await context.close();
    },
  );

  it('with JavaScript: a screen recording with the camera in a bubble, drawn on a canvas', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${site}/c/recorded`);
    await page.getByRole('button', { name: 'Record screen' }).click();
    await page.getByRole('button', { name: 'Start recording' }).waitFor();
    expect(await page.getByLabel('Show my camera in a corner').isChecked()).toBe(true);
    // What is previewed (and recorded) is the canvas: the screen, and the camera in its corner.
    const drawn = await page.evaluate(`(async () => {
      const preview = document.querySelector('video.recorder-preview');
      const track = preview.srcObject.getVideoTracks()[0];
      await new Promise((r) => setTimeout(r, 500));
      return { canvas: track instanceof CanvasCaptureMediaStreamTrack, width: preview.videoWidth };
    })()`);
    expect(drawn).toEqual({ canvas: true, width: expect.any(Number) });
    // Without the bubble, the screen as it is.
    await page.getByLabel('Show my camera in a corner').uncheck();
    await page.getByRole('button', { name: 'Start recording' }).waitFor();
    await page.waitForTimeout(300);
    expect(
      await page.evaluate(
        "document.querySelector('video.recorder-preview').srcObject.getVideoTracks()[0] instanceof CanvasCaptureMediaStreamTrack",
      ),
    ).toBe(false);
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByRole('button', { name: 'Record screen' }).isVisible()).toBe(true);
    await context.close();
  });

  it('with JavaScript off: a recording chosen in the file input', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${site}/c/recorded`);
    await expect(page.getByRole('button', { name: 'Record video' }).count()).resolves.toBe(0);
    await page.getByLabel(/Recording \(video or audio/).setInputFiles(FIXTURE);
    await Promise.all([page.waitForURL(/#message-\d+$/), page.getByRole('button', { name: 'Post reply' }).click()]);
    const id = landedOn(page);
    expect(await apiMessage(id)).toMatchObject({ message_type: 'video', recorded_duration_seconds: 3 });
    await expect(page.locator(`video[src^="/media/media/${id}?"]`).count()).resolves.toBe(1);
    await context.close();
  });

  it('without a camera or microphone: says so, and the text reply still posts', async () => {
    const bare = await launchChromium(['media.test'], [`--unsafely-treat-insecure-origin-as-secure=${site}`]);
    try {
      const page = await (await bare.newContext()).newPage();
      await page.goto(`${site}/c/recorded`);
      await page.getByRole('button', { name: 'Record audio' }).click();
      await page.getByText(/You can still write a reply/).waitFor();
      await page.getByLabel('Your reply').fill('Typed instead');
      await Promise.all([page.waitForURL(/#message-\d+$/), page.getByRole('button', { name: 'Post reply' }).click()]);
      expect(await apiMessage(landedOn(page))).toMatchObject({ message_type: 'text', text: 'Typed instead' });
    } finally {
      await bare.close();
    }
  });

  it('reads well at 375 px and 1280 px with the recorder and a recording, and axe finds nothing (screenshots in the temp folder)', async () => {
    mkdirSync(SHOTS, { recursive: true });
    // A recording to show, whichever tests ran before.
    const sender = await browser.newContext({ javaScriptEnabled: false });
    const form = await sender.newPage();
    await form.goto(`${site}/c/recorded`);
    await form.getByLabel(/Recording \(video or audio/).setInputFiles(FIXTURE);
    let answer = () => {};
    held = new Promise((r) => {
      answer = r;
    });
    await Promise.all([form.waitForURL(/#message-\d+$/), form.getByRole('button', { name: 'Post reply' }).click()]);
    const posted = landedOn(form);
    await sender.close();
    // Its transcript, made by the engine: captions on the player, the words under it, which an
    // open page gains as soon as it is made.
    const open = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const watching = await open.newPage();
    await watching.goto(`${site}/c/recorded`);
    expect(await watching.locator(`#message-${posted} track`).count()).toBe(0);
    answer();
    await watching.locator(`#message-${posted} video track[kind="captions"]`).waitFor({ state: 'attached' });
    await watching.locator(`#message-${posted} details.transcript`).waitFor();
    await open.close();
    await until(async () => {
      const res = await call(
        h,
        new Request('http://api.test/api/v1/messages/get_messages?conversation_slug=recorded', {
          headers: auth(TOKEN),
        }),
      );
      const m = (res.body as { messages: { id: number; transcript: { status: string } | null }[] }).messages;
      return m.find((x) => x.id === posted)?.transcript?.status === 'complete';
    });
    for (const width of [375, 1280]) {
      const context = await browser.newContext({ bypassCSP: true, viewport: { width, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${site}/c/recorded`);
      await page.locator('video[src^="/media/"]').first().waitFor();
      // The player shows the captions by default once their WebVTT has loaded.
      const captions: unknown = await page.evaluate(`(async () => {
        const track = document.querySelector('#message-${posted} video track[kind="captions"]');
        if (!track) return null;
        if (track.readyState !== 2) await new Promise((r) => { track.addEventListener('load', r, { once: true }); setTimeout(r, 3000); });
        return { mode: track.track.mode, cues: [...(track.track.cues ?? [])].map((c) => c.text) };
      })()`);
      expect(captions).toEqual({
        mode: 'showing',
        cues: ['Here is the chart.', 'The numbers went up in the third quarter, as we hoped.'],
      });
      // The transcript, folded under it, opens and reads within the width.
      const transcript = page.locator(`#message-${posted} details.transcript`);
      await transcript.locator('summary').click();
      await transcript.getByText('The numbers went up').waitFor();
      expect(await axeViolations(page)).toEqual([]);
      const overflow = await page.evaluate('document.documentElement.scrollWidth > window.innerWidth');
      expect(overflow).toBe(false);
      await screenshot(page.locator(`#message-${posted}`), { path: join(SHOTS, `transcript-${width}.png`) });
      await screenshot(page.locator('#reply'), { path: join(SHOTS, `recorder-${width}.png`) });
      // Ready to record: the preview and the devices; then the countdown.
      await page.getByRole('button', { name: 'Record screen' }).click();
      await page.getByRole('button', { name: 'Start recording' }).waitFor();
      await page.waitForTimeout(300);
      expect(await axeViolations(page)).toEqual([]);
      await screenshot(page.locator('#reply'), { path: join(SHOTS, `recorder-ready-${width}.png`) });
      await page.getByRole('button', { name: 'Start recording' }).click();
      await page.getByText('Recording starts in 3…').waitFor();
      await screenshot(page.locator('#reply'), { path: join(SHOTS, `recorder-countdown-${width}.png`) });
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.locator('video[src^="/media/"]').first().scrollIntoViewIfNeeded();
      await screenshot(page, { path: join(SHOTS, `recording-${width}.png`) });
      // A recording the browser cannot play says so beside its player, with the download below.
      await page.evaluate(
        "document.querySelector('figure.recording video').src = 'data:video/mp4;base64,AAAAAAAAAAAAAAAA'",
      );
      const note = page.locator('figure.recording .recording-unplayable').first();
      await note.waitFor({ state: 'attached', timeout: 5_000 });
      expect(await note.textContent()).toContain('This browser cannot play this recording.');
      expect(await axeViolations(page)).toEqual([]);
      await context.close();
    }
  });
});
