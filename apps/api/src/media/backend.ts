import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { MediaStore } from '@convo/domain';
import { UPLOAD_ID } from '@convo/pages';
import { FileStore } from '@tus/file-store';
import { DiskMediaStore } from './disk-store.ts';
import type { UploadBackend } from './uploads.ts';

/** Where recordings are kept, and where their resumable uploads wait until they are posted. */
export interface MediaBackend {
  store: MediaStore;
  uploads: UploadBackend;
}

/** Everything in one directory (MEDIA_DIR): recordings under `<account>/`, uploads under `uploads/`. */
export function diskMedia(dir: string): MediaBackend {
  const directory = join(resolve(dir), 'uploads');
  return {
    store: new DiskMediaStore(dir),
    uploads: {
      store: new FileStore({ directory }),
      async *ids() {
        const names = await readdir(directory).catch(() => []);
        for (const name of names) if (UPLOAD_ID.test(name)) yield name;
      },
    },
  };
}
