import { pino } from 'pino';

export type Logger = pino.Logger;

/**
 * JSON lines on stdout; never a token, never a request body. Lines are buffered and written
 * asynchronously (a synchronous write per request cost the server 10-20% of its throughput);
 * entries flush the buffer when they stop.
 */
export const createLogger = (level: string, destination: 1 | 2 | pino.DestinationStream = 1): Logger =>
  pino(
    { level, base: { service: 'conversations-api' } },
    typeof destination === 'number'
      ? pino.destination({ dest: destination, sync: false, minLength: 4096 })
      : destination,
  );
