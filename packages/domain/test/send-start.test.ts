import { describe, expect, it } from 'vitest';
import {
  type IntakeStart,
  type IntakeStartResult,
  type IntakeStore,
  type MediaDeps,
  type MediaStore,
  type PublicIntakePage,
  sendStart,
} from '../src/index.ts';

/*
 * sendStart over in-memory ports: the start made again from a page read anew when the page changed
 * since it was read, and a recording kept only with the conversation it started.
 */

const ACCOUNT = { id: 1, key: 'acme', name: 'Acme', host: 'https://acme.example' };

const pageOf = (version: string, id = 7): PublicIntakePage => ({
  id,
  key: 'support',
  title: 'Support',
  welcomeText: '',
  name: 'Support',
  conversationTitle: '',
  welcomeRecording: null,
  allowAnonymous: true,
  primary: true,
  workflow: null,
  teamIds: [],
  account: {
    titleTemplate: '{date} Conversation',
    defaults: { anyoneCanPost: false, allowAnonymousMessages: true, allowSearchEngines: false },
    owner: null,
  },
  version,
});

const STARTED: IntakeStartResult = {
  kind: 'started',
  conversationId: 3,
  slug: 'abc',
  messageId: 9,
  authorId: null,
  created: true,
  startedAt: 0,
};

/** A store whose pages are at `current`; a start from another version changes nothing. */
function intakeAt(current: () => string) {
  const starts: IntakeStart[] = [];
  const intake: IntakeStore = {
    page: async () => pageOf(current()),
    async start(_accountId, start) {
      starts.push(start);
      return start.page.version === current() ? STARTED : { kind: 'page_changed' };
    },
    keepPassCode: async () => undefined,
    takePassCode: async () => null,
  };
  return { intake, starts };
}

/** Media whose probe finds a 3 s audio recording, or refuses; what is removed is noted. */
function mediaThat(probe: 'measures' | 'refuses') {
  const removed: string[] = [];
  const store: MediaStore = {
    put: async () => ({ bytes: 0 }),
    size: async () => 0,
    read: () => new ReadableStream(),
    handOffPath: async (key) => key,
    remove: async (key) => {
      removed.push(key);
    },
    list: async function* () {},
  };
  const media: MediaDeps = {
    store,
    limits: { maxSeconds: 600, maxBytes: 1_000_000 },
    probe: {
      probe: async () =>
        probe === 'measures'
          ? { ok: true, media: { contentType: 'audio/ogg', hasVideo: false, seconds: 3 } }
          : { ok: false, problem: 'That file is not a recording this site can play.' },
    },
  };
  return { media, removed };
}

const FORM = { text: 'Hello', submitKey: 'form-key-0123456789abcdef' };
const FILE = { key: '1/aaaa', bytes: 1000 };

describe('sendStart', () => {
  it('starts again from the page read anew when it changed since it was read', async () => {
    let version = 'v1';
    const { intake, starts } = intakeAt(() => version);
    const { media, removed } = mediaThat('measures');
    const read = pageOf('v1');
    version = 'v2';
    const sent = await sendStart({ intake, media }, ACCOUNT, read, FORM, FILE, {
      signedIn: true,
      sender: 'client',
      reread: () => intake.page(ACCOUNT.id, 'support'),
    });
    expect(sent.outcome).toEqual(STARTED);
    expect(sent.page?.version).toBe('v2');
    expect(starts.map((s) => s.page.version)).toEqual(['v1', 'v2']);
    // The recording started the conversation: it stays.
    expect(removed).toEqual([]);
  });

  it('starts nothing from another page, and removes the recording it came with', async () => {
    const { intake } = intakeAt(() => 'v2');
    const { media, removed } = mediaThat('measures');
    const sent = await sendStart({ intake, media }, ACCOUNT, pageOf('v1'), FORM, FILE, {
      signedIn: true,
      sender: 'client',
      // Read anew, it is another page now (the key moved to it).
      reread: async () => pageOf('v2', 8),
    });
    expect(sent.outcome).toEqual({ kind: 'page_changed' });
    // The recording and whatever poster it had.
    expect(removed).toEqual([FILE.key, `${FILE.key}.poster`]);
  });

  it('refuses a file that is no recording before starting anything, and keeps none of it', async () => {
    const { intake, starts } = intakeAt(() => 'v1');
    const { media, removed } = mediaThat('refuses');
    const sent = await sendStart({ intake, media }, ACCOUNT, pageOf('v1'), FORM, FILE, {
      signedIn: true,
      sender: 'client',
      reread: () => intake.page(ACCOUNT.id, 'support'),
    });
    expect(sent.outcome).toEqual({ kind: 'refused', problem: 'That file is not a recording this site can play.' });
    expect(starts).toEqual([]);
    expect(removed).toEqual([FILE.key]);
  });
});
