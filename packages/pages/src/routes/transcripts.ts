import { fixTranscript, managesMembers, type PageMessageRecord, type TranscriptFix, type Viewer } from '@convo/domain';
import { Hono } from 'hono';
import { notFound, refused } from '../frame.ts';
import type { SiteKit } from '../posting.ts';
import { field, type SiteContext, type SiteEnv, viewerOf } from '../request.ts';
import type { TranscriptsDisplay } from '../views/transcripts.ts';

/*
 * Transcripts on the pages (docs/pages.md, "Transcripts and captions"): under each recording its
 * words, folded, and captions on its player, once the operator's speech engine has made them.
 * Whoever sees the message sees its transcript: it says what the recording says. The team sees
 * where one stands that is not made, makes one again, and corrects one's words.
 */

/** How the transcripts of `messages` are shown to this reader (`viewer`; the team's forms need a CSRF token). */
export async function transcriptsDisplay(
  { deps }: Pick<SiteKit, 'deps'>,
  c: SiteContext,
  viewer: Viewer,
  messages: readonly PageMessageRecord[],
): Promise<TranscriptsDisplay> {
  const recorded = messages.filter((m) => m.hostedMedia).map((m) => m.id);
  return {
    kept: recorded.length === 0 ? new Map() : await deps.transcripts.byMessages(c.env.account.id, recorded),
    transcribing: deps.transcribing,
    team: managesMembers(viewer) && c.var.csrf ? { csrf: c.var.csrf } : null,
  };
}

export function transcriptRoutes({ deps, posting }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  // The team corrects a transcript's words (`action=correct`, `lines`), or makes it again (`retry`).
  routes.post('/c/:slug/messages/:id/transcript', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const id = c.req.param('id');
    if (!/^[1-9]\d{0,9}$/.test(id)) return notFound(c);
    const action = field(fields, 'action');
    const fix: TranscriptFix | null =
      action === 'retry'
        ? { action }
        : action === 'correct'
          ? { action, lines: (field(fields, 'lines') ?? '').split(/\r\n|\r|\n/) }
          : null;
    if (!fix) return refused(c, 400, 'Choose to correct the transcript or to make it again.');
    const outcome = await fixTranscript(deps, c.env.account, viewerOf(c), c.req.param('slug'), Number(id), fix);
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'forbidden':
        return refused(c, 403, outcome.problem);
      case 'invalid':
        return refused(c, 422, outcome.problem);
      case 'done':
        return c.redirect(`/c/${outcome.slug}#message-${id}`, 303);
    }
  });

  return routes;
}
