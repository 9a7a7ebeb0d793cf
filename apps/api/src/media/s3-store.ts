import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  NotFound,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { countedBytes, type MediaLink, type MediaStore, MediaTooLarge } from '@convo/domain';
import { unavailableOr } from './unavailable.ts';

/*
 * Recordings in an S3-compatible bucket (AWS S3, Cloudflare R2, MinIO, Garage …), shared by every
 * replica: one object per key, written in one go or in parts (lib-storage) so that an object is
 * either whole or absent. Served by presigned links of a few minutes after the server checked
 * who may see it, or streamed with ranges like the directory's.
 */

/** What a key may look like: the server's own `<account id>/<hex>`. */
const KEY = /^\d{1,10}\/[0-9a-f]{32}$/;

/** How long a presigned link to a recording works. */
export const LINK_SECONDS = 300;

export interface S3Options {
  bucket: string;
  client: S3ClientConfig;
  /** Answer a recording's URL with a 302 to a presigned link (else stream it through the server). */
  redirect: boolean;
}

export class S3MediaStore implements MediaStore {
  readonly client: S3Client;
  private readonly bucket: string;
  readonly link?: (key: string, as: MediaLink) => Promise<string>;

  constructor(options: S3Options) {
    this.client = new S3Client(options.client);
    this.bucket = options.bucket;
    if (options.redirect) {
      this.link = (key, as) =>
        getSignedUrl(
          this.client,
          new GetObjectCommand({
            Bucket: this.bucket,
            Key: checked(key),
            ResponseContentType: as.contentType,
            ResponseContentDisposition: as.disposition,
            ResponseCacheControl: 'private, max-age=300',
          }),
          { expiresIn: LINK_SECONDS },
        );
    }
  }

  async put(
    key: string,
    body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    maxBytes: number,
  ): Promise<{ bytes: number }> {
    const counted = countedBytes(body, maxBytes);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: checked(key), Body: Readable.from(counted.chunks) },
      leavePartsOnError: false,
    });
    try {
      await upload.done();
      return { bytes: counted.bytes() };
    } catch (err) {
      await this.remove(key).catch(() => undefined);
      if (err instanceof MediaTooLarge) throw err;
      throw unavailableOr(err);
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checked(key) }));
      return head.ContentLength ?? null;
    } catch (err) {
      if (missing(err)) return null;
      throw unavailableOr(err);
    }
  }

  read(key: string, start: number, end: number): ReadableStream<Uint8Array> {
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: checked(key), Range: `bytes=${start}-${end}` });
    let body: ReadableStream<Uint8Array> | undefined;
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            if (!reader) {
              const answer = await this.client.send(command);
              if (!answer.Body) throw new Error(`${key} has no body`);
              body = answer.Body.transformToWebStream();
              reader = body.getReader();
            }
            const { done, value } = await reader.read();
            if (done) controller.close();
            else controller.enqueue(value);
          } catch (err) {
            controller.error(unavailableOr(err));
          }
        },
        cancel: async (reason) => {
          await reader?.cancel(reason);
        },
      },
      { highWaterMark: 1 },
    );
  }

  async remove(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checked(key) }));
    } catch (err) {
      if (!missing(err)) throw unavailableOr(err);
    }
  }

  async *list(before: Date): AsyncIterable<string> {
    for await (const { key, modified } of this.objects()) {
      if (KEY.test(key) && modified < before) yield key;
    }
  }

  /** Every object of the bucket, a page of a thousand at a time. */
  async *objects(): AsyncIterable<{ key: string; modified: Date }> {
    let token: string | undefined;
    do {
      const page = await this.client
        .send(new ListObjectsV2Command({ Bucket: this.bucket, ContinuationToken: token }))
        .catch((err: unknown) => {
          throw unavailableOr(err);
        });
      for (const o of page.Contents ?? []) {
        if (o.Key && o.LastModified) yield { key: o.Key, modified: o.LastModified };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

function checked(key: string): string {
  if (!KEY.test(key)) throw new Error(`not a media key: ${key}`);
  return key;
}

const missing = (err: unknown) =>
  err instanceof NoSuchKey ||
  err instanceof NotFound ||
  (err instanceof Error && (err.name === 'NotFound' || err.name === 'NoSuchKey'));
