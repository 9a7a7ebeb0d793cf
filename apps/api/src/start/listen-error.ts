import type { Logger } from '../logger.ts';

/**
 * A port that cannot be had is the operator's to fix: one fatal line saying which and why, not a
 * stack trace. Node's listen error and Deno.serve's both carry the system's code.
 */
export function logCannotListen(logger: Logger, at: { host: string; port: number }, err: unknown): void {
  const code = err instanceof Error && 'code' in err ? String(err.code) : undefined;
  const why =
    code === 'EADDRINUSE'
      ? 'another process is listening there (stop it, or set PORT to another port)'
      : code === 'EACCES'
        ? 'this user may not listen there (ports below 1024 need privileges; set PORT)'
        : err instanceof Error
          ? err.message
          : String(err);
  logger.fatal({ host: at.host, port: at.port, code }, `cannot listen on ${at.host}:${at.port}: ${why}`);
}
