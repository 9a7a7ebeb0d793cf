import { maySee, type Viewer } from '../conversations/access.ts';
import type { ConversationAccess, SiteStore } from '../conversations/ports.ts';
import { slugKey, slugProblem } from '../conversations/slug.ts';
import type { SiteAccount } from '../records.ts';
import type { SiteSecrets } from '../shared/secrets.ts';
import { type MuteKind, type MuteTarget, type NotificationStore, readMuteToken } from './notifications.ts';

/*
 * What a person chooses about the mail they get: from a mail's signed link (no sign-in: RFC 8058
 * one-click), from a conversation's page, and from their settings page.
 */

/** What a signed link of this account's mail stops; null when it is not one (forged, altered, another account's). */
export async function openMuteLink(
  deps: { notifications: NotificationStore; secrets: SiteSecrets },
  account: SiteAccount,
  token: string,
): Promise<MuteTarget | null> {
  const target = await readMuteToken(await deps.secrets.signingKey(), token);
  return target && target.accountId === account.id ? target : null;
}

/** Follows the link: no more mail (or play notices) about its conversation, or (conversation 0) about any. */
export async function muteByLink(
  deps: { notifications: NotificationStore; secrets: SiteSecrets },
  account: SiteAccount,
  token: string,
): Promise<MuteTarget | null> {
  const target = await openMuteLink(deps, account, token);
  if (target) {
    await deps.notifications.mute(
      account.id,
      target.userId,
      target.conversationId === 0 ? null : target.conversationId,
      target.kind,
    );
  }
  return target;
}

export type MailChoice = 'follow' | 'unfollow' | 'mute' | 'unmute' | 'mute_plays' | 'unmute_plays';
export const MAIL_CHOICES: readonly MailChoice[] = [
  'follow',
  'unfollow',
  'mute',
  'unmute',
  'mute_plays',
  'unmute_plays',
];

/** What the page offers a signed-in person about a conversation's mail. */
export interface ConversationMail {
  /** They get its mail now (a member or follower, not muted, not all muted). */
  receiving: boolean;
  member: boolean;
  following: boolean;
  muted: boolean;
  mutedAll: boolean;
  /** Anyone may follow a public conversation. */
  mayFollow: boolean;
  /** Play notices of their own recordings here: stopped for this conversation, or for all. */
  playsMuted: boolean;
  playsMutedAll: boolean;
}

export async function conversationMail(
  deps: { notifications: NotificationStore },
  account: SiteAccount,
  viewer: NonNullable<Viewer>,
  conversation: Pick<ConversationAccess, 'id' | 'anyoneCanPost'>,
): Promise<ConversationMail> {
  const s = await deps.notifications.mailState(account.id, viewer.userId, conversation.id);
  return {
    ...s,
    receiving: (s.member || (s.following && conversation.anyoneCanPost)) && !s.muted && !s.mutedAll,
    mayFollow: conversation.anyoneCanPost,
  };
}

/**
 * A choice made on a conversation's page by a signed-in person who may see it: follow a public
 * conversation (which also takes back a mute), stop following, mute it, or take the mute back.
 */
export async function chooseConversationMail(
  deps: { site: SiteStore; notifications: NotificationStore },
  account: SiteAccount,
  viewer: Viewer,
  slug: string,
  choice: MailChoice,
): Promise<{ kind: 'not_found' } | { kind: 'refused'; problem: string } | { kind: 'done'; slug: string }> {
  const access = slugProblem(slug) ? null : await deps.site.conversationAccess(account.id, slugKey(slug));
  if (!viewer || !access || !maySee(access, access.memberIds, viewer)) return { kind: 'not_found' };
  const n = deps.notifications;
  switch (choice) {
    case 'follow':
      if (!access.anyoneCanPost) return { kind: 'refused', problem: 'Only a public conversation can be followed.' };
      await n.follow(account.id, viewer.userId, access.id);
      await n.unmute(account.id, viewer.userId, access.id, 'all');
      break;
    case 'unfollow':
      await n.unfollow(account.id, viewer.userId, access.id);
      break;
    case 'mute':
      await n.mute(account.id, viewer.userId, access.id, 'all');
      break;
    case 'unmute':
      await n.unmute(account.id, viewer.userId, access.id, 'all');
      break;
    case 'mute_plays':
      await n.mute(account.id, viewer.userId, access.id, 'plays');
      break;
    case 'unmute_plays':
      await n.unmute(account.id, viewer.userId, access.id, 'plays');
      break;
  }
  return { kind: 'done', slug: access.slug };
}

/** Whether a signed-in person gets any of the account's mail about conversations, and its play notices. */
export async function accountMailOn(
  deps: { notifications: NotificationStore },
  account: SiteAccount,
  viewer: NonNullable<Viewer>,
): Promise<{ on: boolean; playsOn: boolean }> {
  const s = await deps.notifications.mailState(account.id, viewer.userId, 0);
  return { on: !s.mutedAll, playsOn: !s.playsMutedAll };
}

/**
 * Turns all of the account's mail about conversations (or only its play notices) off or back on,
 * for the signed-in person (the settings page).
 */
export async function setAccountMail(
  deps: { notifications: NotificationStore },
  account: SiteAccount,
  viewer: NonNullable<Viewer>,
  kind: MuteKind,
  on: boolean,
): Promise<void> {
  if (on) await deps.notifications.unmute(account.id, viewer.userId, null, kind);
  else await deps.notifications.mute(account.id, viewer.userId, null, kind);
}
