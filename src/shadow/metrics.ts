import client from 'prom-client';

/**
 * Shadow traffic in prom-client's default registry, so it shows on the admin listener's /metrics
 * (summed over workers like the rest). `operation` and `binding` are those of this service's answer
 * (empty where the request named no operation).
 *
 * - `match`, `difference`: the two answers compared;
 * - `noise`: they differ, but the second legacy site's answer differs from the first's the same way
 *   (SHADOW_URL_SECONDARY; without it every difference is a `difference`);
 * - `dropped`: not compared, for the `reason` it carries (DropReason);
 * - `legacy_error`: the legacy host gave no answer (refused, reset, timed out);
 * - `service_error`: this service gave none to a copy (legacy-first only).
 */
export type ShadowOutcome = 'match' | 'difference' | 'noise' | 'dropped' | 'legacy_error' | 'service_error';

/**
 * Why a copy was dropped, the `reason` label of `dropped` (the only outcome that has one):
 * - `sampled`: left out on purpose, the copier being behind: one in N copies of each operation is
 *   compared meanwhile (sampler.ts);
 * - `queue`: SHADOW_QUEUE copies were waiting already;
 * - `bytes`: the copy did not fit in SHADOW_QUEUE_BYTES beside the copies held (budget.ts);
 * - `answer_bytes`: the answer to the copy was larger than the copier reads (budget.ts answerCap):
 *   sent, but neither a match nor a difference;
 * - `copier_exit`: the copier process ended with the copy in it;
 * - `stop`: the service stopped before the copy settled (mirror.ts STOP_SETTLE_MAX_MS).
 */
export type DropReason = 'sampled' | 'queue' | 'bytes' | 'answer_bytes' | 'copier_exit' | 'stop';

const exchanges = new client.Counter({
  name: 'asmx_shadow_exchanges_total',
  help: 'Shadow copies by outcome (match, difference, noise, dropped, legacy_error, service_error), operation and binding; dropped ones by reason (sampled, queue, bytes, answer_bytes, copier_exit, stop)',
  labelNames: ['operation', 'binding', 'outcome', 'reason'] as const,
});

/** What holds copies' bytes in this process (each mirror's budget): the gauge sums them when scraped. */
export const holders = new Set<{ readonly held: number }>();

new client.Gauge({
  name: 'asmx_shadow_held_bytes',
  help: 'Bytes of shadow copies offered and not yet settled (compared or dropped), bounded by SHADOW_QUEUE_BYTES per process',
  collect() {
    let sum = 0;
    for (const h of holders) sum += h.held;
    this.set(sum);
  },
});

/** Each mirror's sampler (sampler.ts): the gauge shows the largest N, 1 while every copy is compared. */
export const samplers = new Set<{ readonly every: number }>();

new client.Gauge({
  name: 'asmx_shadow_compared_one_in',
  help: 'Shadow copies compared now: 1 for every copy; N for one in N of each operation and binding, the copier being behind (the rest dropped, reason sampled)',
  collect() {
    let most = 1;
    for (const s of samplers) most = Math.max(most, s.every);
    this.set(most);
  },
});

export interface Labels {
  endpoint?: string;
  operation?: string;
  binding?: string;
}

/** Each label set's counter, found once: counting is on the client's thread (a batch of tallies every 200 ms, a drop at a time). (Few: operations × bindings × outcomes.) */
const counters = new Map<string, client.Counter.Internal>();

export function countShadow(labels: Labels, outcome: Exclude<ShadowOutcome, 'dropped'>, n?: number): void;
export function countShadow(labels: Labels, outcome: 'dropped', n: number, reason: DropReason): void;
export function countShadow(labels: Labels, outcome: ShadowOutcome, n = 1, reason?: DropReason): void {
  const operation = labels.operation ?? '';
  const binding = labels.binding ?? '';
  const key = `${operation}\n${binding}\n${outcome}\n${reason ?? ''}`;
  let counter = counters.get(key);
  if (counter === undefined)
    counters.set(
      key,
      (counter = exchanges.labels(reason === undefined ? { operation, binding, outcome } : { operation, binding, outcome, reason })),
    );
  counter.inc(n);
}

/**
 * What became of each difference's line in the log (SHADOW_LOG): `written`, or not for a reason:
 * `examples` (its kind had its SHADOW_LOG_EXAMPLES lines this hour: examples.ts), `disk_floor`
 * (less free than SHADOW_LOG_KEEP_FREE), `budget` (a line longer than a quarter of
 * SHADOW_LOG_MAX_BYTES), `busy` (the disk behind), `error` (the file cannot be written). Counted
 * in the serving process (each worker), whichever process writes the file.
 */
export type LogOutcome = 'written' | 'examples' | 'disk_floor' | 'budget' | 'busy' | 'error';

const logLines = new client.Counter({
  name: 'asmx_shadow_log_lines_total',
  help: 'Differences by what became of their line in the differences log: written, or not (examples, disk_floor, budget, busy, error)',
  labelNames: ['outcome'] as const,
});

export const countLogLine = (outcome: LogOutcome, n = 1): void => logLines.inc({ outcome }, n);

/** Each report's pen (log-file.ts): the gauge shows the largest size they know of the log. */
export const logPens = new Set<{ readonly bytes: number }>();

new client.Gauge({
  name: 'asmx_shadow_log_bytes',
  help: 'Bytes of the differences log on disk, its rotated files counted, bounded by SHADOW_LOG_MAX_BYTES (the last size its writer told)',
  // One file for every worker: each tells its latest size of it, so the largest, not their sum.
  aggregator: 'max',
  collect() {
    let most = 0;
    for (const p of logPens) most = Math.max(most, p.bytes);
    this.set(most);
  },
});
