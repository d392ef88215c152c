import type { Workload } from './workloads';

export interface Row {
  workload: string;
  title: string;
  target: string;
  kind: 'service' | 'ceiling' | 'node-soap';
  /** Medians over the rounds. */
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  peakRssMb: number;
  /** Each round's req/s, to show the spread. */
  rounds: number[];
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function printTable(w: Workload, rows: readonly Row[]): void {
  const ceiling = rows.find((r) => r.kind === 'ceiling');
  const nodeSoap = rows.find((r) => r.kind === 'node-soap');
  const lines = [[w.title, 'req/s', 'p50 ms', 'p99 ms', 'of ceiling', 'x node-soap', 'peak RSS MB', 'errors', 'rounds']];
  for (const r of rows) {
    lines.push([
      `  ${r.target}`,
      fmt(r.rps),
      fmt(r.p50, 1),
      fmt(r.p99, 1),
      ceiling ? `${fmt((100 * r.rps) / ceiling.rps, 1)}%` : '-',
      nodeSoap ? `${fmt(r.rps / nodeSoap.rps, 2)}x` : '-',
      r.kind === 'service' ? fmt(r.peakRssMb) : '-',
      String(r.errors),
      r.rounds.join(' '),
    ]);
  }
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  const out = lines.map((l) => l.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
  process.stdout.write(`\n${out}\n`);
}

export interface Verdict {
  target: string;
  ok: boolean;
  measured: string;
}

/** The issue's targets, judged on one service variant (one worker) against the others in the same run. */
export function checkTargets(workloads: readonly Workload[], rows: readonly Row[], variant: string): Verdict[] {
  const get = (id: string, kind: Row['kind'], target?: string) =>
    rows.find((r) => r.workload === id && r.kind === kind && (target === undefined || r.target === target));
  const service = (id: string) => get(id, 'service', variant);
  const verdicts: Verdict[] = [];
  const ratio = (id: string, of: 'ceiling' | 'node-soap', atLeast: number, what: string) => {
    const s = service(id);
    const base = get(id, of);
    if (s === undefined || base === undefined) return;
    const x = s.rps / base.rps;
    verdicts.push({
      target: `${what} >= ${of === 'ceiling' ? `${atLeast * 100}% of the ceiling` : `${atLeast}x node-soap`}`,
      ok: x >= atLeast,
      measured: of === 'ceiling' ? `${fmt(100 * x, 1)}%` : `${fmt(x, 2)}x`,
    });
  };
  ratio('token-soap11', 'node-soap', 2, 'GetTokenDevice SOAP 1.1');
  ratio('token-soap11', 'ceiling', 0.25, 'GetTokenDevice SOAP 1.1');
  ratio('token-get', 'ceiling', 0.4, 'GetTokenDevice GET');
  ratio('school500-soap11', 'node-soap', 10, 'GetStudentSchool 500 SOAP 1.1');
  const soap500 = get('school500-soap11', 'node-soap');
  const get500 = service('school500-get');
  if (soap500 && get500)
    verdicts.push({
      target: 'GetStudentSchool 500 GET >= node-soap SOAP',
      ok: get500.rps >= soap500.rps,
      measured: `${fmt(get500.rps / soap500.rps, 2)}x`,
    });

  // Linear: the cost of one more student does not rise with the roster (µs per request, by size).
  for (const binding of ['soap11', 'get']) {
    const sizes = workloads
      .filter((w) => w.students !== undefined && w.binding === binding)
      .map((w) => ({ n: w.students!, row: service(w.id) }));
    const cost = sizes.filter((s) => s.row !== undefined).map((s) => ({ n: s.n, us: 1e6 / s.row!.rps }));
    if (cost.length < 3) continue;
    const marginal = cost.slice(1).map((c, i) => (c.us - cost[i].us) / (c.n - cost[i].n));
    const last = marginal[marginal.length - 1];
    // Noise allowance: the per-student cost of the largest step within 25% of the cheapest earlier step.
    const ok = last <= 1.25 * Math.min(...marginal.slice(0, -1).map((m) => Math.max(m, 0.001)));
    verdicts.push({
      target: `GetStudentSchool ${binding}: cost per request linear in students`,
      ok,
      measured: `µs per extra student: ${marginal.map((m) => fmt(m, 2)).join(', ')} (sizes ${cost.map((c) => c.n).join(', ')})`,
    });
  }
  for (const [id, limit] of [
    ['token-soap11', 20],
    ['token-get', 20],
    ['school500-soap11', 50],
    ['school500-get', 50],
  ] as const) {
    const s = service(id);
    if (s) verdicts.push({ target: `${id} p99 < ${limit} ms`, ok: s.p99 < limit, measured: `${fmt(s.p99, 1)} ms` });
  }
  const rss = rows.filter((r) => r.target === variant).reduce((m, r) => Math.max(m, r.peakRssMb), 0);
  if (rss > 0) verdicts.push({ target: 'peak RSS < 150 MB', ok: rss < 150, measured: `${fmt(rss)} MB` });
  const two = variant.replace('1 worker', 'WORKERS=2');
  const scaling = workloads.map((w) => [service(w.id), get(w.id, 'service', two)] as const).filter(([a, b]) => a && b);
  if (scaling.length > 0) {
    const xs = scaling.map(([a, b]) => b!.rps / a!.rps);
    const m = xs.reduce((s, x) => s + x, 0) / xs.length;
    verdicts.push({
      target: 'WORKERS=2 >= 1.6x one worker (mean over workloads)',
      ok: m >= 1.6,
      measured: `${fmt(m, 2)}x (${xs.map((x) => fmt(x, 2)).join(', ')})`,
    });
  }
  return verdicts;
}
