/**
 * `npm run bench`: the service side by side with the ceiling (plain node http answering the same
 * bytes) and node-soap as published, on the same machine, rounds alternating between targets so
 * that the machine's drift falls on all of them alike. Per workload, req/s, latency and peak RSS at
 * saturation (autocannon, 16 connections), then CPU time per request under a paced load (cpu-table.ts),
 * and the targets of issue 24 judged on it (judge.ts). Writes bench.json and bench.svg (CPU per
 * request) to a directory of its own, or with --publish to docs/bench/ (the README's chart).
 *
 *   npm run bench                        every workload, SQLite (+ PostgreSQL when DATABASE_URL is set), one worker
 *   npm run bench -- --workers2          the same with WORKERS=2 beside (req/s only: issue 24 judges one worker)
 *   npm run bench -- --publish           the same, its results written to docs/bench/
 *   npm run bench -- --quick             three workloads, one round of each kind, SQLite with one worker
 *   npm run bench -- --rounds 3 --cpu-rounds 5 --only token-soap11,school500-get --out DIR
 *   npm run bench -- --shadow-only       only shadowing's cost (issues 11 and 24), on a small call and a roster
 *   npm run bench -- --shadow-aa         the same with shadowing off in both twins: the comparison's own noise
 *   npm run bench -- --compare main --only token-soap11 [--store postgres]
 *                                        this build against another (a git ref, a checkout or a build) by CPU per request (compare.ts)
 *
 * Only the ratios within one run mean anything: on a shared 2-core machine the ceiling itself moves
 * by a factor of two from run to run, and CPU per request by some 10%.
 */
import '../../src/basics/supported-node';
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
import { type CpuRow, type CpuTarget, measureCpu, printCpuTable } from './cpu-table';
import { judgeCpu } from './judge';
import { cpuMarkdown } from './markdown';
import { BENCH_COMMAND, benchOptions } from './options';
import { parseCommandLine, usageError } from '../../src/basics/command-line';
import { checkShadow, measureShadow, printShadow, type ShadowRow, type StartTwins } from './shadow';
import { BENCH_SERVICE_ENV, freshRequests, QUICK, SHADOWED, WORKLOADS } from './workloads';
import { runMain } from '../run-main';

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
  const line = parseCommandLine(BENCH_COMMAND, argv);
  if (typeof line === 'number') return line;
  const o = benchOptions(line.values);
  if (typeof o === 'string') return usageError(BENCH_COMMAND, o);
  if (o.compare !== null)
    return compare({ other: o.compare, only: o.only, store: o.store, rounds: o.rounds, seconds: o.seconds, rate: o.pacedRate });
  const loadAtStart = os.loadavg()[0];
  const workloads = WORKLOADS.filter((w) => (o.only ?? (o.quick ? QUICK : null))?.includes(w.id) ?? true);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asmx-bench-'));
  const started: Started[] = [];
  const stores: BenchStore[] = [];
  try {
    const files = writeCsv(dir);
    stores.push(await sqliteStore(dir, files));
    if (process.env.DATABASE_URL && !o.quick && !o.shadowOnly) stores.push(await postgresStore(process.env.DATABASE_URL, files));
    const variants: Variant[] = stores.flatMap((store) =>
      (o.workers2 && !o.quick && !o.shadowOnly ? [1, 2] : [1]).map((workers) => ({
        label: `service, ${store.name}, ${workers === 1 ? '1 worker' : `WORKERS=${workers}`}`,
        store,
        env: { WORKERS: String(workers) },
      })),
    );

    // As deployed: request logs at info (to a file), metrics on, no admin listener to keep ports few.
    const serviceEnv = async (v: Variant, storeEnv = v.store.env) => ({
      ...BENCH_SERVICE_ENV,
      ...storeEnv,
      ...v.env,
      PORT: String(await freePort()),
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
    });
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

    process.stdout.write(
      `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}; req/s: ${o.rounds} rounds of ${o.seconds} s, ${o.connections} connections, autocannon; CPU: ${o.cpuRounds} rounds of ${o.cpuSeconds} s, paced, 4 connections\n`,
    );
    const rows: Row[] = [];
    const cpuRows: CpuRow[] = [];
    for (const [i, w] of o.shadowOnly ? [] : workloads.entries()) {
      const status = answers[i].status;
      const mine = targets.filter((t) => t.kind !== 'node-soap' || w.nodeSoap);
      const samples = new Map<Target, Measured[]>(mine.map((t) => [t, []]));
      const peaks = new Map<Target, number>();
      // One short unrecorded pass warms each target's code paths and caches.
      const fresh = freshRequests(w);
      for (const t of mine) await drive(t.process.port, [w.request], null, { connections: o.connections, seconds: 1 }, fresh);
      for (let round = 0; round < o.rounds; round++) {
        for (const t of mine) {
          const peak = watchRss(t.process.child.pid!);
          samples
            .get(t)!
            .push(
              await drive(
                t.process.port,
                [w.request],
                t.kind === 'node-soap' ? null : status,
                { connections: o.connections, seconds: o.seconds },
                fresh,
              ),
            );
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
      printTable(
        w,
        rows.filter((r) => r.workload === w.id),
      );
      // CPU per request: one worker of each store, the ceiling, node-soap.
      const cpuTargets: CpuTarget[] = mine
        .filter((t) => t.kind !== 'service' || t.variant?.env.WORKERS === '1')
        .map((t) => ({
          label: t.label,
          kind: t.kind,
          store: t.variant?.store.name,
          process: t.process,
          status: t.kind === 'node-soap' ? 200 : status,
          max: rows.find((r) => r.workload === w.id && r.target === t.label)!.rps,
        }));
      const measured = await measureCpu(w, cpuTargets, { rounds: o.cpuRounds, seconds: o.cpuSeconds });
      cpuRows.push(...measured);
      printCpuTable(w, measured);
    }

    // Twins of the first variant, shadowing off and on, the copies going to a stand-in legacy host at idle priority.
    const shadowed = workloads.filter((w) => SHADOWED.includes(w.id));
    let shadowRows: ShadowRow[] = [];
    if (shadowed.length > 0) {
      const legacy = await startNode(
        'stand-in legacy host',
        'scripts/bench/stand-in.js',
        [answersFile],
        { PORT: String(await freePort()) },
        [],
        true,
      );
      started.push(legacy);
      if (!canIdle)
        process.stdout.write('\nchrt not found: the stand-in legacy host runs at nice 19 at best, and takes CPU from the service\n');
      // Nothing else of the bench's runs meanwhile: the services measured above idle with timers and collectors of their own.
      for (const t of targets) await stop(t.process);
      const v = variants[0];
      const startTwins: StartTwins = async (onFirst) => {
        const onAdmin = await freePort();
        const shadowEnv = {
          ...(o.shadowAa ? {} : { SHADOW_URL: `http://127.0.0.1:${legacy.port}/` }),
          SHADOW_LOG: path.join(dir, 'shadow.jsonl'),
          ADMIN_PORT: String(onAdmin),
        };
        // As the variant was measured above; the shadowing twin on its own copy of the data (data.ts).
        const startOff = async () => startService('shadowing off', await serviceEnv(v));
        const startOn = async () => startService('shadowing', { ...(await serviceEnv(v, v.store.separate())), ...shadowEnv });
        // A port found free can be taken before the service binds it (once, mid-run, on a shared
        // machine): tried again on another; and the twin started first is not left running if the other fails.
        const retried = async (start: () => Promise<Started>) => {
          for (let attempt = 1; ; attempt++) {
            try {
              return await start();
            } catch (e) {
              if (attempt === 3 || !/EADDRINUSE/.test(String(e))) throw e;
            }
          }
        };
        const [first, second] = onFirst ? [startOn, startOff] : [startOff, startOn];
        const a = await retried(first);
        const b = await retried(second).catch(async (e: unknown) => {
          await stop(a);
          throw e;
        });
        return onFirst ? { on: a, off: b, onAdmin } : { off: a, on: b, onAdmin };
      };
      shadowRows = await measureShadow(
        startTwins,
        shadowed,
        shadowed.map((w) => answers[workloads.indexOf(w)].status),
        { connections: o.connections, seconds: o.seconds, rounds: o.rounds },
      );
      if (o.shadowAa) process.stdout.write('\nA/A: the twin runs with shadowing off too; what "on" shows is the comparison\'s own noise\n');
      printShadow(shadowRows);
    }

    const oneWorker = variants.filter((v) => v.env.WORKERS === '1').map((v) => ({ name: v.store.name, label: v.label }));
    const cpuVerdicts = o.shadowAa ? [] : judgeCpu(workloads, cpuRows, rows, oneWorker, shadowRows);
    const verdicts = [...checkTargets(workloads, rows, variants[0]?.label ?? ''), ...checkShadow(shadowRows, o.shadowAa)];
    const say = (title: string, vs: typeof verdicts) => {
      if (vs.length > 0)
        process.stdout.write(`\n${title}\n${vs.map((v) => `${v.ok ? 'HOLDS' : 'MISS '}  ${v.target}: ${v.measured}`).join('\n')}\n`);
    };
    say(`Issues 42 and 31, on CPU time per request (Node.js ${process.version}):`, cpuVerdicts);
    say('Issues 9, 11 and 31, on req/s, p99, RSS and shadow coverage:', verdicts);
    fs.mkdirSync(o.out, { recursive: true });
    const meta = {
      date: new Date().toISOString(),
      cpus: os.cpus().length,
      cpu: os.cpus()[0]?.model,
      node: process.version,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg()[0] },
      ...o,
    };
    const failed =
      rows.some((r) => r.errors > 0) || cpuRows.some((r) => r.errors > 0) || shadowRows.some((r) => r.on.errors + r.off.errors > 0);
    if (o.shadowOnly) {
      const file = path.join(o.out, o.shadowAa ? 'shadow-aa.json' : 'shadow.json');
      fs.writeFileSync(file, `${JSON.stringify({ meta, shadow: shadowRows, targets: [...cpuVerdicts, ...verdicts] }, null, 2)}\n`);
      process.stdout.write(`wrote ${file}\n`);
      return failed ? 1 : 0;
    }
    fs.writeFileSync(
      path.join(o.out, 'bench.json'),
      `${JSON.stringify({ meta, rows, cpu: cpuRows, shadow: shadowRows, targets: [...cpuVerdicts, ...verdicts] }, null, 2)}\n`,
    );
    const svg = await renderChart(
      cpuRows.map((r) => ({ workload: r.title, target: r.target, us: Math.max(1, r.us) })),
      `CPU time per request, paced, 4 connections (${meta.date.slice(0, 10)}, ${meta.cpus} CPUs, every server on Node.js ${meta.node})`,
    );
    fs.writeFileSync(path.join(o.out, 'bench.svg'), svg);
    fs.writeFileSync(
      path.join(o.out, 'bench.md'),
      cpuMarkdown(
        cpuRows,
        shadowRows,
        cpuVerdicts,
        `${meta.date.slice(0, 16).replace('T', ' ')} UTC, ${meta.cpus} CPUs, every server on Node.js ${meta.node}, load average ${loadAtStart.toFixed(1)} at the start and ${meta.loadAverage.atEnd.toFixed(1)} at the end`,
      ),
    );
    process.stdout.write(`wrote bench.json, bench.svg and bench.md (the CPU table and verdicts in markdown) to ${o.out}\n`);
    return failed ? 1 : 0;
  } finally {
    for (const p of started) await stop(p);
    for (const s of stores) await s.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) runMain(main);
