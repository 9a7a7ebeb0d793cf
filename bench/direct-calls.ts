import { appRouter, createCallerFactory, createContext, operations, ReceivedRecording } from '@convo/router';
import { createLogger } from '../apps/api/src/logger.ts';
import { loadConfig } from '../apps/api/src/start/config.ts';
import { createServices, DEFAULT_SERVICE_OPTIONS, openDatabase } from '../apps/api/src/start/services.ts';
import { DB, TOKEN } from './options.ts';

/*
 * `node bench/direct-calls.ts` (after a `npm run bench`, on its data): get_conversation ?slug
 * called in this process, 32 at a time, through tRPC's server-side caller against the operation's
 * direct call (what REST runs), rounds interleaved, each round's CPU a call. No HTTP: what the
 * call itself costs. bench/results/2026-12-05-direct-calls.md has a run.
 */

const ROUNDS = 12;
const CALLS = 3000;
const config = loadConfig({ ...process.env, DATABASE_URL: DB, NODE_ENV: 'production', MIGRATE_ON_START: 'false' });
const logger = createLogger('warn', 2);
const orm = await openDatabase(config, logger);
const services = createServices(orm, logger, { ...DEFAULT_SERVICE_OPTIONS, checkAnswers: false });
const operation = operations.find((o) => o.label === 'get_conversation');
if (!operation) throw new Error('no get_conversation operation');
const caller = createCallerFactory(appRouter);
const request = new Request('http://127.0.0.1/api/v1/conversations/get_conversation?slug=bench-none', {
  headers: { authorization: TOKEN },
});
const input = { slug: 'bench-none' };
const contextOf = () => createContext(services, request, { id: 'bench', auth: {} }, new ReceivedRecording());

const ways = {
  'tRPC caller': async () => {
    await caller(contextOf()).conversations.getConversation(input);
  },
  'direct call': async () => {
    await operation.call(contextOf(), input);
  },
};
type Way = keyof typeof ways;

async function run(way: Way, calls: number) {
  let left = calls;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (left-- > 0) await ways[way]();
    }),
  );
}

const names: Way[] = ['tRPC caller', 'direct call'];
for (const way of names) await run(way, CALLS);
const cpu = new Map<Way, number[]>(names.map((way) => [way, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const way of round % 2 ? names : [...names].reverse()) {
    const start = process.cpuUsage();
    await run(way, CALLS);
    const used = process.cpuUsage(start);
    cpu.get(way)?.push((used.user + used.system) / CALLS);
  }
}
for (const [way, each] of cpu) {
  const sorted = [...each].sort((a, b) => a - b);
  console.log(
    `${way.padEnd(12)} CPU a call: median ${sorted[ROUNDS / 2]?.toFixed(0)} µs, least ${sorted[0]?.toFixed(0)} µs`,
  );
}
await orm.close();
