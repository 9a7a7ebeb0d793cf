import type { Readable } from 'node:stream';
import type { ReceivedFile, UploadRefusal, Uploads, UploadVisitor } from '@convo/domain';
import { type MediaStore, MediaTooLarge, MediaUnavailable, newMediaKey, UPLOAD_ID } from '@convo/domain';
import type { Server } from '@tus/server';
import { type DataStore, ERRORS, type Upload } from '@tus/utils';
import type { Logger } from '../logger.ts';
import { storageUnavailable } from './unavailable.ts';

/*
 * Resumable uploads (tus 1.0, @tus/server) in front of the media store. The tus server speaks the
 * protocol and keeps the bytes in its data store (a directory, or the S3 bucket); this adapter
 * decides whose each upload is. A creation asks the site which conversation it is for and keeps
 * the account, the owner (a hash of the visitor's cookie) and the conversation in the upload's
 * own metadata, overwriting whatever the client said; every later request is answered only for
 * that owner, anyone else getting the missing upload's 404.
 */

/** A tus data store whose finished bytes can be read back (the file and S3 stores both can). */
export interface UploadStore extends DataStore {
  read(id: string): Readable | Promise<Readable>;
}

/** Where uploads are kept, and how their ids are listed for the sweep. */
export interface UploadBackend {
  store: UploadStore;
  /** The ids of every upload kept, finished or not, in no particular order. */
  ids(): AsyncIterable<string>;
  /** Bytes the disk they are kept on can still take; null where that is not ours to know (a bucket). */
  freeBytes?(): Promise<number | null>;
}

/** Where recordings are kept, and where their resumable uploads wait until they are posted. */
export interface MediaBackend {
  store: MediaStore;
  uploads: UploadBackend;
}

/** An upload not made into a message within this time is deleted, finished or not. */
export const UPLOAD_EXPIRY_HOURS = 24;

/** An upload that stopped growing before its end is deleted this long after it began. */
export const UPLOAD_UNFINISHED_HOURS = 2;

/**
 * What unposted uploads may hold, counted as each one's declared length or, for one whose length
 * comes at its end, the most a recording may be: per visitor, per account, in all; and the disk
 * space a new upload must leave free.
 */
export interface UploadQuotas {
  perVisitorBytes: number;
  perAccountBytes: number;
  totalBytes: number;
  diskReserveBytes: number;
}

/** Quotas from the largest recording (MEDIA_MAX_BYTES) unless the operator says otherwise. */
export const defaultUploadQuotas = (maxBytes: number): UploadQuotas => ({
  perVisitorBytes: 2 * maxBytes,
  perAccountBytes: 20 * maxBytes,
  totalBytes: 100 * maxBytes,
  diskReserveBytes: 1024 * 1024 * 1024,
});

const FULL = 'Recordings cannot be taken just now: too much is being uploaded. Try again later.';

interface Visit {
  visitor: UploadVisitor;
  admit: (metadata: Record<string, string | null>) => Promise<number | UploadRefusal>;
  /** Why the request's bytes stopped before their end, when it was the client's doing. */
  cut?: 'stalled' | 'gone';
}

export class TusUploads implements Uploads {
  /**
   * The tus server, made with the first upload request: some 12 MB of memory (beside the
   * stores' own @tus/utils) that a server nobody uploads to need not hold.
   */
  private server: Promise<Server> | undefined;
  private readonly serverOptions: ConstructorParameters<typeof Server>[0];
  /** The visitor each request in flight is answered for (the tus server hands its hooks the request). */
  private readonly visits = new WeakMap<Request, Visit>();

  private readonly backend: UploadBackend;
  private readonly media: MediaStore;
  private readonly maxBytes: number;

  private readonly quotas: UploadQuotas;

  constructor(
    backend: UploadBackend,
    media: MediaStore,
    maxBytes: number,
    logger: Logger,
    quotas: UploadQuotas = defaultUploadQuotas(maxBytes),
  ) {
    this.backend = backend;
    this.media = media;
    this.maxBytes = maxBytes;
    this.quotas = quotas;
    const visitOf = (req: Request): Visit => {
      const visit = this.visits.get(req);
      if (!visit) throw ERRORS.FILE_NOT_FOUND;
      return visit;
    };
    this.serverOptions = {
      path: '/uploads',
      datastore: backend.store,
      relativeLocation: true,
      maxSize: maxBytes,
      // The site's own pages only: no other origin is ever told it may read an answer.
      allowedOrigins: () => false,
      onUploadCreate: async (req, upload) => {
        const visit = visitOf(req);
        const admitted = await visit.admit(upload.metadata ?? {});
        if (typeof admitted !== 'number') throw { status_code: admitted.status, body: `${admitted.message}\n` };
        // Within what unposted uploads may hold, and what the disk can take: else 507.
        const wants = upload.size ?? this.maxBytes;
        if (!(await this.room(visit.visitor, wants))) throw { status_code: 507, body: `${FULL}\n` };
        return {
          metadata: {
            account: String(visit.visitor.accountId),
            owner: visit.visitor.owner,
            conversation: String(admitted),
          },
        };
      },
      onIncomingRequest: async (req, id) => {
        if (req.method === 'POST') return;
        const upload = await this.find(id);
        if (!upload || !belongs(upload, visitOf(req).visitor)) throw ERRORS.FILE_NOT_FOUND;
      },
      onResponseError: (req, err) => {
        // The client stopped sending: what came is kept, and the upload resumes from there.
        const cut = this.visits.get(req)?.cut;
        if (cut === 'stalled') return { status_code: 408, body: 'The upload stopped arriving: resume it.\n' };
        if (cut === 'gone') return { status_code: 400, body: 'The upload did not arrive whole: resume it.\n' };
        if (!(err instanceof Error)) return undefined;
        if (storageUnavailable(err)) {
          return { status_code: 503, body: 'Recordings cannot be kept right now. Try again in a moment.\n' };
        }
        logger.error({ err }, 'upload failed');
        return { status_code: 500, body: 'The upload failed on the server.\n' };
      },
    };
  }

  /** `stallMs`: a PATCH whose bytes stop coming for this long is let go (408), keeping what came. */
  async handle(req: Request, visitor: UploadVisitor, admit: Visit['admit'], stallMs?: number): Promise<Response> {
    const visit: Visit = { visitor, admit };
    const guarded = req.method === 'PATCH' && req.body && stallMs ? watched(req, req.body, stallMs, visit) : req;
    this.visits.set(guarded, visit);
    try {
      this.server ??= import('@tus/server').then(({ Server }) => new Server(this.serverOptions));
      return await (await this.server).handleWeb(guarded);
    } finally {
      this.visits.delete(guarded);
    }
  }

  async take(id: string, visitor: UploadVisitor, conversationId: number): Promise<ReceivedFile | UploadRefusal> {
    const upload = UPLOAD_ID.test(id) ? await this.find(id) : null;
    if (!upload || !belongs(upload, visitor) || upload.metadata?.conversation !== String(conversationId)) {
      return { status: 404, message: 'That recording’s upload is not here any more: record it again.' };
    }
    if (upload.size === undefined || upload.offset !== upload.size) {
      return { status: 400, message: 'The recording has not finished uploading: wait for it, then post again.' };
    }
    const key = newMediaKey(visitor.accountId);
    try {
      const { bytes } = await this.media.put(key, await this.backend.store.read(id), this.maxBytes);
      await this.backend.store.remove(id);
      return { key, bytes };
    } catch (err) {
      await this.media.remove(key).catch(() => undefined);
      if (err instanceof MediaTooLarge) return { status: 413, message: err.message };
      if (err instanceof MediaUnavailable || storageUnavailable(err)) {
        return { status: 503, message: 'Recordings cannot be kept right now. Try again in a moment.' };
      }
      throw err;
    }
  }

  /**
   * Deletes the uploads older than UPLOAD_EXPIRY_HOURS, finished or not (finished and never
   * posted), and those that stopped growing before their end, UPLOAD_UNFINISHED_HOURS after they
   * began. Answers how many.
   */
  async sweep(now = new Date()): Promise<number> {
    const before = now.getTime() - UPLOAD_EXPIRY_HOURS * 3600_000;
    const unfinishedBefore = now.getTime() - UPLOAD_UNFINISHED_HOURS * 3600_000;
    let removed = 0;
    for await (const id of this.backend.ids()) {
      const upload = await this.find(id);
      const made = upload?.creation_date ? Date.parse(upload.creation_date) : Number.NaN;
      const finished = upload?.size !== undefined && upload.offset === upload.size;
      if (upload && (made < before || (!finished && made < unfinishedBefore))) {
        await this.backend.store.remove(id);
        removed += 1;
      }
    }
    return removed;
  }

  /** Whether `visitor` may begin an upload of `wants` bytes: its quotas, and the disk's room. */
  private async room(visitor: UploadVisitor, wants: number): Promise<boolean> {
    let mine = 0;
    let account = 0;
    let total = 0;
    for await (const id of this.backend.ids()) {
      const upload = await this.find(id);
      if (!upload) continue;
      const held = upload.size ?? this.maxBytes;
      total += held;
      if (upload.metadata?.account === String(visitor.accountId)) {
        account += held;
        if (upload.metadata?.owner === visitor.owner) mine += held;
      }
    }
    const q = this.quotas;
    if (mine + wants > q.perVisitorBytes || account + wants > q.perAccountBytes || total + wants > q.totalBytes) {
      return false;
    }
    const free = (await this.backend.freeBytes?.()) ?? null;
    return free === null || free - wants >= q.diskReserveBytes;
  }

  private async find(id: string): Promise<Upload | null> {
    try {
      return await this.backend.store.getUpload(id);
    } catch (err) {
      if (err === ERRORS.FILE_NOT_FOUND || err === ERRORS.FILE_NO_LONGER_EXISTS) return null;
      throw err;
    }
  }
}

const belongs = (upload: Upload, visitor: UploadVisitor) =>
  upload.metadata?.account === String(visitor.accountId) && upload.metadata?.owner === visitor.owner;

/**
 * The request with its body read through a watch: a sender that stalls for `stallMs`, or goes
 * away, ends the body with an error, and the visit says which (the client's doing, not ours).
 */
function watched(req: Request, source: ReadableStream<Uint8Array>, stallMs: number, visit: Visit): Request {
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('stalled')), stallMs);
      });
      try {
        const { done, value } = await Promise.race([reader.read(), stalled]);
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        visit.cut = err instanceof Error && err.message === 'stalled' ? 'stalled' : 'gone';
        reader.cancel().catch(() => undefined);
        controller.error(err);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Request(req, { body, duplex: 'half' });
}
