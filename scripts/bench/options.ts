import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

/** The published results' directory, in the project the bench was built from (above .dev-build/ when built). */
export const PUBLISHED = path.join(fs.existsSync(path.join(buildRoot, 'package.json')) ? buildRoot : path.dirname(buildRoot), 'docs', 'bench');

const positive = (name: string, v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} takes a positive integer`);
  return n;
};

export function parseArgs(argv: readonly string[]): Options {
  const o: Options = { quick: false, shadowOnly: false, shadowAa: false, rounds: 2, seconds: 3, cpuRounds: 3, cpuSeconds: 2, connections: 16, workers2: false, only: null, out: '', publish: false, compare: null, store: 'sqlite', pacedRate: null };
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    given.add(argv[i]);
    const value = () => argv[++i] ?? '';
    switch (argv[i]) {
      case '--quick':
        o.quick = true;
        break;
      case '--rounds':
        o.rounds = positive('--rounds', value());
        break;
      case '--seconds':
        o.seconds = positive('--seconds', value());
        break;
      case '--cpu-rounds':
        o.cpuRounds = positive('--cpu-rounds', value());
        break;
      case '--cpu-seconds':
        o.cpuSeconds = positive('--cpu-seconds', value());
        break;
      case '--connections':
        o.connections = positive('--connections', value());
        break;
      case '--workers2':
        o.workers2 = true;
        break;
      case '--shadow-only':
        o.shadowOnly = true;
        break;
      case '--shadow-aa':
        Object.assign(o, { shadowOnly: true, shadowAa: true });
        break;
      case '--only':
        o.only = value().split(',');
        break;
      case '--out':
        o.out = value();
        break;
      case '--publish':
        o.publish = true;
        break;
      case '--compare':
        o.compare = value();
        break;
      case '--store': {
        const store = value();
        if (store !== 'sqlite' && store !== 'postgres') throw new Error('--store takes sqlite or postgres');
        o.store = store;
        break;
      }
      case '--rate':
        o.pacedRate = Number(value());
        if (!(o.pacedRate > 0)) throw new Error('--rate takes a positive number of requests per second');
        break;
      default:
        throw new Error(`unknown option ${argv[i]}`);
    }
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
  if (o.publish && (o.quick || o.only !== null || o.out !== '' || o.compare !== null)) throw new Error('--publish is for the whole bench only: not with --quick, --only, --out or --compare');
  if (o.publish) o.out = PUBLISHED;
  // Anything but a published run writes where it cannot overwrite the published results.
  if (o.out === '') o.out = path.join(os.tmpdir(), `asmx-bench-out-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  return o;
}
