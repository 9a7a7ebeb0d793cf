import { createWriteStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdminError, type ExportedRecording } from '@convo/db';
import {
  MEDIA_EXTENSIONS,
  type MediaDeps,
  type MessageType,
  measureRecording,
  newMediaKey,
  type ReceivedFile,
  type StoredMedia,
} from '@convo/domain';
import { configuredBackend } from '../media/backend.ts';
import { MediabunnyProbe } from '../media/probe.ts';
import type { Config } from '../start/config.ts';

/*
 * Recordings in and out of the seed format: an export copies each one the server keeps into a
 * folder beside the JSON and names it in its message (`media_file`, relative to the JSON's own
 * folder); a seed reads those files back into the media store, measured as an upload is.
 */

/** The media store and probe of the configuration (MEDIA_DIR or the S3 bucket, the limits). */
export const configuredMedia = async (config: Config): Promise<MediaDeps> => ({
  store: (await configuredBackend(config.media)).store,
  probe: new MediabunnyProbe({ threads: config.media.probeThreads, maxSeconds: config.media.limits.maxSeconds }),
  limits: config.media.limits,
});

/** Where an export to `out` puts its recordings unless told: `acme.json` → `acme-media/`. */
export const defaultMediaDir = (out: string): string => `${out.replace(/\.json$/i, '')}-media`;

/**
 * Copies a kept recording to `<dir>/<account>/<key>.<ext>` (a file made new, readable by its owner
 * only, like the export) and answers its path relative to `base`, the folder the JSON is read from.
 */
export function exportRecordings(media: MediaDeps, dir: string, base: string) {
  return async (r: ExportedRecording): Promise<string> => {
    const size = await media.store.size(r.key);
    if (size === null)
      throw new AdminError(`the recording ${r.key} of account ${r.account} is missing from the media store`);
    const target = join(dir, r.account, `${r.key.split('/')[1]}.${MEDIA_EXTENSIONS[r.contentType] ?? 'bin'}`);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await pipeline(
      Readable.fromWeb(media.store.read(r.key, 0, size - 1)),
      createWriteStream(target, { flags: 'wx', mode: 0o600 }),
    );
    return relative(base, target);
  };
}

/**
 * Keeps a seed's media files in the store, each measured; `kept` lists what was kept, so a load
 * that fails can remove it again (the database keeps nothing of a failed load either).
 */
export function importRecordings(media: MediaDeps, seedFile: string, kept: string[]) {
  const base = dirname(resolve(seedFile));
  return async (file: string, type: MessageType, accountId: number): Promise<StoredMedia> => {
    const received = await keepFile(media, isAbsolute(file) ? file : resolve(base, file), accountId, file);
    kept.push(received.key);
    const measured = await measureRecording(media, received, type);
    if (!measured.ok) throw new AdminError(`${file}: ${measured.problem}`);
    return measured.media;
  };
}

/** A file of this machine in the media store, under a new key of the account (not measured yet). */
export async function keepFile(media: MediaDeps, path: string, accountId: number, name = path): Promise<ReceivedFile> {
  const refused = (e: unknown) =>
    new AdminError(`${name}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  // Opened first: a missing or unreadable file is refused before a stream exists to fail later.
  const file = await open(path, 'r').catch((e: unknown) => {
    throw refused(e);
  });
  const key = newMediaKey(accountId);
  try {
    const { bytes } = await media.store.put(key, file.createReadStream(), media.limits.maxBytes);
    return { key, bytes };
  } catch (e) {
    await media.store.remove(key).catch(() => undefined);
    throw refused(e);
  } finally {
    await file.close().catch(() => undefined);
  }
}
