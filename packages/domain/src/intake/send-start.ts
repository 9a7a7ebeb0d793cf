import { measureRecording } from '../media/measure-recording.ts';
import { keepPoster, type MediaDeps, removeRecording } from '../media/media.ts';
import type { ReceivedFile } from '../media/uploads.ts';
import type { SiteAccount } from '../records.ts';
import {
  type IntakeForm,
  type IntakeStore,
  type PublicIntakePage,
  type StartOutcome,
  startConversation,
} from './start-conversation.ts';

export type SendStartOutcome =
  | StartOutcome
  /** The server measures too many recordings just now: send it again in a moment (503). */
  | { kind: 'busy'; problem: string };

/**
 * A start from an intake page's form with what came with it: its recording measured by the server
 * (`mediaKind` only tells a screen recording from a camera one), then started by
 * startConversation's rules on the page as read; a page changed since it was read is read again
 * (`reread`) and, if it is still the same page, started from as it is now. The recording is kept
 * only with the conversation it started; every other way it is removed. Answers the outcome and
 * the page it was decided on (null when the page is gone).
 */
export async function sendStart(
  deps: { intake: IntakeStore; media: MediaDeps },
  account: SiteAccount,
  page: PublicIntakePage,
  form: Omit<IntakeForm, 'media'> & { mediaKind?: string | undefined },
  file: ReceivedFile | null,
  options: {
    /** Signed in: the form's name and address are theirs (no link back is mailed). */
    signedIn: boolean;
    sender: string;
    reread: () => Promise<PublicIntakePage | null>;
    /** The poster the recorder made (checked by posterFromForm). */
    poster?: Uint8Array | null | undefined;
  },
): Promise<{ outcome: SendStartOutcome; page: PublicIntakePage | null }> {
  const measured = file ? await measureRecording(deps.media, file, form.mediaKind, options.sender) : null;
  if (measured && !measured.ok) {
    const outcome: SendStartOutcome = measured.busy
      ? { kind: 'busy', problem: measured.problem }
      : { kind: 'refused', problem: measured.problem };
    return { outcome, page };
  }
  const media = measured?.media ? await keepPoster(deps.media, measured.media, options.poster) : undefined;
  const startOn = (on: PublicIntakePage) =>
    startConversation({ intake: deps.intake }, account, on, { ...form, media }, { signedIn: options.signedIn });
  let current: PublicIntakePage | null = page;
  let outcome: StartOutcome = await startOn(page);
  if (outcome.kind === 'page_changed') {
    current = await options.reread();
    outcome = current && current.id === page.id ? await startOn(current) : outcome;
  }
  if (media && !(outcome.kind === 'started' && outcome.created)) await removeRecording(deps.media.store, media.key);
  return { outcome, page: current };
}
