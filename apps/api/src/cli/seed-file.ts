import { createReadStream } from 'node:fs';
import { AdminError, type SeedAccountSource } from '@convo/db';
import { parser } from 'stream-json';
import Assembler from 'stream-json/assembler.js';

/*
 * Reads a seed file as a stream of JSON tokens, so that a file of a million conversations never
 * sits in memory whole: each account's `conversations` are handed out one at a time. That needs the
 * account's key, name and host before its conversations (as in examples/seed.json); otherwise that
 * account's conversations are held in memory until the account ends.
 */

type Token = parser.Token;

/** The value a key or string token carries (other tokens carry none). */
const tokenValue = (t: Token): unknown => ('value' in t ? t.value : undefined);

class TokenReader {
  private readonly tokens: AsyncIterator<Token>;
  private readonly file: string;

  constructor(tokens: AsyncIterable<Token>, file: string) {
    this.tokens = tokens[Symbol.asyncIterator]();
    this.file = file;
  }

  async next(): Promise<Token> {
    let step: IteratorResult<Token>;
    try {
      step = await this.tokens.next();
    } catch (e) {
      throw new AdminError(`${this.file} is not valid JSON: ${(e as Error).message}`);
    }
    if (step.done) throw new AdminError(`${this.file} ends before its JSON does`);
    return step.value;
  }

  async expect(name: string, what: string): Promise<void> {
    if ((await this.next()).name !== name) throw new AdminError(`${this.file}: expected ${what}`);
  }

  /** One whole value, starting from its first token. */
  async value(first: Token): Promise<unknown> {
    const asm = new Assembler();
    asm.consume(first);
    while (!asm.done) asm.consume(await this.next());
    return asm.current;
  }
}

const REQUIRED = ['key', 'name', 'host'];

async function* elements(reader: TokenReader): AsyncGenerator<unknown> {
  for (let t = await reader.next(); t.name !== 'endArray'; t = await reader.next()) yield reader.value(t);
}

/** The accounts of a seed file, in order; read each one's conversations before asking for the next. */
export async function* readSeedFile(
  file: string,
  onBytes?: (bytes: number) => void,
): AsyncGenerator<SeedAccountSource> {
  const source = createReadStream(file);
  source.on('error', () => {});
  if (onBytes) source.on('data', () => onBytes(source.bytesRead));
  const reader = new TokenReader(source.pipe(parser.asStream({ packValues: true, streamValues: false })), file);
  try {
    await reader.expect('startObject', 'a JSON object {"accounts": [...]}');
    for (let t = await reader.next(); t.name !== 'endObject'; t = await reader.next()) {
      if (tokenValue(t) === 'comment') {
        const comment = await reader.value(await reader.next());
        if (typeof comment !== 'string') throw new AdminError(`${file}: "comment" must be a string`);
        continue;
      }
      if (tokenValue(t) !== 'accounts') {
        throw new AdminError(`${file}: unknown top-level member ${JSON.stringify(tokenValue(t))}`);
      }
      await reader.expect('startArray', '"accounts" to be an array');
      for (let a = await reader.next(); a.name !== 'endArray'; a = await reader.next()) {
        if (a.name !== 'startObject') throw new AdminError(`${file}: each account must be an object`);
        const header: Record<string, unknown> = Object.create(null);
        let held: unknown[] | null = null;
        let streamed = false;
        for (let k = await reader.next(); k.name !== 'endObject'; k = await reader.next()) {
          const key = String(tokenValue(k));
          if (streamed) throw new AdminError(`${file}: put account member "${key}" before its "conversations"`);
          const first = await reader.next();
          if (key !== 'conversations') header[key] = await reader.value(first);
          else if (first.name === 'startArray' && REQUIRED.every((r) => r in header)) {
            streamed = true;
            const conversations = elements(reader);
            yield { header, conversations };
            // The consumer may have stopped early (an error): the array must still be read past.
            for await (const _ of conversations);
          } else held = (await reader.value(first)) as unknown[];
        }
        if (!streamed) yield { header, conversations: held ?? [] };
      }
    }
  } finally {
    source.destroy();
  }
}
