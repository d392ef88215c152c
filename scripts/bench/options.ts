import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandSpec, Values } from '../../src/basics/command-line';
import { buildRoot } from './processes';

/** `npm run bench`'s options (index.ts says what each run does). */
export interface Options {
  quick: boolean;
  shadowOnly: boolean;
  /** Shadowing off in the twin too (A/A): what the comparison shows when there is nothing to find. */
  shadowAa: boolean;
  /** The req/s rounds (autocannon, saturating): how many, how long. */
  rounds: number;
  seconds: number;
  /** The CPU rounds (paced): how many, how long. */
  cpuRounds: number;
  cpuSeconds: number;
  connections: number;
  /** WORKERS=2 beside one worker, in the req/s rounds. */
  workers2: boolean;
  only: string[] | null;
  /** Where the results go: docs/bench only with --publish, else a directory of its own. */
  out: string;
  publish: boolean;
  /** --compare: the other build, and the store and paced rate of that comparison. */
  compare: string | null;
  store: 'sqlite' | 'postgres';
  pacedRate: number | null;
}

/** The project the bench was built from (above .dev-build/ when built). */
const PROJECT = fs.existsSync(path.join(buildRoot, 'package.json')) ? buildRoot : path.dirname(buildRoot);
/** The published results' directory. */
export const PUBLISHED = path.join(PROJECT, 'docs', 'bench');

/** Why a published run may not run on `version` (process.version): its figures are the Node line .nvmrc names, or none. */
export function publishRefusal(version: string, nvmrc = fs.readFileSync(path.join(PROJECT, '.nvmrc'), 'utf8')): string | null {
  const line = nvmrc.trim().replace(/^v/, '').split('.')[0];
  return version.replace(/^v/, '').split('.')[0] === line
    ? null
    : `--publish runs on the Node.js line .nvmrc names (${line}), not ${version}: the published figures are that line's`;
}

export const BENCH_COMMAND = {
  usage: [
    'npm run bench -- [--quick] [--workers2] [--only ID,...] [--rounds N] [--seconds N] [--cpu-rounds N] [--cpu-seconds N] [--out DIR]',
    'npm run bench -- --publish [--workers2]',
    'npm run bench -- --shadow-only | --shadow-aa',
    'npm run bench -- --compare REF --only ID,... [--store sqlite|postgres] [--rate N]',
  ],
  summary: [
    'The service side by side with the ceiling (plain node http) and node-soap as published, on this machine:',
    'req/s, latency and peak RSS at saturation, then CPU time per request under a paced load (docs/performance.md).',
  ],
  options: {
    quick: { type: 'boolean', help: 'three workloads, one round of each kind, SQLite with one worker' },
    rounds: { type: 'integer', min: 1, help: 'req/s rounds (default 2)' },
    seconds: { type: 'integer', min: 1, help: 'seconds a req/s round (default 3)' },
    'cpu-rounds': { type: 'integer', min: 1, help: 'paced CPU rounds (default 3)' },
    'cpu-seconds': { type: 'integer', min: 1, help: 'seconds a CPU round (default 2)' },
    connections: { type: 'integer', min: 1, help: 'connections at saturation (default 16)' },
    workers2: { type: 'boolean', help: 'WORKERS=2 beside one worker, in the req/s rounds' },
    'shadow-only': { type: 'boolean', help: "only shadowing's cost, on a small call and a roster" },
    'shadow-aa': { type: 'boolean', help: "the same with shadowing off in both twins: the comparison's own noise" },
    only: { type: 'string', value: 'ID,...', help: 'only these workloads' },
    out: { type: 'string', value: 'DIR', help: 'where the results go (default: a new directory under the temporary one)' },
    publish: { type: 'boolean', help: 'the whole bench, its results written to docs/bench/' },
    compare: { type: 'string', value: 'REF', help: 'this build against another (a git ref, a checkout or a build) by CPU per request' },
    store: { type: 'string', value: 'sqlite|postgres', help: 'with --compare: the store (default sqlite)' },
    rate: { type: 'string', value: 'N', help: 'with --compare: the paced rate, requests a second' },
  },
  notes: ['exit codes: 0 every request answered (the targets, held or missed, are in the output), 1 a request failed, 2 usage'],
} as const satisfies CommandSpec;

/** The options the command line gave, with their defaults, or why they do not go together. */
export function benchOptions(v: Values<typeof BENCH_COMMAND>): Options | string {
  const o: Options = {
    quick: v.quick === true,
    shadowOnly: v['shadow-only'] === true || v['shadow-aa'] === true,
    shadowAa: v['shadow-aa'] === true,
    rounds: v.rounds ?? 2,
    seconds: v.seconds ?? 3,
    cpuRounds: v['cpu-rounds'] ?? 3,
    cpuSeconds: v['cpu-seconds'] ?? 2,
    connections: v.connections ?? 16,
    workers2: v.workers2 === true,
    only: v.only === undefined ? null : v.only.split(','),
    out: v.out ?? '',
    publish: v.publish === true,
    compare: v.compare ?? null,
    store: 'sqlite',
    pacedRate: null,
  };
  const given = new Set(Object.keys(v).map((name) => `--${name}`));
  if (v.store !== undefined) {
    if (v.store !== 'sqlite' && v.store !== 'postgres') return '--store takes sqlite or postgres';
    o.store = v.store;
  }
  if (v.rate !== undefined) {
    o.pacedRate = Number(v.rate);
    if (!(o.pacedRate > 0)) return '--rate takes a positive number of requests per second';
  }
  // --quick: one short round of each kind, unless said otherwise.
  if (o.quick) {
    if (!given.has('--rounds')) o.rounds = 1;
    if (!given.has('--seconds')) o.seconds = 2;
    if (!given.has('--cpu-rounds')) o.cpuRounds = 1;
  }
  // --compare: ten rounds of 3 s. Many short rounds alternating weigh the machine's drift on both builds
  // alike, and at 100 clock ticks a second a small call's thousands of requests a round keep the CPU time's step near 1%.
  if (o.compare !== null) {
    if (!given.has('--rounds')) o.rounds = 10;
    if (!given.has('--seconds')) o.seconds = 3;
  }
  if (o.publish && (o.quick || o.only !== null || o.out !== '' || o.compare !== null))
    return '--publish is for the whole bench only: not with --quick, --only, --out or --compare';
  if (o.publish) {
    const refused = publishRefusal(process.version);
    if (refused !== null) return refused;
    o.out = PUBLISHED;
  }
  // Anything but a published run writes where it cannot overwrite the published results.
  if (o.out === '') o.out = path.join(os.tmpdir(), `asmx-bench-out-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  return o;
}
