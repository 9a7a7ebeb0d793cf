import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/*
 * robots.txt and the sitemaps, made once per change of their account. The account's change mark
 * grows with every change to its conversations, in the statement that makes it, and the files
 * also depend on the account's host (their URLs are built on it): a file made at the same mark for
 * the same host is the same file. A request reads the mark (one small statement) and is answered
 * from memory, or waits for the one build of that mark that other requests share. A file made at
 * an older mark never replaces a newer one. Bounded by the bytes kept, least recently used first.
 */

/** A file as it is served: its text and the ETag of that text. */
export interface KeptFile {
  body: string;
  etag: string;
}

interface Kept extends KeptFile {
  mark: bigint;
  host: string;
}

export class KeptFiles {
  readonly #kept: LRUCache<string, Kept>;
  readonly #building = new Map<string, Promise<KeptFile>>();

  /** @param maxBytes what the kept files' text may add up to (UTF-16: 2 bytes a character). */
  constructor(maxBytes: number) {
    this.#kept = new LRUCache<string, Kept>({
      maxSize: Math.max(1, maxBytes),
      // Each entry counts its text and what keeping it costs beside (key, marks, ETag).
      sizeCalculation: (kept) => 256 + kept.body.length * 2,
    });
  }

  /** The file `name` of the account at `mark` and `host`: kept, being made, or made now by `make`. */
  async get(
    at: { accountId: number; mark: string; host: string; name: string },
    make: () => Promise<string>,
  ): Promise<KeptFile> {
    const key = `${at.accountId} ${at.name}`;
    const mark = BigInt(at.mark);
    const kept = this.#kept.get(key);
    if (kept && kept.mark === mark && kept.host === at.host) return kept;
    const building = `${key} ${at.mark} ${at.host}`;
    let made = this.#building.get(building);
    if (!made) {
      made = make()
        .then((body) => {
          const file = { body, etag: `"${hash('sha256', body, 'base64url').slice(0, 22)}"` };
          const now = this.#kept.get(key);
          if (!now || now.mark <= mark) this.#kept.set(key, { ...file, mark, host: at.host });
          return file;
        })
        .finally(() => this.#building.delete(building));
      this.#building.set(building, made);
    }
    return made;
  }
}
