import autocannon from 'autocannon';
import type { BenchRequest } from './workloads';

export interface Measured {
  rps: number;
  /** Latency percentiles in ms, to the microsecond (autocannon's own histogram keeps whole milliseconds). */
  p50: number;
  p99: number;
  /** Connection errors, time-outs and answers other than the one recorded status. */
  errors: number;
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  /** A fixed total rate (the soak, shadowing's cost); unset, as fast as the target answers. */
  rate?: number;
}

/** The value below which `share` of the sorted samples fall. */
export const percentile = (sorted: ArrayLike<number>, share: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];

/** The middle value (of an even count, the mean of the two in the middle): a round's odd stall moves it little. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Drives one target with autocannon (keep-alive connections, one request in flight on each).
 * `fresh`: each request made anew by it (every connection would otherwise send the same sequence).
 */
export async function drive(
  port: number,
  requests: readonly BenchRequest[],
  expectStatus: number | null,
  o: LoadOptions,
  fresh?: () => BenchRequest,
): Promise<Measured> {
  const times: number[] = [];
  const run = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: o.connections,
    duration: o.seconds,
    overallRate: o.rate,
    timeout: 30,
    requests:
      fresh === undefined
        ? requests.map((r) => ({ method: r.method, path: r.path, headers: r.headers, body: r.body }))
        : [{ setupRequest: (r: object) => ({ ...r, ...fresh() }) }],
  });
  // Each answer's time as autocannon measured it (hrtime, in ms with a fraction).
  (run as unknown as NodeJS.EventEmitter).on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => times.push(ms));
  const result = await run;
  const wrongStatus =
    expectStatus === null
      ? result.non2xx
      : Object.entries(result.statusCodeStats ?? {}).reduce(
          (n, [code, s]) => (Number(code) === expectStatus ? n : n + (s as { count: number }).count),
          0,
        );
  times.sort((a, b) => a - b);
  return {
    rps: result.requests.total / o.seconds,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    errors: result.errors + result.timeouts + wrongStatus,
  };
}
