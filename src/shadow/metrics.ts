import client from 'prom-client';

/**
 * Shadow traffic in prom-client's default registry, so it shows on the admin listener's /metrics
 * (summed over workers like the rest). `operation` and `binding` are those of this service's answer
 * (empty where the request named no operation).
 *
 * - `match`, `difference`: the two answers compared;
 * - `noise`: they differ, but the second legacy site's answer differs from the first's the same way
 *   (SHADOW_URL_SECONDARY; without it every difference is a `difference`);
 * - `dropped`: no copy made, the queue being full;
 * - `legacy_error`: the legacy host gave no answer (refused, reset, timed out);
 * - `service_error`: this service gave none to a copy (legacy-first only).
 */
export type ShadowOutcome = 'match' | 'difference' | 'noise' | 'dropped' | 'legacy_error' | 'service_error';

const exchanges = new client.Counter({
  name: 'asmx_shadow_exchanges_total',
  help: 'Shadow copies by outcome (match, difference, noise, dropped, legacy_error, service_error), operation and binding',
  labelNames: ['operation', 'binding', 'outcome'] as const,
});

export interface Labels {
  endpoint?: string;
  operation?: string;
  binding?: string;
}

/** Each label set's counter, found once: counting is on the client's thread (a batch of tallies every 200 ms, a drop at a time). (Few: operations × bindings × outcomes.) */
const counters = new Map<string, client.Counter.Internal>();

export function countShadow(labels: Labels, outcome: ShadowOutcome, n = 1): void {
  const operation = labels.operation ?? '';
  const binding = labels.binding ?? '';
  const key = `${operation}\n${binding}\n${outcome}`;
  let counter = counters.get(key);
  if (counter === undefined) counters.set(key, (counter = exchanges.labels({ operation, binding, outcome })));
  counter.inc(n);
}
