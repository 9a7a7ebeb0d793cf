import {
  INTAKE_FORM_USED,
  INTAKE_PAGE_KEY_PATTERN,
  managesMembers,
  type PublicIntakePage,
  sendStart,
} from '@convo/domain';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { secret } from '../cookies.ts';
import { busy, notFound, type PageStatus, page, refused } from '../frame.ts';
import {
  embedFormToken,
  embedFormTokenValid,
  intakeSubmitKey,
  intakeSubmitKeyIsFor,
  keepPass,
  newGrant,
  PASS_CODE_SECONDS,
  passCodeHash,
  passOf,
} from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import { field, type SiteContext, type SiteEnv, viewerOf } from '../request.ts';
import { type IntakeDraft, intakePage } from '../views/intake.ts';
import type { Html } from '../views/layout.ts';

/** Where an intake page is: `/p/<key>`, its embed, or `/` for the primary one. */
export interface IntakeAddress {
  /** null: the account's primary intake page, at `/`. */
  key: string | null;
  embed: boolean;
}

/**
 * The intake pages visitors use: `/p/<key>`, `/embeds/p/<key>` (for another site's iframe), and
 * the primary one at `/` for anyone not on the team (homeRoutes hands it over). Each shows its
 * title, welcome and form; the form starts a private conversation with the team and lands the
 * visitor on it (the embed, in the frame), recognised on this device by its pass.
 */
export function intakeRoutes({ deps, posting }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  /** `recent`: the page as this process last read it will do (a start checks it is still so). */
  const find = (c: SiteContext, at: IntakeAddress, recent = false) =>
    // A key of another form is no page (keys are matched ignoring case).
    at.key !== null && !INTAKE_PAGE_KEY_PATTERN.test(at.key.toLowerCase())
      ? null
      : deps.intake.page(c.env.account.id, at.key, { recent });

  const action = (p: PublicIntakePage, at: IntakeAddress) =>
    at.key === null ? '/' : `${at.embed ? '/embeds' : ''}/p/${p.key}`;

  async function show(
    c: SiteContext,
    p: PublicIntakePage,
    at: IntakeAddress,
    status: PageStatus = 200,
    draft?: IntakeDraft,
    /** What comes above the page's form (a participant's own conversations, at `/`). */
    lead: Html = html``,
  ) {
    const account = c.env.account;
    const key = await deps.secrets.signingKey();
    const token = at.embed ? embedFormToken(key, account.id, p.id) : c.var.csrf;
    const content = intakePage(p, {
      accountName: account.name,
      accountKey: account.key,
      action: action(p, at),
      token,
      submitKey: intakeSubmitKey(key, token),
      signedIn: at.embed ? null : (c.var.signedIn?.user ?? null),
      team: !at.embed && managesMembers(viewerOf(c)),
      draft,
      limits: deps.media.limits,
    });
    return page(c, status, html`${lead}${content}`, p.title || account.name, {
      form: !at.embed,
      embed: at.embed,
      // The form's token is this visitor's; an intake page is for people, not for indexes of forms.
      noindex: true,
      canonical: `${account.host}${at.key === null ? '/' : `/p/${p.key}`}`,
    });
  }

  /** GET: the page, or 404 for a key that is no enabled page of this account. */
  async function open(c: SiteContext, at: IntakeAddress) {
    const p = await find(c, at);
    return p ? show(c, p, at) : notFound(c);
  }

  /** POST: start the conversation, and land on it. */
  async function start(c: SiteContext, at: IntakeAddress) {
    const found = await find(c, at, true);
    if (!found) return notFound(c);
    const account = c.env.account;
    if (!at.embed && managesMembers(viewerOf(c))) {
      return refused(c, 403, 'Team members do not start conversations on the intake page: visitors do.');
    }
    const key = at.embed ? await deps.secrets.signingKey() : '';
    const read = await posting.readPostWithRecording(
      c,
      at.embed ? async (token) => embedFormTokenValid(key, account.id, found.id, token) : undefined,
    );
    if (read instanceof Response) return read;
    const { fields } = read;
    const signedIn = at.embed ? null : (c.var.signedIn?.user ?? null);
    const form = {
      text: field(fields, 'text') ?? '',
      name: signedIn?.name ?? field(fields, 'name'),
      email: signedIn?.email ?? field(fields, 'email'),
      submitKey: field(fields, 'submit'),
    };
    const draft = { text: form.text, name: form.name, email: form.email };
    const email = form.email?.trim().toLowerCase();
    if (email && !signedIn) {
      const limited = await posting.mailLimit(c, email);
      if (limited) {
        if (read.file) await deps.media.store.remove(read.file.key);
        return limited;
      }
    }
    const { outcome, page: p } = await sendStart(
      deps,
      account,
      found,
      { ...form, mediaKind: field(fields, 'media_kind') },
      read.file ?? null,
      {
        // A signed-in visitor needs no link back: their session opens it.
        signedIn: signedIn !== null,
        sender: c.env.visit.clientIp,
        // Read earlier and changed since: started from the page as it is now, if it is the same page.
        reread: async () => find(c, at),
        poster: read.poster,
      },
    );
    if (outcome.kind === 'busy') return busy(c, outcome.problem);
    if (!p || outcome.kind === 'page_changed') return notFound(c);
    if (outcome.kind === 'refused') return show(c, p, at, 422, { ...draft, problem: outcome.problem });
    // The same form again opens its conversation only where it was started: the device whose form
    // it is (its token is bound to the device's), whose pass holds it, or the person signed in
    // whose start it was. A form token copied elsewhere opens nothing.
    const mine =
      outcome.created ||
      (signedIn !== null && signedIn.id === outcome.authorId) ||
      intakeSubmitKeyIsFor(await deps.secrets.signingKey(), field(fields, 'csrf') ?? '', form.submitKey ?? '') ||
      (await passOf(deps, c)).has(outcome.conversationId);
    if (!mine) return show(c, p, at, 422, { ...draft, problem: INTAKE_FORM_USED });
    const landing = (target: string) => c.redirect(`${target}#message-${outcome.messageId}`, 303);
    // Issued at the start (a form sent again gets no newer pass than the start's: the team's end
    // of the starting devices' access holds).
    const grant = newGrant(outcome.conversationId, outcome.authorId, outcome.startedAt);
    if (!at.embed) {
      if (!signedIn) await keepPass(deps, c, grant);
      // POST/redirect/GET: reloading the conversation it lands on never starts another.
      return landing(`/c/${outcome.slug}`);
    }
    // The frame's first load takes the code and keeps the pass as the frame's own cookie: the
    // address never carries anything that opens the conversation a second time.
    const code = secret();
    await deps.intake.keepPassCode(account.id, passCodeHash(code), grant, PASS_CODE_SECONDS);
    return landing(`/embeds/conversations/${account.key}/${outcome.slug}?code=${code}`);
  }

  routes.get('/p/:key', (c) => open(c, { key: c.req.param('key'), embed: false }));
  routes.post('/p/:key', posting.sameOrigin, (c) => start(c, { key: c.req.param('key'), embed: false }));
  routes.get('/embeds/p/:key', (c) => open(c, { key: c.req.param('key'), embed: true }));
  routes.post('/embeds/p/:key', posting.sameOrigin, (c) => start(c, { key: c.req.param('key'), embed: true }));

  return { routes, find, show, start };
}
