import type { SeedProgress } from '@convo/db';
import { SingleBar } from 'cli-progress';

/**
 * Seed progress on stderr: a bar with counts and rate on a terminal, a plain line at most every
 * five seconds otherwise, nothing with --json. The bar follows the bytes of the file read so far.
 */
export function seedProgress(fileBytes: number, quiet: boolean) {
  const started = performance.now();
  let bytes = 0;
  let lastLine = started;
  const bar =
    !quiet && process.stderr.isTTY
      ? new SingleBar({
          format: 'seed |{bar}| {percentage}% | {conversations} conversations, {messages} messages | {rate}/s',
          stream: process.stderr,
          hideCursor: true,
        })
      : null;
  bar?.start(Math.max(fileBytes, 1), 0, { conversations: 0, messages: 0, rate: 0 });

  return {
    bytes(n: number) {
      bytes = n;
    },
    update({ counts }: SeedProgress) {
      const now = performance.now();
      const rate = Math.round(counts.conversations / Math.max((now - started) / 1000, 0.001));
      if (bar) bar.update(bytes, { conversations: counts.conversations, messages: counts.messages, rate });
      else if (!quiet && now - lastLine >= 5_000) {
        lastLine = now;
        const share = fileBytes > 0 ? Math.round((100 * bytes) / fileBytes) : 100;
        process.stderr.write(
          `seed: ${counts.conversations} conversations, ${counts.messages} messages, ${rate}/s, ${share}% of the file read\n`,
        );
      }
    },
    stop() {
      bar?.stop();
    },
  };
}
