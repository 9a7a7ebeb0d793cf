import { createHmac } from 'node:crypto';
import type { ConversationAccess } from '@convo/domain';
import { describe, expect, it } from 'vitest';
import {
  embedFormToken,
  embedFormTokenValid,
  handoffGrant,
  handoffToken,
  intakeSubmitKey,
  intakeSubmitKeyIsFor,
  newGrant,
  PASS_LIFETIME_SECONDS,
  type PassGrants,
  passReader,
  playTicket,
  playTicketViewer,
  withGrant,
} from '../src/passes.ts';

/*
 * What a visitor's device carries instead of an account: the starts it made (its pass), the token
 * that carries one start to a tab of its own, an embedded form's token and an intake form's own
 * token. Each is signed with the site's key: these are the forgeries a hostile visitor would try.
 */

const KEY = 'the-site-signing-key-for-these-tests';
const OTHER_KEY = 'another-site-signing-key';
const NOW = Date.UTC(2026, 10, 27, 12);
const HOUR = 3600 * 1000;

describe('the MAC every token carries', () => {
  // Made of two one-shot digests (RFC 2104): the MAC createHmac makes, for a key of any length.
  it.each([
    ['a short key', KEY],
    ['a key of one block', 'k'.repeat(64)],
    ['a key longer than a block', 'long-'.repeat(40)],
    ['a key that is not ASCII', 'clé-ünïcödé-🔑'],
  ])('is HMAC-SHA256, with %s', (_, key) => {
    const to = { accountId: 12, slug: 'Welcome-Video', messageId: 345, csrf: 'c'.repeat(43), viewerId: 6 };
    const ticket = playTicket(key, to, NOW);
    const [viewer, until, tag] = ticket.split('.');
    const signed = `play:12.welcome-video.345.${to.csrf}.${viewer}.${until}`;
    expect(tag).toBe(createHmac('sha256', key).update(signed).digest('base64url'));
    expect(playTicketViewer(key, to, ticket, NOW)).toEqual({ viewerId: 6 });
    expect(playTicketViewer(OTHER_KEY, to, ticket, NOW)).toBeUndefined();
  });
});

describe("an embed's handoff of a start", () => {
  const grant = newGrant(7, null, NOW);

  it('carries the start for an hour, to the account it was made for', () => {
    const token = handoffToken(KEY, 1, grant, NOW);
    expect(handoffGrant(KEY, 1, token, NOW + HOUR - 1000)).toBe(grant);
    expect(handoffGrant(KEY, 1, token, NOW + HOUR + 1000)).toBeNull();
    expect(handoffGrant(KEY, 2, token, NOW)).toBeNull();
    expect(handoffGrant(OTHER_KEY, 1, token, NOW)).toBeNull();
  });

  it('opens nothing once its start or its time is changed', () => {
    const token = handoffToken(KEY, 1, grant, NOW);
    const [, until, mac] = /^(?:[\d-]+)\.(\d+)\.(.+)$/.exec(token) ?? [];
    expect(handoffGrant(KEY, 1, `${newGrant(8, null, NOW)}.${until}.${mac}`, NOW)).toBeNull();
    expect(handoffGrant(KEY, 1, `${grant}.${Number(until) + 3600}.${mac}`, NOW)).toBeNull();
    expect(handoffGrant(KEY, 1, 'not a token', NOW)).toBeNull();
  });
});

describe("an embedded intake form's token", () => {
  it('is good for a day, for its own account and page', () => {
    const token = embedFormToken(KEY, 1, 3, NOW);
    expect(embedFormTokenValid(KEY, 1, 3, token, NOW + 23 * HOUR)).toBe(true);
    expect(embedFormTokenValid(KEY, 1, 3, token, NOW + 25 * HOUR)).toBe(false);
    expect(embedFormTokenValid(KEY, 1, 4, token, NOW)).toBe(false);
    expect(embedFormTokenValid(KEY, 2, 3, token, NOW)).toBe(false);
    expect(embedFormTokenValid(OTHER_KEY, 1, 3, token, NOW)).toBe(false);
  });

  it('is refused when issued in the future or reshaped', () => {
    expect(embedFormTokenValid(KEY, 1, 3, embedFormToken(KEY, 1, 3, NOW + HOUR), NOW)).toBe(false);
    const token = embedFormToken(KEY, 1, 3, NOW);
    expect(embedFormTokenValid(KEY, 1, 3, `${token}x`, NOW)).toBe(false);
    expect(embedFormTokenValid(KEY, 1, 3, '', NOW)).toBe(false);
  });
});

describe("an intake form's own token", () => {
  it("belongs to the form token it was made for, and no other device's", () => {
    const submit = intakeSubmitKey(KEY, 'csrf-of-this-device');
    expect(submit).toHaveLength(43);
    expect(intakeSubmitKeyIsFor(KEY, 'csrf-of-this-device', submit)).toBe(true);
    expect(intakeSubmitKeyIsFor(KEY, 'csrf-of-another-device', submit)).toBe(false);
    expect(intakeSubmitKeyIsFor(OTHER_KEY, 'csrf-of-this-device', submit)).toBe(false);
    // Its last character changed (to one it is not: the key is random, and ends in 'A' one time in 64).
    const changed = `${submit.slice(0, 42)}${submit.endsWith('A') ? 'B' : 'A'}`;
    expect(intakeSubmitKeyIsFor(KEY, 'csrf-of-this-device', changed)).toBe(false);
    expect(intakeSubmitKeyIsFor(KEY, 'csrf-of-this-device', submit.slice(0, 42))).toBe(false);
  });

  it('is new for every form shown', () => {
    expect(intakeSubmitKey(KEY, 'csrf')).not.toBe(intakeSubmitKey(KEY, 'csrf'));
  });
});

describe('what a pass opens', () => {
  const conversation: ConversationAccess = {
    id: 7,
    slug: 'seven',
    anyoneCanPost: false,
    allowAnonymousMessages: false,
    allowSearchEngines: false,
    memberIds: [20],
    passesValidAfter: null,
  };
  const grants = (...texts: string[]): PassGrants => texts.reduce(withGrant, new Map());
  const now = Date.now();

  it("opens an anonymous start's conversation, and nothing else", () => {
    const pass = grants(newGrant(7, null, now));
    expect(passReader(pass, conversation)).toEqual({ viewer: null, granted: 7 });
    expect(passReader(pass, { ...conversation, id: 8 })).toBeNull();
  });

  it('reads as the person who started it only while they are a member', () => {
    const pass = grants(newGrant(7, 20, now));
    expect(passReader(pass, conversation)).toEqual({ viewer: { userId: 20, teamRole: null }, granted: null });
    expect(passReader(pass, { ...conversation, memberIds: [21] })).toBeNull();
  });

  it('opens nothing past its lifetime, or once the team ended the starting devices\u2019 access', () => {
    const old = grants(newGrant(7, null, now - PASS_LIFETIME_SECONDS * 1000 - 1000));
    expect(passReader(old, conversation)).toBeNull();
    const pass = grants(newGrant(7, null, now - 1000));
    expect(passReader(pass, { ...conversation, passesValidAfter: now - 500 })).toBeNull();
  });

  it('ignores what is not a grant', () => {
    expect(grants('7-0-abc', '', '0-0-1').size).toBe(0);
  });
});
