import { requireIntakeManager, type Viewer } from '../conversations/access.ts';
import type { SiteStore, UpdateConversationStore } from '../conversations/ports.ts';
import { postReply } from '../conversations/post-reply.ts';
import { startTeamConversation, type TeamStartDeps } from '../conversations/start-team-conversation.ts';
import { TITLE_MAX_LENGTH } from '../conversations/title.ts';
import { updateConversation } from '../conversations/update-conversation.ts';
import { measureRecording } from '../media/measure-recording.ts';
import { keepPoster, type MediaDeps, removeRecording } from '../media/media.ts';
import type { ReceivedFile } from '../media/uploads.ts';
import type { LinkOptions, PeopleDeps } from '../people/people.ts';
import type { SiteAccount } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { changeIntakePage } from './change-intake-page.ts';
import type { IntakePageAdminStore } from './intake-pages.ts';

/*
 * An intake page's welcome recorded right on the team's page for it: the recording is measured as
 * a reply's is, kept as the first message of a private conversation of the team ("Welcome video:
 * <page>", closed and archived at once, so it waits in no one's inbox and stays among the team's
 * recordings to choose again), and becomes the page's welcome recording.
 */

export interface WelcomeRecordingForm {
  /** The recording as the form sent it, already on the store; none: the form is refused. */
  file: ReceivedFile | undefined;
  /** What the recorder says it recorded (a screen, a camera): only that; the server measures. */
  mediaKind?: string | undefined;
  /** The recorder's still of its first second (checked by posterFromForm). */
  poster?: Uint8Array | null | undefined;
  /** The form's own token: the same form sent twice records once. */
  submitKey?: string | undefined;
}

export type RecordWelcomeOutcome =
  | { kind: 'recorded'; messageId: number; slug: string }
  | { kind: 'refused'; problem: string }
  /** The server measures too many recordings just now (503). */
  | { kind: 'busy'; problem: string };

export async function recordIntakeWelcome(
  deps: TeamStartDeps &
    PeopleDeps & {
      site: SiteStore;
      media: MediaDeps;
      intakePageAdmin: IntakePageAdminStore;
      updateConversationStore: UpdateConversationStore;
    },
  account: SiteAccount,
  recorder: { viewer: Viewer; name: string },
  pageId: number,
  form: WelcomeRecordingForm,
  options: { link: LinkOptions; sender: string },
): Promise<RecordWelcomeOutcome> {
  const { viewer } = recorder;
  const drop = async () => {
    if (form.file) await deps.media.store.remove(form.file.key);
  };
  const page = await deps.intakePageAdmin.find(account.id, pageId);
  if (!viewer || !page) {
    await drop();
    throw new DomainError('intake_page_not_found');
  }
  try {
    requireIntakeManager(viewer);
  } catch (e) {
    await drop();
    throw e;
  }
  if (!form.file) return { kind: 'refused', problem: 'Record a welcome video, or choose a file of one.' };
  const measured = await measureRecording(deps.media, form.file, form.mediaKind, options.sender);
  if (!measured.ok) {
    return measured.busy ? { kind: 'busy', problem: measured.problem } : { kind: 'refused', problem: measured.problem };
  }
  const media = await keepPoster(deps.media, measured.media, form.poster);
  const started = await startTeamConversation(
    deps,
    account,
    { viewer, name: recorder.name },
    {
      title: `Welcome video: ${page.name}`.slice(0, TITLE_MAX_LENGTH),
      text: '',
      anyoneCanPost: false,
      submitKey: form.submitKey,
    },
  );
  const posted =
    started.kind === 'started'
      ? await postReply(
          deps,
          account,
          started.slug,
          viewer,
          { text: '', media, submitKey: form.submitKey },
          options.link,
        )
      : null;
  if (posted?.kind !== 'posted' || !posted.created) await removeRecording(deps.media.store, media.key);
  if (started.kind === 'refused') return started;
  if (posted?.kind !== 'posted') return { kind: 'refused', problem: 'The recording could not be kept. Try again.' };
  if (posted.created) {
    await updateConversation(deps, account, { conversationId: started.id, state: 'closed', archived: true });
  }
  await changeIntakePage(
    deps.intakePageAdmin,
    account,
    pageId,
    { welcome_recording_message_id: posted.messageId },
    viewer,
  );
  return { kind: 'recorded', messageId: posted.messageId, slug: started.slug };
}
