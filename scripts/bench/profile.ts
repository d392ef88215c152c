/**
 * `npm run bench:profile -- WORKLOAD [SECONDS]`: a CPU profile of the service (node --cpu-prof) under
 * one benchmark workload at 16 connections, summarised as the share of samples spent in each package
 * or part of the service (inclusive: a sample counts for every package on its stack) and the
 * functions with the most self time. The .cpuprofile is kept for a closer look (Chrome DevTools).
 */
import '../../src/basics/supported-node';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sqliteStore, writeCsv } from './data';
import { drive } from './load';
import { freePort, startService, stop } from './processes';
import { WORKLOADS } from './workloads';
import { runMain } from '../run-main';
import { type CommandSpec, parseCommandLine, usageError } from '../../src/basics/command-line';

const COMMAND = {
  usage: ['npm run bench:profile -- [WORKLOAD] [SECONDS]'],
  summary: [
    'A CPU profile of the service (node --cpu-prof) under one benchmark workload (default token-soap11) at',
    '16 connections for SECONDS (default 8), summarised by package and by function; the .cpuprofile is kept.',
  ],
  options: {},
  positionals: ['[WORKLOAD]', '[SECONDS]'],
  notes: [`workloads: ${WORKLOADS.map((x) => x.id).join(', ')}`, 'exit codes: 0 profiled, 1 the run failed, 2 usage'],
} as const satisfies CommandSpec;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Which part of the code a frame belongs to: a package, a part of the service, or node itself. */
function partOf(url: string, fn: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const own = /(?:dist|\.dev-build)\/(src\/[^/]+(?:\/[^/.]+)?)/.exec(url);
  if (own) return own[1].replace(/\/[^/]*$/, (m) => (own[1].split('/').length > 2 ? m : ''));
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').split('/')[0];
  // Frames without a script: V8 builtins and node's C++ (the syscalls: writev, read).
  return fn === '(garbage collector)' || fn === '(idle)' || fn === '(program)' ? fn : '(native)';
}

export function summarise(profile: CpuProfile, top = 20): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  const self = new Map<string, number>();
  const selfByPart = new Map<string, number>();
  for (const id of profile.samples) {
    const leaf = byId.get(id)!;
    const name = `${leaf.callFrame.functionName || '(anonymous)'} ${leaf.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*(?:dist|\.dev-build)\//, '')}:${leaf.callFrame.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + 1);
    const own = partOf(leaf.callFrame.url, leaf.callFrame.functionName);
    selfByPart.set(own, (selfByPart.get(own) ?? 0) + 1);
    const parts = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const f = byId.get(n)!.callFrame;
      if (f.functionName !== '(root)') parts.add(partOf(f.url, f.functionName));
    }
    for (const p of parts) inclusive.set(p, (inclusive.get(p) ?? 0) + 1);
  }
  const total = profile.samples.length;
  const pct = (n: number) => `${((100 * n) / total).toFixed(1).padStart(5)}%`;
  const list = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, n]) => `  ${pct(n)}  ${k}`)
      .join('\n');
  return `${total} samples\ninclusive, by part:\n${list(inclusive)}\nself, by part:\n${list(selfByPart)}\nself, by function:\n${list(self)}\n`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const [id = 'token-soap11', seconds = '8'] = line.positionals;
  const w = WORKLOADS.find((x) => x.id === id);
  if (w === undefined) return usageError(COMMAND, `unknown workload ${id}; one of ${WORKLOADS.map((x) => x.id).join(', ')}`);
  if (!/^[1-9]\d{0,4}$/.test(seconds)) return usageError(COMMAND, `SECONDS must be a whole number from 1, not "${seconds}"`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asmx-profile-'));
  const store = await sqliteStore(dir, writeCsv(dir));
  const env = { ...store.env, PORT: String(await freePort()), ADMIN_PORT: '0', LOG_LEVEL: 'info' };
  const service = await startService('service', env, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  try {
    await drive(service.port, [w.request], null, { connections: 16, seconds: 1 });
    const m = await drive(service.port, [w.request], null, { connections: 16, seconds: Number(seconds) });
    process.stdout.write(`${w.title}: ${Math.round(m.rps)} req/s under the profiler\n`);
  } finally {
    await stop(service);
  }
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('no profile written');
  const kept = path.join(os.tmpdir(), `asmx-${id}-${Date.now()}.cpuprofile`);
  fs.copyFileSync(path.join(dir, file), kept);
  process.stdout.write(summarise(JSON.parse(fs.readFileSync(kept, 'utf8')) as CpuProfile));
  process.stdout.write(`profile: ${kept}\n`);
  fs.rmSync(dir, { recursive: true, force: true });
  return 0;
}

if (require.main === module) runMain(main);
