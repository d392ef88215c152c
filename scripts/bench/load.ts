import autocannon from 'autocannon';
import type { BenchRequest } from './workloads';

export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  /** Connection errors, time-outs and answers other than the one recorded status. */
  errors: number;
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  /** A fixed total rate (the soak); unset, as fast as the target answers. */
  rate?: number;
}

/** Drives one target with autocannon (keep-alive connections, one request in flight on each). */
export async function drive(port: number, requests: readonly BenchRequest[], expectStatus: number | null, o: LoadOptions): Promise<Measured> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: o.connections,
    duration: o.seconds,
    overallRate: o.rate,
    timeout: 30,
    requests: requests.map((r) => ({ method: r.method, path: r.path, headers: r.headers, body: r.body })),
  });
  const wrongStatus = expectStatus === null ? result.non2xx : Object.entries(result.statusCodeStats ?? {}).reduce((n, [code, s]) => (Number(code) === expectStatus ? n : n + (s as { count: number }).count), 0);
  return {
    rps: result.requests.total / o.seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + wrongStatus,
  };
}
