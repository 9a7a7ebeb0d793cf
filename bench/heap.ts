import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN } from './options.ts';
import { type Server, start, startOptions, stopServer } from './servers.ts';

/*
 * `node bench/heap.ts` (after a `npm run bench`, on its data): what each server's V8 heap holds
 * once it has answered a few lookups. Each is started as the bench starts it, with Node's
 * `--heapsnapshot-signal`; the snapshot (taken after a full collection) is summed by kind of
 * object, and the modules' source text by package. bench/results/2026-12-05-heap.md has a run.
 */

const dir = mkdtempSync(join(tmpdir(), 'convo-heap-'));
const signal = [`--heapsnapshot-signal=SIGUSR2`, `--diagnostic-dir=${dir}`];

/** The parts of a V8 heap snapshot this reads (its `meta` names the fields of each row). */
interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(2)} MB`.padStart(9);

/** The package a module's address belongs to: node_modules' name, the project's workspace, or Node's own. */
function packageOf(url: string): string {
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency?.[1]) return dependency[1];
  const ours = /\/((?:apps|packages)\/[^/]+)\//.exec(url);
  if (ours?.[1]) return `(ours) ${ours[1]}`;
  return url.startsWith('node:') || !url.includes('/') ? '(Node itself)' : '(elsewhere)';
}

function summarize(file: string): string[] {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const { node_fields: nf, node_types, edge_fields: ef, edge_types } = s.snapshot.meta;
  const [N, E] = [nf.length, ef.length];
  const [type, name, size, edgeCount] = [
    nf.indexOf('type'),
    nf.indexOf('name'),
    nf.indexOf('self_size'),
    nf.indexOf('edge_count'),
  ];
  const [edgeType, edgeName, edgeTo] = [ef.indexOf('type'), ef.indexOf('name_or_index'), ef.indexOf('to_node')];
  const node = (i: number, field: number) => s.nodes[i + field] ?? 0;
  const edgeOf = (k: number, field: number) => s.edges[k + field] ?? 0;
  const byType = new Map<string, number>();
  const sources = new Map<string, { bytes: number; modules: number }>();
  let total = 0;
  let edge = 0;
  for (let i = 0; i < s.nodes.length; i += N) {
    const kind = node_types[0][node(i, type)] ?? '?';
    total += node(i, size);
    byType.set(kind, (byType.get(kind) ?? 0) + node(i, size));
    const edges = node(i, edgeCount);
    // A script: the code object with a `source` edge; its name is the module's address.
    if (kind === 'code') {
      for (let k = edge; k < edge + edges * E; k += E) {
        const named = edge_types[0][edgeOf(k, edgeType)];
        if (named === 'element' || named === 'hidden') continue;
        if (s.strings[edgeOf(k, edgeName)] !== 'source') continue;
        const key = packageOf(s.strings[node(i, name)] ?? '');
        const row = sources.get(key) ?? { bytes: 0, modules: 0 };
        row.bytes += node(edgeOf(k, edgeTo), size);
        row.modules += 1;
        sources.set(key, row);
      }
    }
    edge += edges * E;
  }
  const lines = [`heap after a full collection: ${mb(total)}`];
  for (const [kind, bytes] of [...byType].sort((a, b) => b[1] - a[1]).slice(0, 8))
    lines.push(`  ${mb(bytes)}  ${kind}`);
  const all = [...sources.values()].reduce((sum, r) => sum + r.bytes, 0);
  lines.push(`modules' source text: ${mb(all)}, by package (modules):`);
  for (const [key, r] of [...sources].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 16)) {
    lines.push(`  ${mb(r.bytes)}  ${key} (${r.modules})`);
  }
  return lines;
}

async function snapshotOf(server: Server): Promise<string[]> {
  for (let i = 0; i < 20; i++) {
    await fetch(`${server.base}/api/v1/conversations/get_conversation`, { headers: { authorization: TOKEN } });
  }
  const before = new Set(readdirSync(dir));
  server.child.kill('SIGUSR2');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`${server.name} wrote no heap snapshot within a minute`);
    await new Promise((r) => setTimeout(r, 250));
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    // Written in full once the process answers again (the snapshot holds its thread meanwhile).
    if (file && (await fetch(`${server.base}/healthz`).catch(() => null))) {
      return summarize(join(dir, file));
    }
  }
}

try {
  for (const [name, script, port, options] of [
    ['product', 'apps/api/src/entry/node.ts', 3311, startOptions()],
    ['baseline', 'bench/baseline/server.ts', 3312, []],
  ] as const) {
    const server = await start(name, script, port, [...options, ...signal]);
    try {
      console.log(`${name}:\n${(await snapshotOf(server)).join('\n')}\n`);
    } finally {
      await stopServer(server);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
