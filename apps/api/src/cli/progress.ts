import type { ExportProgress, SeedProgress } from '@convo/db';
import { SingleBar } from 'cli-progress';
import type { CliIo } from './helpers.ts';

type Stderr = CliIo['stderr'];

/*
 * Progress of a long command (seed, export) on stderr: a bar with counts and rate on a terminal, a
 * plain line at most every five seconds otherwise, nothing with --json.
 */

interface Counts {
  conversations: number;
  messages: number;
}

/** `total` null: a count with no end known beforehand (no bar, no share). */
function progress(stderr: Stderr, command: string, total: number | null, quiet: boolean, totalIs = '') {
  const started = performance.now();
  let lastLine = started;
  const bar =
    !quiet && stderr.isTTY
      ? new SingleBar({
          format: `${command} ${total === null ? '' : '|{bar}| {percentage}% '}| {conversations} conversations, {messages} messages | {rate}/s`,
          stream: stderr,
          hideCursor: true,
        })
      : null;
  bar?.start(Math.max(total ?? 1, 1), 0, { conversations: 0, messages: 0, rate: 0 });
  return {
    /** `done` of `total` (in whatever unit the total is). */
    update(done: number, counts: Counts) {
      const now = performance.now();
      const rate = Math.round(counts.conversations / Math.max((now - started) / 1000, 0.001));
      if (bar) bar.update(done, { conversations: counts.conversations, messages: counts.messages, rate });
      else if (!quiet && now - lastLine >= 5_000) {
        lastLine = now;
        const share = total === null ? '' : `, ${total > 0 ? Math.round((100 * done) / total) : 100}% of ${totalIs}`;
        stderr.write(
          `${command}: ${counts.conversations} conversations, ${counts.messages} messages, ${rate}/s${share}\n`,
        );
      }
    },
    stop() {
      bar?.stop();
    },
  };
}

/** Seed progress follows the bytes of the file read so far. */
export function seedProgress(stderr: Stderr, fileBytes: number, quiet: boolean) {
  const shown = progress(stderr, 'seed', fileBytes, quiet, 'the file read');
  let bytes = 0;
  return {
    bytes(n: number) {
      bytes = n;
    },
    update({ counts }: SeedProgress) {
      shown.update(bytes, counts);
    },
    stop: shown.stop,
  };
}

/** Export progress follows the conversations written of those the export holds. */
export function exportProgress(stderr: Stderr, quiet: boolean) {
  let shown: ReturnType<typeof progress> | null = null;
  return {
    update(p: ExportProgress) {
      shown ??= progress(stderr, 'export', p.total, quiet, 'the conversations written');
      shown.update(p.conversations, p);
    },
    stop() {
      shown?.stop();
    },
  };
}

/** Import progress: conversations loaded so far (the source does not say how many it holds). */
export function importProgress(stderr: Stderr, quiet: boolean) {
  const shown = progress(stderr, 'import', null, quiet);
  return {
    update(p: Counts) {
      shown.update(0, p);
    },
    stop: shown.stop,
  };
}
