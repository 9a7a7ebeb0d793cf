/*
 * Resumable uploads of recordings, as the site uses them (the server implements them with tus):
 * the port beside MediaStore.
 */

/** A recording that came with a form, kept in the media store under `key` (not measured yet). */
export interface ReceivedFile {
  key: string;
  bytes: number;
}

/** Whose a resumable upload is: a visitor of an account, as a hash of their cookie (never the cookie). */
export interface UploadVisitor {
  accountId: number;
  owner: string;
}

/** Why an upload is refused, in words for a person, with its status. */
export interface UploadRefusal {
  status: 400 | 403 | 404 | 413 | 429 | 503;
  message: string;
}

/**
 * Resumable uploads of recordings (tus 1.0 at `/uploads`): each belongs to the visitor who made it
 * and to one conversation they may reply to; an upload of anyone else is answered as missing.
 */
export interface Uploads {
  /**
   * Answers a tus request (POST creates, HEAD, PATCH, DELETE) for `visitor`. A creation asks
   * `admit`, with the metadata the client sent, which conversation the upload is for (its id).
   */
  handle(
    req: Request,
    visitor: UploadVisitor,
    admit: (metadata: Record<string, string | null>) => Promise<number | UploadRefusal>,
  ): Promise<Response>;
  /**
   * The finished upload `id` of `visitor` for `conversationId`, kept in the media store under a
   * new key (not measured yet) and gone from the uploads; or why not.
   */
  take(id: string, visitor: UploadVisitor, conversationId: number): Promise<ReceivedFile | UploadRefusal>;
}

/** What an upload's id looks like (the tus server's own naming). */
export const UPLOAD_ID = /^[0-9a-f]{32}$/;
