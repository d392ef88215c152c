import type { Sample } from '../basics/sample';

/**
 * The metrics the console reads, as samples: what prom-client holds (app/metrics.ts samplesOf, each
 * worker's under a cluster), never the /metrics text read back. The console sums them by labels, so
 * the page and a Prometheus scraping /metrics see the same numbers, and one worker's share is never
 * taken for the whole service.
 */

/** The sum of every sample of `name` whose labels include `match`. */
export function total(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  return sum;
}
