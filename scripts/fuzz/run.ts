import { type Case, mutate, Rng, type RequestParts, seedRequests, serialize } from './mutate';
import { exchange, type Outcome, problems } from './wire';

/**
 * A fuzz run: `count` mutated requests against a service, `concurrency` at a time, each judged on its
 * own; then every valid seed once more, which must still be answered with a 200.
 */

export interface FuzzOptions {
  host: string;
  port: number;
  basePath?: string;
  count: number;
  seed: number;
  concurrency: number;
  /** How long one request may take to be answered: the service's request time-out and a margin. */
  deadlineMs: number;
  /** Send AuthCode too (it queues an SMS): only against a service of one's own. */
  includeEffects: boolean;
  onProgress?: (done: number) => void;
}

export interface Failure {
  name: string;
  problems: string[];
  /** The start of the request, latin1, for the report. */
  request: string;
}

export interface FuzzReport {
  sent: number;
  failures: Failure[];
  /** Answers by status, for the report. */
  statuses: Record<string, number>;
  /** Valid requests after the run that were not answered with a 200. */
  afterwards: Failure[];
}

function failure(c: Pick<Case, 'name' | 'bytes'>, found: string[]): Failure {
  return { name: c.name, problems: found, request: c.bytes.subarray(0, 160).toString('latin1') };
}

function statusKey(outcome: Outcome): string {
  return outcome.kind === 'response' ? String(outcome.response.status) : outcome.kind;
}

export async function fuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const seeds: RequestParts[] = seedRequests(`${opts.host}:${opts.port}`, opts.basePath, opts.includeEffects);
  const rng = new Rng(opts.seed);
  const report: FuzzReport = { sent: 0, failures: [], statuses: {}, afterwards: [] };
  // Cases are made in order from the one generator, so a seed always gives the same run.
  const cases: Case[] = [];
  for (let i = 0; i < opts.count; i++) cases.push(mutate(seeds, rng));

  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      const outcome = await exchange(opts.host, opts.port, c.bytes, c.method, opts.deadlineMs);
      report.sent++;
      report.statuses[statusKey(outcome)] = (report.statuses[statusKey(outcome)] ?? 0) + 1;
      const found = problems(outcome, c.bytes);
      if (found.length > 0) report.failures.push(failure(c, found));
      opts.onProgress?.(report.sent);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));

  for (const seed of seeds) {
    const bytes = serialize(seed);
    const outcome = await exchange(opts.host, opts.port, bytes, seed.method, opts.deadlineMs);
    const found = problems(outcome);
    if (outcome.kind === 'response' && outcome.response.status !== 200) found.push(`status ${outcome.response.status}`);
    if (found.length > 0) report.afterwards.push(failure({ name: `valid ${seed.method} ${seed.target}`, bytes }, found));
  }
  return report;
}
