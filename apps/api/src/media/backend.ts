import { chmodSync, mkdirSync } from 'node:fs';
import { readdir, statfs } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UPLOAD_ID } from '@convo/domain';
import { FileStore } from '@tus/file-store';
import { DIR_MODE, DiskMediaStore } from './disk-store.ts';
import type { S3Options } from './s3-store.ts';
import type { MediaBackend } from './uploads.ts';

/**
 * The backend the configuration names: the S3 bucket when there is one, else the directory. The
 * S3 client is loaded only then (it is some 35 MB of a server's memory that a disk never needs).
 */
export const configuredBackend = async (media: { dir: string; s3: S3Options | undefined }): Promise<MediaBackend> =>
  media.s3 ? (await import('./s3-backend.ts')).s3Media(media.s3) : diskMedia(media.dir);

/**
 * Everything in one directory (MEDIA_DIR): recordings under `<account>/`, uploads under `uploads/`,
 * both folders for the server's user alone (0700, made so or narrowed at start: the tus file
 * store writes its files with the process's default mode, unreachable inside them).
 */
export function diskMedia(dir: string): MediaBackend {
  const directory = join(resolve(dir), 'uploads');
  for (const folder of [resolve(dir), directory]) {
    try {
      mkdirSync(folder, { recursive: true, mode: DIR_MODE });
      chmodSync(folder, DIR_MODE);
    } catch {
      // Not writable (yet): a recording is then refused with a 503 that says so, as before.
    }
  }
  return {
    store: new DiskMediaStore(dir),
    uploads: {
      store: new FileStore({ directory }),
      async *ids() {
        const names = await readdir(directory).catch(() => []);
        for (const name of names) if (UPLOAD_ID.test(name)) yield name;
      },
      async freeBytes() {
        const disk = await statfs(directory).catch(() => null);
        return disk ? disk.bavail * disk.bsize : null;
      },
    },
  };
}
