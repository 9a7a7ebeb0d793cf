import type { ConversationListView, PagePosition } from '@convo/domain';
import { keepJson } from './answer-json.ts';

/*
 * Pages of conversations, remembered by the account's change mark. The mark grows with every
 * change to what the API answers for an account, in the statement that makes the change, and
 * every request reads it with its token; so a page read again at the same mark (and the same
 * account address, which its URLs are built on) is the same page. A poller's page 1 is then read
 * from the database once per change to its account, not once per request, and a page served from
 * here allocates next to nothing. (A page read from the database is now its JSON text, written by
 * PostgreSQL; the rows, records and views it was built from before were most of what the
 * server's young generation collected, bench/README.md.)
 *
 * One page per account and page number is kept, the one of the newest mark seen; a request that
 * read an older mark (a change committed after its token was looked up) reads for itself.
 * Concurrent reads of the same page at the same mark share one read. Bounded by an estimate of
 * the bytes kept (the JSON text, and the objects beside it); the least recently used go first.
 */

/** Where a page answered came from: kept (or being read for another request), or read for this one. */
export type PageSource = 'memory' | 'database';

/** A page as the list use case answers it. */
export interface ListedPage {
  view: ConversationListView;
  position: PagePosition;
}

/** Where a page comes from: an account at one change mark, its address, and the page number. */
export interface PageAt {
  accountId: number;
  changeMark: string;
  host: string;
  key: string;
  page: number;
}

interface Kept {
  mark: bigint;
  address: string;
  read: Promise<ListedPage>;
  /** What it is counted as against the budget; 0 while it is being read. */
  bytes: number;
}

/**
 * What a kept page is counted as, per character of its JSON text: the text itself and, once a
 * tRPC call has parsed it (listViewOf), the view's objects and strings (a parsed page of
 * conversations held 1.3 times its text's length in V8's heap), with room to spare.
 */
const BYTES_PER_TEXT_CHAR = 3;

export class ConversationListCache {
  readonly #kept = new Map<string, Kept>();
  #bytes = 0;
  /** What may be kept, estimated; 0 keeps nothing. */
  readonly maxBytes: number;
  readonly #onAnswer: (from: PageSource) => void;

  /** @param onAnswer told where each page answered came from (/metrics counts them). */
  constructor(maxBytes: number, onAnswer: (from: PageSource) => void = () => {}) {
    this.maxBytes = maxBytes;
    this.#onAnswer = onAnswer;
  }

  /** The page at `at`: kept, being read by another request, or read now by `read`. */
  async remember(at: PageAt, read: () => Promise<ListedPage>): Promise<ListedPage> {
    const id = `${at.accountId}:${at.page}`;
    const mark = BigInt(at.changeMark);
    const address = `${at.host} ${at.key}`;
    const kept = this.#kept.get(id);
    if (kept && kept.mark === mark && kept.address === address) {
      // Most recently used: the map's order is the eviction order.
      this.#kept.delete(id);
      this.#kept.set(id, kept);
      this.#onAnswer('memory');
      return kept.read;
    }
    this.#onAnswer('database');
    if (this.maxBytes <= 0 || (kept && kept.mark > mark)) return read();
    const entry: Kept = { mark, address, read: read(), bytes: 0 };
    this.#drop(id);
    this.#kept.set(id, entry);
    let page: ListedPage;
    try {
      page = await entry.read;
    } catch (e) {
      // Errors (a page past the end, a database that does not answer) are never kept.
      if (this.#kept.get(id) === entry) this.#kept.delete(id);
      throw e;
    }
    // Its JSON text (the store's, or made once, here): every answer from memory is written with it (answer-json.ts).
    const text = keepJson(page.view);
    if (this.#kept.get(id) === entry) {
      entry.bytes = text.length * BYTES_PER_TEXT_CHAR;
      this.#bytes += entry.bytes;
      this.#trim();
    }
    return page;
  }

  /** The estimated bytes kept, for /metrics. */
  get bytes(): number {
    return this.#bytes;
  }

  #drop(id: string): void {
    const kept = this.#kept.get(id);
    if (!kept) return;
    this.#bytes -= kept.bytes;
    this.#kept.delete(id);
  }

  #trim(): void {
    for (const id of this.#kept.keys()) {
      if (this.#bytes <= this.maxBytes) return;
      this.#drop(id);
    }
  }
}
