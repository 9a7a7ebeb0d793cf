import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './load.ts';
import { freePort } from './postgres.ts';

/*
 * Debian's nginx in front of server processes, as the compose stack puts it there: round robin over
 * the replicas, with the forwarding lines of the shipped compose nginx.conf, and its location for
 * live streams. The scale test and the live fault test run behind it.
 */

/**
 * The forwarding lines of the shipped compose nginx.conf (each location repeats them; each is
 * taken once), so the tests run behind the same ones.
 */
export const SHIPPED_FORWARDING = [
  ...new Set(
    readFileSync(new URL('../../infra/compose/nginx.conf', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => /^\s*proxy_set_header (Host|X-Forwarded-)/.test(line))
      .map((line) => line.trim()),
  ),
].join('\n      ');

export interface NginxOptions {
  /**
   * Requests with the cookie `replica=<n>` go to the n-th upstream (from 1), the rest round robin:
   * a test puts two browsers on two given replicas.
   */
  pinByCookie?: boolean;
}

function nginxConf(dir: string, port: number, upstreams: number[], options: NginxOptions): string {
  const pass = options.pinByCookie ? 'http://$replica' : 'http://api';
  const proxied = `proxy_pass ${pass};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      ${SHIPPED_FORWARDING}
      # Which replica answered (or failed): the tests check a killed one costs only its own.
      add_header X-Upstream $upstream_addr always;`;
  return nginxMain(
    dir,
    4096,
    `upstream api {
${upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n')}
    keepalive 64;
  }
  map $cookie_replica $replica {
    default api;
${upstreams.map((p, i) => `    "${i + 1}" 127.0.0.1:${p};`).join('\n')}
  }
  server {
    listen 127.0.0.1:${port};
    # Live streams, as the shipped nginx.conf passes them: as they come, for as long as they last.
    location ~ /events$ {
      ${proxied}
      proxy_buffering off;
      proxy_read_timeout 1h;
    }
    location / {
      ${proxied}
      proxy_next_upstream error timeout;
    }
  }`,
  );
}

/**
 * An nginx.conf for a child process of a test or the bench: in the foreground, one worker, its
 * pid, log and temporary files in `dir`, and `http` holding what the caller serves.
 */
export const nginxMain = (dir: string, connections: number, http: string): string => `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections ${connections}; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${http}
}
`;

export interface Balancer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export const startNginx = (upstreams: number[], options: NginxOptions = {}): Promise<Balancer> =>
  runNginx((dir, port) => nginxConf(dir, port, upstreams, options));

/**
 * A location block of the shipped compose nginx.conf (`location <path> { … }`), as it is there,
 * for a test to run behind the very lines an operator deploys.
 */
export function shippedLocation(path: string): string {
  const conf = readFileSync(new URL('../../infra/compose/nginx.conf', import.meta.url), 'utf8');
  const block = new RegExp(`\\n  location ${path.replace(/[/.]/g, '\\$&')} \\{\\n[\\s\\S]*?\\n  \\}`).exec(conf)?.[0];
  if (!block) throw new Error(`infra/compose/nginx.conf has no location ${path}`);
  return block;
}

/**
 * Debian's nginx serving the nginx.conf `conf` writes (given its folder and port), once the port
 * answers `ready` with a 2xx.
 */
export async function runNginx(conf: (dir: string, port: number) => string, ready = '/healthz'): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'convo-nginx-'));
  const port = await freePort();
  writeFileSync(join(dir, 'nginx.conf'), conf(dir, port));
  const child = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  for (
    let i = 0;
    !(await fetch(`${url}${ready}`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 100 || child.exitCode !== null) throw new Error('nginx did not start');
    await sleep(100);
  }
  return {
    url,
    port,
    async stop() {
      child.kill('SIGQUIT');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
