import { readFile, rm, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AdminError,
  accountRefs,
  appendConversations,
  createAccountWithoutToken,
  ensureIntakePage,
  ensureUsers,
  ensureWorkflow,
  parse,
  type SeedCounts,
  type TSeedConversation,
  ZSeedConversation,
} from '@convo/db';
import {
  adoptCopiedSteps,
  asHistory,
  type MediaDeps,
  MediaTooLarge,
  measureRecording,
  newMediaKey,
  type StoredMedia,
  ZConversation,
  ZConversationList,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import type { z } from 'zod';

/*
 * Coming from the original service: its users can read their data only through API v1, so this
 * reads every page of get_conversations from any server that speaks it, fetches each conversation
 * it does not have yet by slug (the list lacks creation times), and writes them into a local
 * account, a page per transaction.
 *
 * - Resumable: a conversation whose slug the account already has is skipped, and the next page to
 *   read is kept in a state file until the import ends. Pages are newest first and the API only
 *   adds conversations, so a page read again after new ones arrived shows some twice (skipped),
 *   never misses one.
 * - Message times: the API carries none. Each message gets its conversation's creation time plus
 *   its position in microseconds (1 µs, 2 µs, …), which keeps their order and their times close.
 * - Intake pages and workflows: the API shows ids only. A conversation that came through the
 *   source's primary page comes through the account's primary page (made, as "Imported primary
 *   intake page", if it has none); one from another page through "Imported intake page <id>"; its
 *   workflow copy is kept whole, from a workflow of that name and steps (made if missing).
 */

export interface ImportOptions {
  /** The source's base URL: its origin, or the full `/api/v1/conversations` prefix. */
  from: string;
  token: string;
  /** The local account: added to, or created (with `host` or the source's own) if it is missing. */
  account: string;
  host?: string;
  name?: string;
  /** Requests per second to the source, at most. */
  rate: number;
  /** Where the next page to read is kept between runs; null: nowhere. */
  stateFile: string | null;
  signal?: AbortSignal;
  onProgress?: (p: ImportReport) => void;
  /**
   * Where the recordings the source keeps are copied to (each measured again); without it,
   * messages keep the source's download_media_url.
   */
  media?: MediaDeps;
}

export interface ImportReport {
  pages: number;
  requests: number;
  conversations: number;
  messages: number;
  /** Already in the account (an earlier run, or twice on the pages). */
  skipped: number;
  /** What this server's rules refuse (a title too long, say), with why. */
  refused: { slug: string; reason: string }[];
  /** Recordings copied from the source into this server's media store. */
  recordings: number;
}

type Remote = z.infer<typeof ZConversation>;

export function apiBase(from: string): string {
  let url: URL;
  try {
    url = new URL(from);
  } catch {
    throw new AdminError(`--from: not a URL: ${from}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AdminError('--from: give an http(s) URL');
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/api/v1/conversations') ? path : `${path}/api/v1/conversations`;
  url.search = '';
  return url.toString();
}

/** Redirects followed within the source's origin; one to another origin is refused, never sent the token. */
const MAX_REDIRECTS = 5;

async function fetchSameOrigin(url: string, init: RequestInit): Promise<Response> {
  let at = new URL(url);
  for (let hop = 0; ; hop++) {
    const res = await fetch(at, { ...init, redirect: 'manual' });
    const location = res.headers.get('location');
    if (res.status < 300 || res.status > 399 || location === null) return res;
    await res.body?.cancel();
    const next = new URL(location, at);
    if (next.origin !== at.origin) {
      throw new AdminError(
        `the source redirected to another origin (${next.origin}); refused, so the token is never sent there`,
      );
    }
    if (hop >= MAX_REDIRECTS) throw new AdminError(`the source redirected more than ${MAX_REDIRECTS} times`);
    at = next;
  }
}

/** The source, at most `rate` requests a second, with retries on 429, 5xx and lost connections. */
function sourceClient(base: string, o: ImportOptions, report: ImportReport) {
  const gap = 1000 / o.rate;
  let next = 0;
  const paced = async () => {
    const wait = next - performance.now();
    next = Math.max(next, performance.now()) + gap;
    if (wait > 0) await sleep(wait, undefined, { signal: o.signal });
    report.requests += 1;
  };
  /**
   * A recording the source keeps, by its download_media_url, sent the token only on the source's
   * own origins (the API's, and the account host its conversation_url names); null if it will not
   * give it.
   */
  async function download(url: string, origins: string[]): Promise<Response | null> {
    let at: URL;
    try {
      at = new URL(url);
    } catch {
      return null;
    }
    if (!origins.includes(at.origin)) return null;
    await paced();
    const res = await fetchSameOrigin(url, {
      headers: { authorization: `Bearer ${o.token}` },
      signal: o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(600_000)]) : AbortSignal.timeout(600_000),
    }).catch(() => null);
    if (res && !res.ok) await res.body?.cancel();
    return res?.ok ? res : null;
  }
  async function get(path: string): Promise<{ status: number; body: unknown }> {
    for (let attempt = 0; ; attempt++) {
      await paced();
      let retryAfter = 2 ** attempt;
      try {
        const res = await fetchSameOrigin(`${base}/${path}`, {
          headers: { authorization: `Bearer ${o.token}`, accept: 'application/json' },
          signal: o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(30_000)]) : AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        if (res.status === 401 || res.status === 403)
          throw new AdminError(`the source refused the token (${res.status})`);
        if (res.status !== 429 && res.status < 500) {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            throw new AdminError(`the source answered ${path} with something that is not JSON (${res.status})`);
          }
          return { status: res.status, body };
        }
        retryAfter = Math.min(Number(res.headers.get('retry-after')) || retryAfter, 60);
        if (attempt >= 6) throw new AdminError(`the source kept answering ${res.status} to ${path}`);
      } catch (e) {
        if (e instanceof AdminError || o.signal?.aborted) throw e;
        if (attempt >= 6) throw new AdminError(`cannot reach the source: ${(e as Error).message}`);
      }
      await sleep(retryAfter * 1000, undefined, { signal: o.signal });
    }
  }
  return { get, download };
}

/**
 * The recordings of `conversations` the source keeps, copied into the media store and measured,
 * by their URL; `kept` lists the keys (removed again if the page's load fails). A recording the
 * source will not give, or that this server refuses, stays a link to the source.
 */
async function copyRecordings(
  conversations: Remote[],
  accountId: number,
  media: MediaDeps,
  source: ReturnType<typeof sourceClient>,
  apiOrigin: string,
  kept: string[],
): Promise<Map<string, StoredMedia>> {
  const copied = new Map<string, StoredMedia>();
  for (const c of conversations) {
    const origins = [apiOrigin, new URL(c.conversation_url).origin];
    for (const m of c.messages) {
      const url = m.download_media_url;
      if (url === null || m.message_type === 'text' || copied.has(url)) continue;
      const res = await source.download(url, origins);
      if (!res?.body) continue;
      const key = newMediaKey(accountId);
      try {
        const { bytes } = await media.store.put(key, Readable.fromWeb(res.body), media.limits.maxBytes);
        kept.push(key);
        const measured = await measureRecording(media, { key, bytes }, m.message_type);
        if (measured.ok) copied.set(url, measured.media);
      } catch (e) {
        if (!(e instanceof MediaTooLarge)) throw e;
      }
    }
  }
  return copied;
}

/** `2022-02-01 17:21:09.123456` (the API's UTC time), or any ISO time, as microseconds. */
function micros(time: string): bigint | null {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:?\d{2})?$/.exec(time);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}T${m[2]}${m[4] ?? 'Z'}`);
  return Number.isNaN(ms) ? null : BigInt(ms) * 1000n + BigInt((m[3] ?? '').padEnd(6, '0'));
}

const isoMicros = (us: bigint) =>
  `${new Date(Number(us / 1000n)).toISOString().slice(0, 19)}.${String(us % 1_000_000n).padStart(6, '0')}Z`;

/** One remote conversation as a seed conversation of the local account; null when it cannot be. */
async function seedConversation(
  em: EntityManager,
  refs: Awaited<ReturnType<typeof accountRefs>>,
  c: Remote,
  copied: ReadonlyMap<string, StoredMedia>,
) {
  const created = micros(c.conversation_created_time);
  if (created === null)
    throw new AdminError(`its creation time ${JSON.stringify(c.conversation_created_time)} is not a time`);
  const intakePage = c.via_primary_intake_page
    ? await ensureIntakePage(em, refs, 'Imported primary intake page', true)
    : c.intake_page_id === null
      ? undefined
      : await ensureIntakePage(em, refs, `Imported intake page ${c.intake_page_id}`, false);
  const workflow =
    'id' in c.workflow
      ? {
          of: await ensureWorkflow(em, refs, c.workflow.name, c.workflow.steps),
          name: c.workflow.name,
          // History here: the source may still run its pending steps, so nothing is done twice.
          steps: asHistory(adoptCopiedSteps(c.workflow.steps)),
        }
      : null;
  return {
    title: c.title,
    slug: c.slug,
    anyone_can_post: c.anyone_can_post,
    allow_anonymous_messages: c.allow_anonymous_messages,
    allow_search_engines: c.allow_search_engines,
    ...(intakePage === undefined ? {} : { intake_page: intakePage }),
    workflow,
    created_at: isoMicros(created),
    members: c.users.map((u) => u.email),
    tags: c.tags.map((t) => t.name),
    messages: c.messages.map((m, i) => ({
      author: m.author.anonymous ? null : m.author.email,
      text: m.text,
      type: m.message_type,
      recorded_duration_seconds: m.recorded_duration_seconds,
      // A copied recording is named by its source URL, which the load looks up (copyRecordings).
      ...(m.download_media_url !== null && copied.has(m.download_media_url)
        ? { media_file: m.download_media_url }
        : { download_media_url: m.download_media_url }),
      created_at: isoMicros(created + BigInt(i + 1)),
    })),
  };
}

async function findOrCreateAccount(em: EntityManager, o: ImportOptions, first: Remote | undefined) {
  const [found] = await em.getConnection().execute('select id from account where key = ?', [o.account]);
  if (found) return Number(found.id);
  const host = o.host ?? (first ? new URL(first.conversation_url).origin : undefined);
  if (host === undefined)
    throw new AdminError(`no account ${o.account} here, and nothing to learn its host from: give --host`);
  // No API token: `token create` makes one to use.
  const made = await createAccountWithoutToken(em, { key: o.account, name: o.name ?? o.account, host });
  return made.id;
}

export async function importFromApi(em: EntityManager, o: ImportOptions): Promise<ImportReport> {
  if (!(o.rate > 0)) throw new AdminError('--rate must be more than 0');
  const report: ImportReport = {
    pages: 0,
    requests: 0,
    conversations: 0,
    messages: 0,
    skipped: 0,
    refused: [],
    recordings: 0,
  };
  const base = apiBase(o.from);
  const source = sourceClient(base, o, report);
  const get = source.get;
  let page = 1;
  if (o.stateFile !== null) {
    const saved = await readFile(o.stateFile, 'utf8').then(
      (t) => JSON.parse(t) as { from: string; account: string; page: number },
      () => null,
    );
    if (saved && saved.from === base && saved.account === o.account) page = saved.page;
  }
  let accountId: number | null = null;
  for (; ; page++) {
    const listed = await get(`get_conversations?page=${page}`);
    if (listed.status === 404) break;
    if (listed.status !== 200) throw new AdminError(`the source answered page ${page} with ${listed.status}`);
    const list = parse(ZConversationList, listed.body, `the source's page ${page}`).conversations;
    if (list.length === 0) break;
    report.pages += 1;
    accountId ??= await findOrCreateAccount(em, o, list[0] as Remote | undefined);
    const have = new Set(
      (
        await em
          .getConnection()
          .execute('select slug from conversation where account_id = ? and slug = any(?::text[])', [
            accountId,
            `{${list.map((c) => JSON.stringify(c.slug)).join(',')}}`,
          ])
      ).map((r: { slug: string }) => r.slug),
    );
    const fetched: Remote[] = [];
    for (const c of list) {
      if (have.has(c.slug)) {
        report.skipped += 1;
        continue;
      }
      const one = await get(`get_conversation?slug=${encodeURIComponent(c.slug)}`);
      if (one.status !== 200) {
        report.refused.push({ slug: c.slug, reason: `the source answered ${one.status} for it` });
        continue;
      }
      fetched.push(parse(ZConversation, one.body, `the source's conversation ${c.slug}`));
    }
    const id = accountId;
    const counts: SeedCounts = { accounts: 0, users: 0, conversations: 0, messages: 0, tags: 0 };
    const kept: string[] = [];
    const media = o.media;
    const copied = media ? await copyRecordings(fetched, id, media, source, new URL(base).origin, kept) : new Map();
    await em
      .transactional(async (tx) => {
        const refs = await accountRefs(tx, id);
        const users = fetched.flatMap((c) => [
          ...c.users,
          ...c.messages.flatMap((m) => (m.author.anonymous ? [] : [m.author])),
        ]);
        await ensureUsers(tx, refs, users);
        const seeds: TSeedConversation[] = [];
        // Oldest first, so that the page's conversations get ids in the order they were made.
        for (const c of fetched.reverse()) {
          try {
            seeds.push(parse(ZSeedConversation, await seedConversation(tx, refs, c, copied), `conversation ${c.slug}`));
          } catch (e) {
            if (!(e instanceof AdminError)) throw e;
            report.refused.push({ slug: c.slug, reason: e.message });
          }
        }
        await appendConversations(tx, refs, seeds, counts, {
          media: async (url) => {
            const recording = copied.get(url);
            if (!recording) throw new AdminError(`${url}: no such recording was copied`);
            return recording;
          },
        });
      })
      .catch(async (e: unknown) => {
        await Promise.all(kept.map((key) => media?.store.remove(key).catch(() => undefined)));
        throw e;
      });
    // A recording copied twice over (the same URL in a conversation refused above) is not kept.
    const used = new Set([...copied.values()].map((r) => r.key));
    await Promise.all(kept.filter((key) => !used.has(key)).map((key) => media?.store.remove(key)));
    report.recordings += copied.size;
    report.conversations += counts.conversations;
    report.messages += counts.messages;
    if (o.stateFile !== null) {
      await writeFile(o.stateFile, JSON.stringify({ from: base, account: o.account, page: page + 1 }));
    }
    o.onProgress?.(report);
  }
  if (o.stateFile !== null) await rm(o.stateFile, { force: true });
  return report;
}
