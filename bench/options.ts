import { parseArgs } from 'node:util';

/* The command line of npm run bench, and the fixed names it loads and calls (tokens, the page host). */

export const ROOT = new URL('..', import.meta.url).pathname;
export const { values: opt } = parseArgs({
  options: {
    conversations: { type: 'string', default: '10000' },
    large: { type: 'string' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/convo_bench' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32,64' },
    'skip-load': { type: 'boolean', default: false },
    /**
     * What to run, comma-separated: scenarios whose names contain an item, and the sections an item
     * names (`--only create,unkept`: the quick mode CONTRIBUTING asks for after a change to a read or
     * write path).
     */
    only: { type: 'string' },
    /** The sections to run after the comparison (default all, or those `--only` names). */
    extras: { type: 'string' },
  },
});
const SECTIONS =
  'conditional,unkept,pages,plays,inbox,messages,replies,intake,webhooks,media,transcripts,inbound,workflows,live,queues'.split(
    ',',
  );
/** The items of `--only`, or null to run every scenario. */
export const ONLY = opt.only ? String(opt.only).split(',') : null;
export const EXTRAS = new Set(
  opt.extras ? String(opt.extras).split(',') : ONLY ? ONLY.filter((item) => SECTIONS.includes(item)) : SECTIONS,
);
export const DB = opt['database-url'] as string;
export const N = Number(opt.conversations);
export const LARGE = opt.large ? Number(opt.large) : 0;
export const DURATION = Number(opt.duration);
export const CONNECTIONS = String(opt.connections).split(',').map(Number);
export const TOKEN = 'cnv_bench_token_for_the_benchmark_only_0000000000';
export const LARGE_TOKEN = 'cnv_bench_token_for_the_large_account_00000000000';
/** An account of its own for the HTML page scenario: one conversation of PAGE_MESSAGES messages. */
export const PAGE_TOKEN = 'cnv_bench_token_for_the_page_account_000000000000';
export const PAGE_HOST = 'pages.example.com';
export const PAGE_MESSAGES = 50;

export const log = (s: string) => process.stderr.write(`${s}\n`);
