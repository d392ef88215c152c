/**
 * The CPU part of `npm run bench` (issue 24): per workload, each target's CPU time per request under a
 * paced load (4 keep-alive connections, a third of the maximum: never saturated), rounds alternating
 * between the targets (forwards, then backwards), the server's process tree's CPU read from /proc.
 */
import { cpuRound, type CpuRound } from './compare';
import { median } from './load';
import type { Started } from './processes';
import type { Workload } from './workloads';

export interface CpuTarget {
  label: string;
  kind: 'service' | 'ceiling' | 'node-soap';
  /** The service's store (services only). */
  store?: string;
  process: Started;
  /** The status it answers the workload with. */
  status: number;
  /** Its req/s at saturation (16 connections), which sets the paced rate. */
  max: number;
}

export interface CpuRow {
  workload: string;
  title: string;
  target: string;
  kind: CpuTarget['kind'];
  store?: string;
  /** Paced rate, req/s. */
  rate: number;
  /** CPU µs per request: the median over the rounds, and each round's. */
  us: number;
  rounds: number[];
  /** Requests that found all 4 connections busy (then the load was not quite paced), and errors. */
  waited: number;
  errors: number;
  answered: number;
}

/**
 * The paced rate of each target: one rate for all, a third of the slowest one's saturated req/s, so
 * that every ratio judged (to the ceiling, to node-soap, PostgreSQL to SQLite) is taken at one rate.
 * A server's CPU per request rises steeply as the rate falls (each request meets a sleeping process
 * and caches others have filled: the ceiling spent 25 to 40 µs a small answer at 2,000 to 4,500
 * req/s, 280 µs at 50; node-soap paced at half the service's rate looked 30% dearer). On a roster
 * node-soap is 10 to 20 times slower than the rest and judged against nothing: it gets a third of
 * its own, the others are not slowed to it. Never above a third of a target's own maximum: a
 * saturated server batches reads and writes and spends less per request than it does below.
 */
export function pacedRates(targets: readonly Pick<CpuTarget, 'kind' | 'max'>[], roster = false): number[] {
  const pacing = targets.filter((t) => !(roster && t.kind === 'node-soap'));
  const shared = Math.min(...pacing.map((t) => t.max)) / 3;
  return targets.map((t) => Math.max(5, Math.round(Math.min(shared, t.max / 3))));
}

export async function measureCpu(w: Workload, targets: readonly CpuTarget[], o: { rounds: number; seconds: number }): Promise<CpuRow[]> {
  const rates = pacedRates(targets, w.students !== undefined);
  const got: CpuRound[][] = targets.map(() => []);
  for (let round = 0; round < o.rounds; round++) {
    const order = targets.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) got[i].push(await cpuRound(targets[i].process, w, targets[i].status, rates[i], o.seconds));
  }
  return targets.map((t, i) => ({
    workload: w.id,
    title: w.title,
    target: t.label,
    kind: t.kind,
    ...(t.store === undefined ? {} : { store: t.store }),
    rate: rates[i],
    us: median(got[i].map((r) => r.usPerRequest)),
    rounds: got[i].map((r) => Math.round(r.usPerRequest)),
    waited: got[i].reduce((n, r) => n + r.waited, 0),
    errors: got[i].reduce((n, r) => n + r.errors, 0),
    answered: got[i].reduce((n, r) => n + r.answered, 0),
  }));
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function printCpuTable(w: Workload, rows: readonly CpuRow[]): void {
  const ceiling = rows.find((r) => r.kind === 'ceiling');
  const nodeSoap = rows.find((r) => r.kind === 'node-soap');
  const lines = [[`${w.title}: CPU per request, paced`, 'us/req', 'x ceiling', 'x node-soap', 'req/s', 'rounds', 'waited', 'errors']];
  for (const r of rows) {
    lines.push([
      `  ${r.target}`,
      fmt(r.us, 1),
      ceiling ? `${fmt(r.us / ceiling.us, 2)}x` : '-',
      nodeSoap ? `${fmt(r.us / nodeSoap.us, 2)}x` : '-',
      fmt(r.rate),
      r.rounds.join(' '),
      `${r.waited} of ${r.answered}`,
      String(r.errors),
    ]);
  }
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  process.stdout.write(
    `${lines.map((l) => l.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n')}\n`,
  );
}
