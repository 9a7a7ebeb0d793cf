import {
  type LinkOptions,
  posterFromForm,
  type ReceivedFile,
  type SiteAccount,
  type VisitorLimits,
} from '@convo/domain';
import { csrf } from 'hono/csrf';
import { SIGN_IN_LINK_TTL_SECONDS, secret } from './cookies.ts';
import type { SiteDeps } from './deps.ts';
import { page, refused, tooMany } from './frame.ts';
import type { SiteContext } from './request.ts';
import * as forms from './views/forms.ts';

/*
 * What every form of the site goes through before its route reads it: the same Origin, a body the
 * server can read, the CSRF token of this visitor, and the rate limits. Each refusal is a page.
 */
export interface Posting {
  /** A form may only be posted from a page of this site (its Origin, or Sec-Fetch-Site: same-origin). */
  sameOrigin: ReturnType<typeof csrf>;
  /**
   * The form's fields once the checks passed, or the page that says why not; `formToken` checks a
   * form's own token (its `csrf` field) where no cookie binds one; `limit` is the per-address
   * limit it counts against, when not the forms' (`FORM_LIMIT_PER_IP`).
   */
  readPost(
    c: SiteContext,
    formToken?: FormTokenCheck,
    limit?: { name: string; perMinute: number },
  ): Promise<Map<string, string[]> | Response>;
  /**
   * The same for a form that may carry a recording (the file field `media`): its fields and the
   * file kept in the media store, which is removed again if the checks refuse the form; and the
   * recording's poster (`poster`, a JPEG as a data URL), checked by its bytes: one that is no
   * JPEG refuses the form (422).
   */
  readPostWithRecording(
    c: SiteContext,
    formToken?: FormTokenCheck,
  ): Promise<{ fields: Map<string, string[]>; file?: ReceivedFile; poster?: Uint8Array } | Response>;
  /**
   * The 429 page when `key` (an address, an e-mail) has used its `limit` in the window; else null.
   * Counted by `limits` (default: the forms' row a submission; the page reads' shared quota for
   * what comes as often as pages are read).
   */
  overLimit(
    c: SiteContext,
    key: string,
    limit: number,
    windowSeconds: number,
    limits?: VisitorLimits,
  ): Promise<Response | null>;
  /**
   * The 429 page when a mail to an address nobody has confirmed (a sign-in link, a named reply's or
   * start's confirmation) would pass that address's limit (`FORM_LIMIT_PER_EMAIL` in 15 minutes)
   * or the account's budget of such mail (`MAIL_LIMIT_PER_ACCOUNT` an hour); else null.
   */
  mailLimit(c: SiteContext, email: string): Promise<Response | null>;
  /** How the account's sign-in links are made. */
  link(account: SiteAccount): LinkOptions;
}

/**
 * Forms with a recording one client may be sending at once (each may be up to MEDIA_MAX_BYTES
 * on its way to the disk); past it, 429 before a byte is read.
 */
export const RECORDING_BODIES_PER_CLIENT = 8;

export function posting(deps: SiteDeps): Posting {
  /** Forms with a recording being read now, per client. */
  const recordingBodies = new Map<string, number>();
  async function overLimit(
    c: SiteContext,
    key: string,
    limit: number,
    windowSeconds: number,
    limits: VisitorLimits = deps.limits,
  ) {
    if (limit <= 0) return null;
    const taken = await limits.take(`${c.env.account.id}:${key}`, limit, windowSeconds);
    if (taken.allowed) return null;
    return tooMany(c, taken.resetSeconds);
  }

  /**
   * The checks every form passes once read: its CSRF token (bound to the visitor's cookie, or a
   * form token the route checks itself), then the per-address limit.
   */
  async function checked(
    c: SiteContext,
    fields: Map<string, string[]>,
    formToken?: FormTokenCheck,
    limit = { name: 'ip', perMinute: deps.rates.perIpPerMinute },
  ) {
    const token = fields.get('csrf');
    const valid = formToken
      ? token?.length === 1 && (await formToken(token[0] ?? ''))
      : c.var.csrf !== '' && token?.length === 1 && token[0] === c.var.csrf;
    if (!valid) {
      return refused(c, 403, 'This form has expired or your browser did not send its cookie.');
    }
    return overLimit(c, `${limit.name}:${c.env.visit.clientIp}`, limit.perMinute, 60);
  }

  return {
    sameOrigin: csrf({ origin: (origin, c: SiteContext) => origin === c.env.account.host }),
    overLimit,
    async mailLimit(c, email) {
      const address = `email:${email.trim().toLowerCase()}`;
      return (
        (await overLimit(c, address, deps.rates.perEmailPer15Minutes, 900)) ??
        (await overLimit(c, 'unconfirmed-mail', deps.rates.unconfirmedMailPerAccountPerHour, 3600))
      );
    },
    async readPost(c, formToken, limit) {
      const form = await deps.readForm(c.req.raw);
      if (!form.ok) return refused(c, form.status, form.message);
      return (await checked(c, form.fields, formToken, limit)) ?? form.fields;
    },
    async readPostWithRecording(c, formToken) {
      // A client sends this many recordings at once, each a body of up to MEDIA_MAX_BYTES.
      const client = c.env.visit.clientIp;
      const sending = recordingBodies.get(client) ?? 0;
      if (sending >= RECORDING_BODIES_PER_CLIENT) {
        return page(c, 429, forms.tooMany(5), 'Too many attempts', { headers: { 'retry-after': '5' } });
      }
      recordingBodies.set(client, sending + 1);
      try {
        // The token and the limit are checked with the fields before the file, before its bytes
        // are kept (undefined: no file came, and they are checked once the form is read).
        let verdict: Response | null | undefined;
        const form = await deps.readForm(c.req.raw, {
          accountId: c.env.account.id,
          field: RECORDING_FIELD,
          admit: async (fields) => {
            verdict = await checked(c, fields, formToken);
            return verdict === null;
          },
        });
        if (verdict) {
          if (form.ok && form.file) await deps.media.store.remove(form.file.key);
          return verdict;
        }
        if (!form.ok) return refused(c, form.status, form.message);
        const refusal = verdict === undefined ? await checked(c, form.fields, formToken) : null;
        if (refusal && form.file) await deps.media.store.remove(form.file.key);
        if (refusal) return refusal;
        const sent = form.fields.get('poster')?.[0] ?? '';
        if (sent === '') return form;
        const poster = posterFromForm(sent);
        if ('problem' in poster) {
          if (form.file) await deps.media.store.remove(form.file.key);
          return refused(c, 422, poster.problem);
        }
        return { ...form, poster: poster.bytes };
      } finally {
        const left = (recordingBodies.get(client) ?? 1) - 1;
        if (left > 0) recordingBodies.set(client, left);
        else recordingBodies.delete(client);
      }
    },
    link: signInLinks,
  };
}

/** How an account's sign-in links are made (the site's forms, and a reply taken in by mail). */
export const signInLinks = (account: SiteAccount): LinkOptions => ({
  signInUrl: (token) => `${account.host}/sign-in/${token}`,
  ttlSeconds: SIGN_IN_LINK_TTL_SECONDS,
  newToken: secret,
});

/** A form token that is not bound to a cookie (an embedded form's): valid or not. */
export type FormTokenCheck = (token: string) => Promise<boolean>;

/** The reply form's file input. */
export const RECORDING_FIELD = 'media';

/** What a route module is given: the server's dependencies and the form checks. */
export interface SiteKit {
  deps: SiteDeps;
  posting: Posting;
}
