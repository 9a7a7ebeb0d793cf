import type { StoredMedia } from '../media/media.ts';

/* The ports of the people area: the people of an account's site, their sessions, links and pending replies. */

import type { MessageFormat, TeamRole, TemplateRef, UserRecord } from '../records.ts';
import type { AccountAddress } from '../shared/urls.ts';

/** A reply that waits for its author to confirm the link mailed to the address they gave. */
export interface PendingReply {
  conversationId: number;
  text: string;
  submitKey: string | null;
  /** A recording sent with it, kept until the link is opened (or it expires). */
  media?: StoredMedia | undefined;
  /** The thread it replies in (its first message's id). */
  parentId?: number | null | undefined;
  /** The moment of the thread's recording it comments on (whole seconds). */
  atSeconds?: number | null | undefined;
}

/** A person signed in on an account's site. */
export interface SignedIn {
  user: UserRecord;
  /** The user's place on the account's team; null: a participant. */
  teamRole: TeamRole | null;
  /** The session's expiry moved (it slides): the cookie should be sent again. */
  renewed: boolean;
}

/** A sign-in link as it was made: for an address, with the name a new person gave and a reply that waits. */
export interface SignInLinkRecord {
  email: string;
  /** The name given with a reply, for when the address is nobody's yet. */
  name: string | null;
  returnPath: string;
  pending: PendingReply | null;
  /** An unconfirmed start's message, which confirming the link puts the address's person's name on. */
  claim?: number | null;
}

/**
 * The people of an account's site: its users as the pages know them, their sessions and one-time
 * sign-in links. Tokens are given in the clear and stored only hashed. Every method is scoped to
 * the account.
 */
export interface PeopleStore {
  userByEmail(accountId: number, email: string): Promise<UserRecord | null>;
  /** Makes a new user of the account; null when the e-mail is already a user's (ignoring case). */
  register(accountId: number, name: string, email: string): Promise<UserRecord | null>;
  createSignInLink(accountId: number, token: string, link: SignInLinkRecord & { ttlSeconds: number }): Promise<void>;
  /** A link that can still be used, and the user its address belongs to (if any), without spending it. */
  peekSignInLink(accountId: number, token: string): Promise<(SignInLinkRecord & { user: UserRecord | null }) | null>;
  /** Spends a link: once, and only before it expires; null otherwise. */
  useSignInLink(accountId: number, token: string): Promise<SignInLinkRecord | null>;
  createSession(accountId: number, userId: number, token: string, ttlSeconds: number): Promise<void>;
  /** The session's user, sliding its expiry to ttlSeconds from now at most once a day; null when unknown or expired. */
  session(accountId: number, token: string, ttlSeconds: number): Promise<SignedIn | null>;
  endSession(accountId: number, token: string): Promise<void>;
  /** Ends every session of the user (every device, every replica: sessions live in the database). */
  endAllSessions(accountId: number, userId: number): Promise<void>;
}

/** A reply about to be written: by its author, or anonymous (then perhaps under a name given). */
export interface NewReply {
  authorId: number | null;
  text: string;
  /** How `text` is kept: as written (a reply's, always), or as the safe subset of HTML (the API's). */
  format?: MessageFormat | undefined;
  submitKey: string | null;
  media?: StoredMedia | undefined;
  /** An anonymous reply's name, given without an address: shown as nobody's word. */
  claimedName?: string | null | undefined;
  /** The message template it was made from (its id and name, kept as they were). */
  template?: TemplateRef | undefined;
  /**
   * An internal note: only the account's team sees it. It tells only the team, moves neither the
   * conversation's state nor its place in anyone's list, runs no workflow, and is not searched.
   */
  internal?: boolean | undefined;
  /** The thread it replies in (its first message's id, of the same conversation). */
  parentId?: number | null | undefined;
  /** The moment of the thread's recording it comments on (whole seconds; moments.ts checks it). */
  atSeconds?: number | null | undefined;
  /**
   * The account's address, when the writer wants the new message back as the messages resource
   * answers it (`detail`, built by the statement that writes it; create_message's answer).
   */
  answerAs?: AccountAddress | undefined;
}

/** Where replies are written. */
export interface ReplyStore {
  /**
   * Adds a message to the conversation (text, with a recording when `media` is given); with a
   * submitKey the account already used, nothing is written and that message's id comes back
   * (`created` false). Null when the account has no such conversation (none, or deleted since).
   */
  insert(
    accountId: number,
    conversationId: number,
    reply: NewReply,
  ): Promise<{ id: number; created: boolean; detail: string | null } | null>;
  /**
   * Puts `authorId` on an unconfirmed start's message (its name given under the address they
   * confirmed) and makes them a member of its conversation; null when it is no longer unconfirmed.
   */
  claim(accountId: number, messageId: number, authorId: number): Promise<{ id: number } | null>;
  /**
   * The thread a reply under `messageId` joins: the message's own thread's first message (one
   * level), with whether it is an internal note and, when that first message is a recording, its
   * length in seconds (`recording`, else null); null when the conversation has no such message
   * (of the account, not hidden).
   */
  threadOf(
    accountId: number,
    conversationId: number,
    messageId: number,
  ): Promise<{ rootId: number; internal: boolean; recording: { seconds: number } | null } | null>;
  /** The message a form token posted in the conversation, if it did. */
  posted(accountId: number, conversationId: number, submitKey: string): Promise<{ id: number } | null>;
}

/** Counts form submissions per key (a client address, an e-mail) in fixed windows shared by every process. */
export interface VisitorLimits {
  take(key: string, limit: number, windowSeconds: number): Promise<{ allowed: boolean; resetSeconds: number }>;
}
