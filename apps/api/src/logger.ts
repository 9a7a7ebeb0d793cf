import { pino } from 'pino';

export type Logger = pino.Logger;

/** JSON lines on stdout; never a token, never a request body. */
export const createLogger = (level: string, destination: 1 | 2 | pino.DestinationStream = 1): Logger =>
  pino(
    { level, base: { service: 'conversations-api' }, redact: ['req.headers.authorization'] },
    typeof destination === 'number' ? pino.destination(destination) : destination,
  );
