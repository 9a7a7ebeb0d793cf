import { measureRecording } from '../media/measure-recording.ts';
import { keepPoster, type MediaDeps, removeRecording } from '../media/media.ts';
import type { ReceivedFile, Uploads, UploadVisitor } from '../media/uploads.ts';
import type { LinkOptions, PeopleDeps } from '../people/people.ts';
import type { SiteAccount } from '../records.ts';
import type { Viewer } from './access.ts';
import type { SiteStore } from './ports.ts';
import { postReply, type ReplyForm, type ReplyOutcome, replyTarget } from './post-reply.ts';

/** Where a reply's recording is: a file sent with the form, a finished resumable upload, or none. */
export type ReplyRecording =
  | { kind: 'file'; file: ReceivedFile }
  | { kind: 'upload'; id: string; visitor: UploadVisitor }
  | { kind: 'none' };

export type SendReplyOutcome =
  | ReplyOutcome
  /** The server measures too many recordings just now: send it again in a moment (503). */
  | { kind: 'busy'; problem: string }
  /** The uploads cannot be read just now (503). */
  | { kind: 'unavailable'; problem: string };

/**
 * A reply from the conversation's page with what came with it: its recording taken (from the
 * form or from the upload it names, which must be the visitor's and for this conversation),
 * measured by the server (`mediaKind` only tells a screen recording from a camera one), then
 * posted by postReply's rules. The recording is kept only with the message it became (or the
 * reply waiting for its link); every other way it is removed. The same form sent again after its
 * upload became a message answers with that message.
 */
export async function sendReply(
  deps: PeopleDeps & { site: SiteStore; media: MediaDeps; uploads: Uploads },
  account: SiteAccount,
  slug: string,
  viewer: Viewer,
  form: Omit<ReplyForm, 'media'> & { mediaKind?: string | undefined },
  recording: ReplyRecording,
  options: {
    link: LinkOptions;
    granted: number | null;
    sender: string;
    /** The poster the recorder made (checked by posterFromForm), kept beside a video or screen recording. */
    poster?: Uint8Array | null | undefined;
  },
): Promise<SendReplyOutcome> {
  let file = recording.kind === 'file' ? recording.file : null;
  if (recording.kind === 'upload') {
    const target = await replyTarget(deps, account, slug, viewer, options.granted);
    if (!target) return { kind: 'not_found' };
    const taken = await deps.uploads.take(recording.id, recording.visitor, target.id);
    if ('message' in taken) {
      if (taken.status === 503) return { kind: 'unavailable', problem: taken.message };
      // A browser's retry after a lost answer: its upload became the message this form posted.
      const posted = form.submitKey ? await deps.replies.posted(account.id, target.id, form.submitKey) : null;
      if (posted) return { kind: 'posted', messageId: posted.id, slug: target.slug, created: false };
      return { kind: 'refused', problem: taken.message };
    }
    file = taken;
  }
  const measured = file ? await measureRecording(deps.media, file, form.mediaKind, options.sender) : null;
  if (measured && !measured.ok) {
    return measured.busy ? { kind: 'busy', problem: measured.problem } : { kind: 'refused', problem: measured.problem };
  }
  const media = measured?.media ? await keepPoster(deps.media, measured.media, options.poster) : undefined;
  const outcome = await postReply(deps, account, slug, viewer, { ...form, media }, options.link, options.granted);
  const kept = (outcome.kind === 'posted' && outcome.created) || outcome.kind === 'check_email';
  if (media && !kept) await removeRecording(deps.media.store, media.key);
  return outcome;
}
