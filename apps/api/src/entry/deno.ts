import { createLogger } from '../logger.ts';
import { loadConfig } from '../start/config.ts';
import { logCannotListen } from '../start/listen-error.ts';
import { buildServer } from '../start/server.ts';

declare const Deno: {
  serve(
    o: { port: number; hostname: string; onListen?: (a: { port: number }) => void },
    h: (r: Request, info: { remoteAddr: { hostname: string } }) => Promise<Response>,
  ): { shutdown(): Promise<void> };
  addSignalListener(s: string, f: () => void): void;
  exit(c: number): never;
};

/* `npm run start:deno`. Only as the program: `npm install` imports every module once to fill Node's compile cache. */
if (import.meta.main) {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const { app, orm } = await buildServer(config, logger);
  let server: ReturnType<typeof Deno.serve>;
  try {
    server = Deno.serve(
      {
        port: config.port,
        hostname: config.host,
        onListen: ({ port }) => logger.info({ url: `http://${config.host}:${port}` }, 'listening'),
      },
      (req, info) => app.fetch(req, { clientIp: info.remoteAddr.hostname }),
    );
  } catch (err) {
    // Deno.serve throws at once when the port cannot be had (AddrInUse, PermissionDenied).
    logCannotListen(logger, config, err);
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    Deno.exit(1);
  }
  const stop = () =>
    void Promise.resolve(app.drain())
      .then(() => server.shutdown())
      .then(() => app.settle())
      .then(() => orm.close())
      .then(() => Deno.exit(0));
  for (const signal of ['SIGINT', 'SIGTERM']) Deno.addSignalListener(signal, stop);
}
