import { UPLOAD_ID } from '@convo/domain';
import { S3Store } from '@tus/s3-store';
import { S3MediaStore, type S3Options } from './s3-store.ts';
import type { MediaBackend } from './uploads.ts';

/**
 * Everything in one S3-compatible bucket that every replica shares: recordings as
 * `<account>/<hex>`, uploads as @tus/s3-store keeps them (`<id>.info` and a multipart upload).
 */
export function s3Media(options: S3Options): MediaBackend {
  const store = new S3MediaStore(options);
  return {
    store,
    uploads: {
      store: new S3Store({ partSize: 8 * 1024 * 1024, s3ClientConfig: { ...options.client, bucket: options.bucket } }),
      async *ids() {
        for await (const { key } of store.objects()) {
          const id = key.endsWith('.info') ? key.slice(0, -'.info'.length) : '';
          if (UPLOAD_ID.test(id)) yield id;
        }
      },
    },
  };
}
