/**
 * `npm run bench -- --compare OTHER [--only WORKLOAD,...] [--store sqlite|postgres] [--rounds N] [--seconds S] [--rate R]`:
 * this build of the service against another, by CPU time per request, for trying a change.
 *
 * OTHER is a git ref of this repository (`main`, a commit: its tree is extracted into a scratch
 * directory and built there), a checkout (built into its own .dev-build/, as its `npm run bench`
 * would) or a build (a directory holding src/main.js, such as a checkout's dist/). Each build gets
 * its own copy of the data set, loaded by its own import command, and runs as deployed.
 *
 * Per workload: both warmed as fast as they answer (which sets the rate), then rounds alternating
 * A B, B A, ... (ten of 3 s by default) each under a paced load (4 keep-alive connections, a third of the slower one's
 * maximum: never saturated), the other build paused meanwhile (SIGSTOP) so that its timers and
 * collector take no core from the one measured. CPU per request is the service's process tree's
 * CPU time over the round (cpu.ts) divided by the requests answered.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BenchStore, postgresStore, sqliteStore, writeCsv } from './data';
import { drive, median } from './load';
import { pace } from './paced';
import { buildRoot, freePort, type Started, startService, stop } from './processes';
import { recordAnswer } from './ceiling';
import { treePids } from './cpu';
import { BENCH_SERVICE_ENV, freshRequests, requestsFor, type Workload, WORKLOADS } from './workloads';

export interface CompareOptions {
  other: string;
  only: string[] | null;
  store: 'sqlite' | 'postgres';
  rounds: number;
  seconds: number;
  /** A fixed paced rate (req/s); unset, a third of the slower build's maximum. */
  rate: number | null;
}

/** The project this build was made from: above .dev-build/. */
const projectRoot = path.dirname(buildRoot);

interface Build {
  label: string;
  root: string;
  /** A scratch directory to remove at the end. */
  scratch?: string;
}

const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 30 });

/** The other build, made from a ref, a checkout, or taken as it is. */
function otherBuild(other: string): Build {
  const dir = path.resolve(other);
  if (fs.existsSync(path.join(dir, 'src', 'main.js'))) return { label: dir, root: dir };
  if (fs.existsSync(path.join(dir, 'scripts', 'build.js'))) {
    if (!fs.existsSync(path.join(dir, 'node_modules'))) throw new Error(`${dir} has no node_modules: run npm ci there, or give a git ref`);
    process.stdout.write(`building ${dir} into its .dev-build/\n`);
    run(process.execPath, ['scripts/build.js', '--out', '.dev-build'], dir);
    return { label: dir, root: path.join(dir, '.dev-build') };
  }
  let commit: string;
  try {
    commit = run('git', ['rev-parse', '--verify', '--quiet', `${other}^{commit}`], projectRoot)
      .toString()
      .trim();
  } catch {
    throw new Error(`--compare ${other}: neither a build, a checkout nor a git ref of ${projectRoot}`);
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'asmx-bench-other-'));
  fs.writeFileSync(path.join(scratch, 'tree.tar'), run('git', ['archive', '--format=tar', commit], projectRoot));
  run('tar', ['-xf', 'tree.tar'], scratch);
  fs.symlinkSync(fs.realpathSync(path.join(projectRoot, 'node_modules')), path.join(scratch, 'node_modules'));
  process.stdout.write(`building ${other} (${commit.slice(0, 10)}) in ${scratch}\n`);
  run(process.execPath, ['scripts/build.js', '--out', '.dev-build'], scratch);
  return { label: `${other} (${commit.slice(0, 10)})`, root: path.join(scratch, '.dev-build'), scratch };
}

/** Pauses (SIGSTOP) or resumes (SIGCONT) a service and its workers. */
function signalTree(p: Started, signal: 'SIGSTOP' | 'SIGCONT'): void {
  for (const pid of treePids(p.child.pid!)) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}

/** Runs `measure` with `_p` the only service running (the others stopped). */
export async function alone<T>(_p: Started, others: readonly Started[], measure: () => Promise<T>): Promise<T> {
  for (const o of others) signalTree(o, 'SIGSTOP');
  try {
    return await measure();
  } finally {
    for (const o of others) signalTree(o, 'SIGCONT');
  }
}

/** One round of one build: its CPU per request and what the load saw. */
export interface CpuRound {
  usPerRequest: number;
  answered: number;
  rps: number;
  p50: number;
  p99: number;
  waited: number;
  errors: number;
}

/** A paced round on `p` (4 keep-alive connections), its CPU per request from /proc. */
export async function cpuRound(p: Started, w: Workload, status: number, rate: number, seconds: number): Promise<CpuRound> {
  const m = await pace(p.port, requestsFor(w, Math.round(rate * seconds)), status, { rate, seconds, connections: 4, cpuOf: p.child.pid });
  return {
    usPerRequest: m.answered === 0 ? 0 : (1e6 * m.cpuSeconds) / m.answered,
    answered: m.answered,
    rps: m.rps,
    p50: m.p50,
    p99: m.p99,
    waited: m.waited,
    errors: m.errors,
  };
}

/** Round by round, b's value over a's (the rounds alternate, so each pair met the same machine): their median, middle half and range. */
export function pairedRatio(
  a: readonly number[],
  b: readonly number[],
): { median: number; q1: number; q3: number; min: number; max: number } {
  const xs = a
    .map((x, i) => b[i] / x)
    .filter((x) => Number.isFinite(x))
    .sort((x, y) => x - y);
  const at = (q: number) => xs[Math.min(xs.length - 1, Math.max(0, Math.round(q * (xs.length - 1))))];
  return { median: median(xs), q1: at(0.25), q3: at(0.75), min: xs[0], max: xs[xs.length - 1] };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function compare(o: CompareOptions): Promise<number> {
  const workloads = WORKLOADS.filter((w) => (o.only ?? ['token-soap11']).includes(w.id));
  if (workloads.length === 0) throw new Error(`--only: no such workload (${WORKLOADS.map((w) => w.id).join(', ')})`);
  if (o.store === 'postgres' && !process.env.DATABASE_URL) throw new Error('--store postgres needs DATABASE_URL');
  const builds: Build[] = [{ label: `this build (${projectRoot})`, root: buildRoot }, otherBuild(o.other)];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asmx-bench-compare-'));
  const stores: BenchStore[] = [];
  const started: Started[] = [];
  let failed = false;
  try {
    const files = writeCsv(dir);
    for (const [i, b] of builds.entries()) {
      const name = `bench_${'ab'[i]}`;
      stores.push(
        o.store === 'postgres'
          ? await postgresStore(process.env.DATABASE_URL!, files, b.root, name)
          : await sqliteStore(dir, files, b.root, name),
      );
    }
    for (const [i, b] of builds.entries()) {
      const env = {
        ...BENCH_SERVICE_ENV,
        ...stores[i].env,
        WORKERS: '1',
        PORT: String(await freePort()),
        ADMIN_PORT: '0',
        LOG_LEVEL: 'info',
      };
      started.push(await startService('AB'[i], env, [], 'src/main.js', b.root));
    }
    process.stdout.write(
      `A: ${builds[0].label}\nB: ${builds[1].label}\n${o.store === 'postgres' ? 'PostgreSQL' : 'SQLite'}, 1 worker each; ${o.rounds} rounds of ${o.seconds} s per build, paced, 4 connections; ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}\n`,
    );
    for (const w of workloads) {
      const statuses: number[] = [];
      for (const p of started) statuses.push((await recordAnswer(p.port, w.request)).status);
      if (statuses[0] !== statuses[1])
        process.stdout.write(
          `${w.id}: the builds answer differently (status ${statuses[0]} and ${statuses[1]}): each is held to its own\n`,
        );
      // Warmed alike, as fast as each answers: code optimised, caches filled; the slower sets the rate.
      const most: number[] = [];
      for (const p of started)
        most.push(
          (
            await alone(
              p,
              started.filter((x) => x !== p),
              () => drive(p.port, [w.request], null, { connections: 4, seconds: 2 }, freshRequests(w)),
            )
          ).rps,
        );
      const rate = o.rate ?? Math.max(10, Math.round(Math.min(...most) / 3));
      const rounds: CpuRound[][] = [[], []];
      for (let r = 0; r < o.rounds; r++) {
        for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
          const p = started[i];
          rounds[i].push(
            await alone(
              p,
              started.filter((x) => x !== p),
              () => cpuRound(p, w, statuses[i], rate, o.seconds),
            ),
          );
        }
      }
      failed ||= rounds.flat().some((x) => x.errors > 0);
      printComparison(w, rate, most, rounds);
    }
    return failed ? 1 : 0;
  } finally {
    for (const p of started) await stop(p);
    for (const s of stores) await s.drop();
    fs.rmSync(dir, { recursive: true, force: true });
    for (const b of builds) if (b.scratch) fs.rmSync(b.scratch, { recursive: true, force: true });
  }
}

function printComparison(w: Workload, rate: number, most: readonly number[], rounds: readonly CpuRound[][]): void {
  const lines = [[`${w.title}, paced at ${fmt(rate)} req/s`, 'CPU us/req', 'rounds', 'p50 ms', 'p99 ms', 'waited', 'errors', 'max req/s']];
  for (const [i, rs] of rounds.entries()) {
    lines.push([
      `  ${'AB'[i]}`,
      fmt(median(rs.map((x) => x.usPerRequest)), 1),
      rs.map((x) => fmt(x.usPerRequest)).join(' '),
      fmt(median(rs.map((x) => x.p50)), 2),
      fmt(median(rs.map((x) => x.p99)), 2),
      String(rs.reduce((n, x) => n + x.waited, 0)),
      String(rs.reduce((n, x) => n + x.errors, 0)),
      fmt(most[i]),
    ]);
  }
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  process.stdout.write(
    `\n${lines.map((l) => l.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n')}\n`,
  );
  const ratio = pairedRatio(
    rounds[0].map((x) => x.usPerRequest),
    rounds[1].map((x) => x.usPerRequest),
  );
  process.stdout.write(
    `  B/A CPU per request: ${fmt(ratio.median, 3)}x, the median of the rounds' ratios (middle half ${fmt(ratio.q1, 3)} to ${fmt(ratio.q3, 3)}, all ${fmt(ratio.min, 3)} to ${fmt(ratio.max, 3)})\n`,
  );
  const a = median(rounds[0].map((x) => x.usPerRequest));
  const b = median(rounds[1].map((x) => x.usPerRequest));
  process.stdout.write(
    `  A (this build) spends ${fmt(Math.abs(100 * (a / b - 1)), 1)}% ${a <= b ? 'less' : 'more'} CPU per request than B (medians)\n`,
  );
}
