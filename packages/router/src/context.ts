import {
  type Authenticated,
  type ConversationStore,
  type IntakePageAdminStore,
  type IntakePageStore,
  type MailOutbox,
  type MediaDeps,
  type MediaReferences,
  type MemberStore,
  type MessageStore,
  type MessageTemplateStore,
  type PlayStore,
  type RateLimitState,
  type ReactionStore,
  type ReceivedFile,
  type ReplyStore,
  type TeamStore,
  tokenFromAuthorization,
  type UpdateConversationStore,
  type WebhookEndpointStore,
  type WebhookTargets,
  type WorkflowStore,
} from '@convo/domain';
import type { ConversationListCache } from './conversation-list-cache.ts';

/**
 * What the procedures get from the process that serves them: the domain's ports, built once in
 * the composition root (apps/api/src/start/services.ts), and the few services a transport needs. No ORM
 * type appears here, so the AppRouter type that clients import carries none.
 */
export interface ProcedureServices {
  conversations: ConversationStore;
  members: MemberStore;
  /** Queues mail (invitations); a mail worker in every process sends it. */
  outbox: MailOutbox;
  intakePages: IntakePageStore;
  /** The account's intake pages, as its team manages them. */
  intakePageAdmin: IntakePageAdminStore;
  webhookEndpoints: WebhookEndpointStore;
  /** The account's workflows, as its team saves them. */
  workflows: WorkflowStore;
  /** Pages of conversations remembered by their account's change mark (conversation-list-cache.ts). */
  conversationLists: ConversationListCache;
  /** Where webhooks may be sent (https, public addresses), as this server's config allows. */
  webhookTargets: WebhookTargets;
  /** What update_conversation and delete_conversation write. */
  updateConversationStore: UpdateConversationStore;
  /** Where recordings are kept (a deleted conversation's are removed) and measured (create_message's). */
  media: MediaDeps;
  /** Which recordings a message still holds (another conversation's may hold the same). */
  mediaReferences: MediaReferences;
  /** The account's team. */
  teamStore: TeamStore;
  /** The messages resource's reads (create_message's answer, get_messages). */
  messageStore: MessageStore;
  /** The played receipts (get_message_views). */
  plays: PlayStore;
  /** Reactions (add_reaction, remove_reaction). */
  reactions: ReactionStore;
  /** The team's message templates. */
  messageTemplates: MessageTemplateStore;
  /** Where a message is posted: the same statement as a reply on a conversation's page. */
  replies: ReplyStore;
  /** The account an API token acts for; null for an unknown or revoked token. */
  authenticate(token: string): Promise<Authenticated | null>;
  /** Records that a token was used; throttled, so not a write per request. */
  touchToken(tokenId: number): Promise<void>;
  /** Spends one request of the token's quota; null when the token is not limited. */
  rateLimit(tokenId: number, accountId: number, accountLimit: number | null): Promise<RateLimitState | null>;
  /** True when an error means the database cannot serve just now (503), not that the request is wrong. */
  isUnavailable(err: unknown): boolean;
  /** Hold every answer to its operation's output schema at run time (a mismatch is a 500). */
  checkAnswers: boolean;
}

/**
 * What authentication learned of a request, for the transport: the account (the request log) and
 * the token's quota (the RateLimit-* headers). Written by the one middleware that checks the
 * token; what a procedure itself tells the transport is its typed answer (answer.ts).
 */
export interface AuthNotes {
  accountId?: number;
  rateLimit?: RateLimitState;
}

/** One request as the transports see it: its id, and what its procedure leaves for the response. */
export interface RequestState {
  id: string;
  auth: AuthNotes;
  /** What answered, as /metrics counts it: set by whichever route matched (`other` when none did). */
  label?: string;
}

export interface Context {
  services: ProcedureServices;
  idempotencyKey: string | null;
  requestId: string;
  auth: AuthNotes;
  /** tRPC's response headers (its fetch adapter's `resHeaders`); absent on REST's calls. */
  resHeaders?: Headers;
  /**
   * The request's token resolved to its account, or null. Looked up once per HTTP request,
   * however many calls a tRPC batch carries, and before a REST body is read.
   */
  authenticate(): Promise<Authenticated | null>;
  /** The recording that came with the request (REST's multipart body), for the procedure that takes one. */
  recording: ReceivedRecording;
}

/** The multipart body's file that is a recording (create_message's), and what the API's document says of it. */
export const RECORDING_FIELD = 'recording';
export const RECORDING_FIELD_DOC =
  'A recording (video or audio: WebM, MP4, Ogg, MP3, M4A or WAV), in a multipart/form-data body beside the other ' +
  'members as form fields. The server keeps it as it arrives and measures it as the reply form’s recordings are ' +
  '(kind and duration from the bytes; `recording_kind: screen` marks a screen recording): the message is of that ' +
  'type and its `download_media_url` plays it. Within the server’s limits of size and length (MEDIA_MAX_BYTES, ' +
  'MEDIA_MAX_SECONDS); anything else is 422 and nothing is kept. Not over tRPC (its calls are JSON).';

/**
 * A recording kept in the media store as its request arrived: the procedure that takes it
 * (`take`) answers for it from then on; whatever is left when the call ends is the transport's to
 * remove (a refusal before the procedure ran: auth, rate limit, input).
 */
export class ReceivedRecording {
  private file: ReceivedFile | null = null;

  /** The transport keeps what arrived. */
  hold(file: ReceivedFile): void {
    this.file = file;
  }

  take(): ReceivedFile | undefined {
    const file = this.file ?? undefined;
    this.file = null;
    return file;
  }

  /** What nobody took. */
  left(): ReceivedFile | null {
    return this.file;
  }
}

export function createContext(
  services: ProcedureServices,
  req: Request,
  request: RequestState,
  recording = new ReceivedRecording(),
): Context {
  let authenticated: Promise<Authenticated | null> | undefined;
  return {
    services,
    recording,
    idempotencyKey: req.headers.get('idempotency-key'),
    requestId: request.id,
    auth: request.auth,
    authenticate() {
      if (!authenticated) {
        const token = tokenFromAuthorization(req.headers.get('authorization'));
        authenticated = token ? services.authenticate(token) : Promise.resolve(null);
      }
      return authenticated;
    },
  };
}
