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
import { countedBytes, endedOnce, type MediaLink, type MediaStore, MediaTooLarge } from '@convo/domain';
import { unavailableOr } from './unavailable.ts';

/*
 * Recordings in an S3-compatible bucket (AWS S3, Cloudflare R2, MinIO, Garage …), shared by every
 * replica: one object per key, written in one go or in parts (lib-storage) so that an object is
 * either whole or absent. Served by presigned links of a few minutes after the server checked
 * who may see it, or streamed with ranges like the directory's.
 */

/** What a key may look like: the server's own `<account id>/<hex>`, or its poster's. */
const KEY = /^\d{1,10}\/[0-9a-f]{32}(?:\.poster)?$/;

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
    if (options.redirect) this.link = (key, as) => this.presigned(key, as);
  }

  /**
   * A link of LINK_SECONDS to the object; with `as`, answered with that type and disposition (a
   * browser's link), else as the bucket keeps it (the proxy's, which keeps the server's headers).
   */
  private presigned(key: string, as?: MediaLink): Promise<string> {
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: checked(key),
        ...(as && {
          ResponseContentType: as.contentType,
          ResponseContentDisposition: as.disposition,
          ResponseCacheControl: 'private, max-age=300',
        }),
      }),
      { expiresIn: LINK_SECONDS },
    );
  }

  /** The presigned link's path and query: the proxy's internal location passes them to the bucket. */
  async handOffPath(key: string): Promise<string> {
    const url = new URL(await this.presigned(key));
    return `${url.pathname.slice(1)}${url.search}`;
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

  read(key: string, start: number, end: number, ended?: () => void): ReadableStream<Uint8Array> {
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: checked(key), Range: `bytes=${start}-${end}` });
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    const finished = endedOnce(ended);
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            if (!reader) {
              const answer = await this.client.send(command);
              if (!answer.Body) throw new Error(`${key} has no body`);
              reader = answer.Body.transformToWebStream().getReader();
            }
            const { done, value } = await reader.read();
            if (done) {
              finished();
              controller.close();
            } else controller.enqueue(value);
          } catch (err) {
            finished();
            controller.error(unavailableOr(err));
          }
        },
        cancel: async (reason) => {
          finished();
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
