/**
 * `npm run bench`: the service side by side with the ceiling (plain node http answering the same
 * bytes) and node-soap as published, on the same machine, rounds alternating between targets so
 * that the machine's drift falls on all of them alike. Prints a table per workload and writes
 * docs/bench/bench.json and docs/bench/bench.svg (the README's chart).
 *
 *   npm run bench                        every workload, SQLite (+ PostgreSQL when DATABASE_URL is set), 1 and 2 workers
 *   npm run bench -- --quick             three workloads, one round of 2 s, SQLite with one worker
 *   npm run bench -- --rounds 5 --seconds 5 --only token-soap11,school500-get --out DIR
 *   npm run bench -- --shadow-only       only shadowing's cost to clients (issue 11), on the three quick workloads
 *   npm run bench -- --shadow-aa         the same with shadowing off in both twins: the comparison's own noise
 *   npm run bench -- --compare main --only token-soap11 [--store postgres]
 *                                        this build against another (a git ref, a checkout or a build) by CPU per request (compare.ts)
 *
 * Only the ratios within one run mean anything: on a shared 2-core machine the ceiling itself moves
 * by a factor of two from run to run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { renderChart } from './chart';
import { recordAnswer, type RecordedAnswer } from './ceiling';
import { type BenchStore, postgresStore, sqliteStore, writeCsv } from './data';
import { drive, type Measured, median } from './load';
import { canIdle, freePort, type Started, startNode, startService, stop, watchRss } from './processes';
import { checkTargets, type Row, printTable } from './report';
import { compare } from './compare';
import { checkShadow, measureShadow, printShadow, type ShadowRow, type StartTwins } from './shadow';
import { QUICK, WORKLOADS } from './workloads';
import { runMain } from '../run-main';

interface Options {
  quick: boolean;
  shadowOnly: boolean;
  /** Shadowing off in the twin too (A/A): what the comparison shows when there is nothing to find. */
  shadowAa: boolean;
  rounds: number;
  seconds: number;
  connections: number;
  only: string[] | null;
  out: string;
  /** --compare: the other build, and the store and rate of that comparison. */
  compare: string | null;
  store: 'sqlite' | 'postgres';
  /** --rate, the comparison's paced rate (not autocannon's `rate`, which Options would pass it as LoadOptions). */
  pacedRate: number | null;
  /** The options given (the comparison has its own defaults for those not given). */
  given: Set<string>;
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { quick: false, shadowOnly: false, shadowAa: false, rounds: 3, seconds: 4, connections: 16, only: null, out: 'docs/bench', compare: null, store: 'sqlite', pacedRate: null, given: new Set() };
  for (let i = 0; i < argv.length; i++) {
    o.given.add(argv[i]);
    const value = () => argv[++i] ?? '';
    switch (argv[i]) {
      case '--quick':
        Object.assign(o, { quick: true, rounds: 1, seconds: 2 });
        break;
      case '--rounds':
        o.rounds = Number(value());
        break;
      case '--seconds':
        o.seconds = Number(value());
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
      case '--connections':
        o.connections = Number(value());
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
      default:
        throw new Error(`unknown option ${argv[i]}`);
    }
  }
  if (![o.rounds, o.seconds, o.connections].every((n) => Number.isInteger(n) && n > 0)) throw new Error('--rounds, --seconds and --connections take positive integers');
  return o;
}

/** One service configuration under test. */
interface Variant {
  label: string;
  store: BenchStore;
  env: Record<string, string>;
}

interface Target {
  label: string;
  kind: 'service' | 'ceiling' | 'node-soap';
  process: Started;
  variant?: Variant;
}

export async function main(argv: readonly string[]): Promise<number> {
  const o = parseArgs(argv);
  // Ten rounds of 3 s: many short rounds alternating weigh the machine's drift on both builds alike,
  // and at 100 clock ticks a second a small call's thousands of requests a round keep the CPU time's step near 1%.
  if (o.compare !== null) return compare({ other: o.compare, only: o.only, store: o.store, rounds: o.given.has('--rounds') ? o.rounds : 10, seconds: o.given.has('--seconds') ? o.seconds : 3, rate: o.pacedRate });
  const workloads = WORKLOADS.filter((w) => (o.only ?? (o.quick ? QUICK : null))?.includes(w.id) ?? true);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asmx-bench-'));
  const started: Started[] = [];
  const stores: BenchStore[] = [];
  try {
    const files = writeCsv(dir);
    stores.push(await sqliteStore(dir, files));
    if (process.env.DATABASE_URL && !o.quick && !o.shadowOnly) stores.push(await postgresStore(process.env.DATABASE_URL, files));
    const variants: Variant[] = stores.flatMap((store) =>
      (o.quick || o.shadowOnly ? [1] : [1, 2]).map((workers) => ({ label: `service, ${store.name}, ${workers === 1 ? '1 worker' : `WORKERS=${workers}`}`, store, env: { WORKERS: String(workers) } })),
    );

    // As deployed: request logs at info (to a file), metrics on, no admin listener to keep ports few.
    const serviceEnv = async (v: Variant, storeEnv = v.store.env) => ({ ...storeEnv, ...v.env, PORT: String(await freePort()), ADMIN_PORT: '0', LOG_LEVEL: 'info' });
    const targets: Target[] = [];
    for (const v of variants) {
      const p = await startService(v.label, await serviceEnv(v));
      started.push(p);
      targets.push({ label: v.label, kind: 'service', process: p, variant: v });
    }
    // The ceiling replays what the first service variant answers.
    const first = targets[0].process;
    const answers: RecordedAnswer[] = [];
    for (const w of workloads) answers.push(await recordAnswer(first.port, w.request));
    const answersFile = path.join(dir, 'answers.json');
    fs.writeFileSync(answersFile, JSON.stringify(answers));
    const ceiling = await startNode('ceiling', 'scripts/bench/ceiling.js', [answersFile], { PORT: String(await freePort()) });
    started.push(ceiling);
    targets.push({ label: 'ceiling (node http, same bytes)', kind: 'ceiling', process: ceiling });
    const nodeSoap = await startNode('node-soap', 'scripts/bench/node-soap-baseline.js', [], { PORT: String(await freePort()) });
    started.push(nodeSoap);
    targets.push({ label: 'node-soap + Express', kind: 'node-soap', process: nodeSoap });

    process.stdout.write(`${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), node ${process.version}; ${o.rounds} rounds of ${o.seconds} s, ${o.connections} connections, autocannon\n`);
    const rows: Row[] = [];
    for (const [i, w] of o.shadowOnly ? [] : workloads.entries()) {
      const status = answers[i].status;
      const mine = targets.filter((t) => t.kind !== 'node-soap' || w.nodeSoap);
      const samples = new Map<Target, Measured[]>(mine.map((t) => [t, []]));
      const peaks = new Map<Target, number>();
      // One short unrecorded pass warms each target's code paths and caches.
      for (const t of mine) await drive(t.process.port, [w.request], null, { connections: o.connections, seconds: 1 });
      for (let round = 0; round < o.rounds; round++) {
        for (const t of mine) {
          const peak = watchRss(t.process.child.pid!);
          samples.get(t)!.push(await drive(t.process.port, [w.request], t.kind === 'node-soap' ? null : status, o));
          peaks.set(t, Math.max(peaks.get(t) ?? 0, peak()));
        }
      }
      for (const t of mine) {
        const m = samples.get(t)!;
        rows.push({
          workload: w.id,
          title: w.title,
          target: t.label,
          kind: t.kind,
          rps: median(m.map((x) => x.rps)),
          p50: median(m.map((x) => x.p50)),
          p99: median(m.map((x) => x.p99)),
          errors: m.reduce((n, x) => n + x.errors, 0),
          peakRssMb: (peaks.get(t) ?? 0) / 2 ** 20,
          rounds: m.map((x) => Math.round(x.rps)),
        });
      }
      printTable(w, rows.filter((r) => r.workload === w.id));
    }

    // Twins of the first variant, shadowing off and on, the copies going to a stand-in legacy host at idle priority.
    const shadowed = workloads.filter((w) => QUICK.includes(w.id));
    let shadowRows: ShadowRow[] = [];
    if (shadowed.length > 0) {
      const legacy = await startNode('stand-in legacy host', 'scripts/bench/stand-in.js', [answersFile], { PORT: String(await freePort()) }, [], true);
      started.push(legacy);
      if (!canIdle) process.stdout.write('\nchrt not found: the stand-in legacy host runs at nice 19 at best, and takes CPU from the service\n');
      // Nothing else of the bench's runs meanwhile: the services measured above idle with timers and collectors of their own.
      for (const t of targets) await stop(t.process);
      const v = variants[0];
      const startTwins: StartTwins = async (onFirst) => {
        const onAdmin = await freePort();
        const shadowEnv = { ...(o.shadowAa ? {} : { SHADOW_URL: `http://127.0.0.1:${legacy.port}/` }), SHADOW_LOG: path.join(dir, 'shadow.jsonl'), ADMIN_PORT: String(onAdmin) };
        // As the variant was measured above; the shadowing twin on its own copy of the data (data.ts).
        const startOff = async () => startService('shadowing off', await serviceEnv(v));
        const startOn = async () => startService('shadowing', { ...(await serviceEnv(v, v.store.separate())), ...shadowEnv });
        if (onFirst) {
          const on = await startOn();
          return { on, off: await startOff(), onAdmin };
        }
        const off = await startOff();
        return { off, on: await startOn(), onAdmin };
      };
      shadowRows = await measureShadow(startTwins, shadowed, shadowed.map((w) => answers[workloads.indexOf(w)].status), o);
      if (o.shadowAa) process.stdout.write('\nA/A: the twin runs with shadowing off too; what "on" shows is the comparison\'s own noise\n');
      printShadow(shadowRows);
    }

    const verdicts = [...checkTargets(workloads, rows, variants[0]?.label ?? ''), ...checkShadow(shadowRows, o.shadowAa)];
    for (const v of verdicts) process.stdout.write(`${v.ok ? 'PASS' : 'MISS'}  ${v.target}: ${v.measured}\n`);
    fs.mkdirSync(o.out, { recursive: true });
    const meta = { date: new Date().toISOString(), cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, ...o };
    const failed = rows.some((r) => r.errors > 0) || shadowRows.some((r) => r.on.errors + r.off.errors > 0);
    if (o.shadowOnly) {
      const file = path.join(o.out, o.shadowAa ? 'shadow-aa.json' : 'shadow.json');
      fs.writeFileSync(file, `${JSON.stringify({ meta, shadow: shadowRows, targets: verdicts }, null, 2)}\n`);
      process.stdout.write(`wrote ${file}\n`);
      return failed ? 1 : 0;
    }
    fs.writeFileSync(path.join(o.out, 'bench.json'), `${JSON.stringify({ meta, rows, shadow: shadowRows, targets: verdicts }, null, 2)}\n`);
    const svg = await renderChart(
      rows.map((r) => ({ workload: r.title, target: r.target, rps: Math.max(1, r.rps) })),
      `Requests per second, ${o.connections} connections (${meta.date.slice(0, 10)}, ${meta.cpus} CPUs)`,
    );
    fs.writeFileSync(path.join(o.out, 'bench.svg'), svg);
    process.stdout.write(`wrote ${path.join(o.out, 'bench.json')} and ${path.join(o.out, 'bench.svg')}\n`);
    return failed ? 1 : 0;
  } finally {
    for (const p of started) await stop(p);
    for (const s of stores) await s.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) runMain(main);
