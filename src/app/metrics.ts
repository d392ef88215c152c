import client from 'prom-client';
import { buildInfo } from '../basics/build-info';
import { droppedLogLines } from '../basics/log-destination';
import type { Sample } from '../basics/sample';
import type { ConnectionLimits } from '../config';
import { onLockWait } from '../store/busy';
import type { Store } from '../store/store';
import { ConnectionCap } from '../transport/connection-cap';
import { pacing } from '../transport/pacing';
import { closedConnections } from '../transport/closed';
import type { Exchange } from '../transport/types';

/**
 * The service's Prometheus metrics, in prom-client's global registry: with several workers, the
 * cluster primary's AggregatorRegistry asks each worker for this registry and sums them (see
 * cluster.ts). Labels take values from small fixed sets only (contract names, bindings, status codes).
 */
const registry = client.register;
client.collectDefaultMetrics({ register: registry });

/**
 * Which build answers, Prometheus's way (as prometheus_build_info and node_exporter's do): a gauge
 * always 1 whose labels say it, to join onto other series or to see a rolling upgrade's mix. `max`
 * across workers: one series per build, 1, however many workers run it.
 */
const build = buildInfo();
new client.Gauge({
  name: 'asmx_build_info',
  help: 'Always 1: the version of the service, the git commit it was built from (unknown when not built in a git checkout) and the Node.js version running it',
  labelNames: ['version', 'commit', 'node'] as const,
  aggregator: 'max',
}).set({ version: build.version, commit: build.commit ?? 'unknown', node: process.version }, 1);

const requests = new client.Counter({
  name: 'asmx_requests_total',
  help: 'Requests answered, by endpoint, operation, binding and HTTP status',
  labelNames: ['endpoint', 'operation', 'binding', 'status'] as const,
});

const duration = new client.Histogram({
  name: 'asmx_request_duration_seconds',
  help: 'Time from the request line to the last byte of the answer',
  labelNames: ['endpoint', 'operation', 'binding'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
});

const faults = new client.Counter({
  name: 'asmx_faults_total',
  help: 'SOAP faults and HTTP error texts answered, by fault code (SOAP 1.1 words)',
  labelNames: ['endpoint', 'operation', 'binding', 'code'] as const,
});

const storeErrors = new client.Counter({
  name: 'asmx_store_errors_total',
  help: 'Operations that failed unexpectedly (the store or beneath it) and got the generic server fault',
  labelNames: ['endpoint', 'operation'] as const,
});

const lockWaits = new client.Counter({
  name: 'asmx_store_lock_waits_total',
  help: "SQLite statements that met another connection's lock: waited (then ran) or gave_up (failed after the limit)",
  labelNames: ['outcome'] as const,
});
onLockWait((outcome) => lockWaits.inc({ outcome }));

let poolSource: Store | null = null;
new client.Gauge({
  name: 'asmx_store_pool_connections',
  help: "The store's connection pool, by state (only for a store with a pool)",
  labelNames: ['state'] as const,
  collect() {
    const usage = poolSource?.poolUsage?.();
    if (usage === undefined) return;
    this.set({ state: 'total' }, usage.total);
    this.set({ state: 'idle' }, usage.idle);
    this.set({ state: 'waiting' }, usage.waiting);
  },
});

/** The store whose pool the gauge reports. */
export function watchStore(store: Store): void {
  poolSource = store;
}

/** One operation's series: a request counter per status, and its durations. */
interface OperationSeries {
  requests: Map<number, ReturnType<typeof requests.labels>>;
  duration: ReturnType<typeof duration.labels>;
}

/**
 * Each combination's series, looked up once: prom-client turns a label object into its key at every
 * inc and observe, twice per request. The combinations are the labels' own small fixed sets.
 */
const operations = new Map<string, OperationSeries>();
function seriesOf(endpoint: string, operation: string, binding: string): OperationSeries {
  const key = `${endpoint}\n${operation}\n${binding}`;
  let series = operations.get(key);
  if (series === undefined) {
    series = { requests: new Map(), duration: duration.labels({ endpoint, operation, binding }) };
    operations.set(key, series);
  }
  return series;
}

export function recordExchange(ex: Exchange, status: number, seconds: number): void {
  const endpoint = ex.endpoint ?? '';
  const operation = ex.operation ?? '';
  const binding = ex.binding ?? '';
  const series = seriesOf(endpoint, operation, binding);
  let count = series.requests.get(status);
  if (count === undefined) {
    count = requests.labels({ endpoint, operation, binding, status: String(status) });
    series.requests.set(status, count);
  }
  count.inc();
  series.duration.observe(seconds);
  if (ex.fault !== undefined) faults.inc({ endpoint, operation, binding, code: ex.fault });
  if (ex.error !== undefined) storeErrors.inc({ endpoint, operation });
}

/** What connections hold back while their clients do not take their answers (transport/pacing.ts). */
new client.Gauge({
  name: 'asmx_requests_waiting',
  help: 'Pipelined requests read and waiting for the answer to an earlier one on their connection',
  collect() {
    this.set(pacing.waiting);
  },
});
new client.Gauge({
  name: 'asmx_connections_held',
  help: 'Connections whose reading is stopped until their client takes its answers, with bytes read and not yet parsed',
  collect() {
    this.set(pacing.held);
  },
});
new client.Gauge({
  name: 'asmx_connections_held_bytes',
  help: 'Bytes read from those connections and not yet parsed',
  collect() {
    this.set(pacing.heldBytes);
  },
});
new client.Counter({
  name: 'asmx_connections_closed_total',
  help: 'Connections the service closed on its own, by reason (send_timeout: its client took nothing of an answer for SEND_TIMEOUT_MS; idle: nothing asked on it for that long, or KEEPALIVE_TIMEOUT_MS once kept alive; evicted: idle while another connection of its address needed its place)',
  labelNames: ['reason'] as const,
  collect() {
    this.reset();
    for (const [reason, count] of Object.entries(closedConnections)) this.inc({ reason }, count);
  },
});

new client.Counter({
  name: 'asmx_log_lines_dropped_total',
  help: 'Log lines dropped because MAX_LOG_BUFFER_BYTES of lines were waiting for stderr (a stalled journald, a pipe nobody reads)',
  collect() {
    this.reset();
    this.inc(droppedLogLines.count);
  },
});

/**
 * Metrics of the listening sockets, kept by the process that accepts connections and holds the admin
 * listener: the single process, or the cluster primary. Apart from the global registry, which is what each worker reports: the
 * primary adds this one to its sum over them (listenerMetrics).
 */
const listenerRegistry = new client.Registry();
let capSource: ConnectionCap | null = null;
new client.Gauge({
  name: 'asmx_connections_open',
  help: 'Client connections open, as counted where they are accepted (for the per-address cap)',
  registers: [listenerRegistry],
  collect() {
    this.set(capSource?.open ?? 0);
  },
});
const refusedConnections = new client.Counter({
  name: 'asmx_connections_refused_total',
  help: 'Connections closed as soon as they were accepted, by reason (per_address: the address held MAX_CONNECTIONS_PER_ADDRESS)',
  labelNames: ['reason'] as const,
  registers: [listenerRegistry],
});
// Shown from the start: an alert on its rate needs the series before the first refusal.
refusedConnections.inc({ reason: 'per_address' }, 0);

const adminRefused = new client.Counter({
  name: 'asmx_admin_refused_total',
  help: 'Requests the admin listener refused by their Host header: host (a name not its own, 421: DNS rebinding) or two_hosts (400)',
  labelNames: ['reason'] as const,
  registers: [listenerRegistry],
});
adminRefused.inc({ reason: 'host' }, 0);
adminRefused.inc({ reason: 'two_hosts' }, 0);

/** One request refused by the admin listener (kept by the process that holds it, as the listener's metrics are). */
export function countAdminRefusal(reason: 'host' | 'two_hosts'): void {
  adminRefused.inc({ reason });
}

const workerEnded = new client.Counter({
  name: 'asmx_connections_worker_ended_total',
  help: 'Connections a cluster worker had been handed when it ended (or its channel closed), by outcome: handed_again (not yet taken, so unread: another worker serves them), closed (open in it: they closed with it; or, while stopping, nobody was left to take them)',
  labelNames: ['outcome'] as const,
  registers: [listenerRegistry],
});
for (const outcome of ['handed_again', 'closed'] as const) workerEnded.inc({ outcome }, 0);

const notReceived = new client.Counter({
  name: 'asmx_connections_not_received_total',
  help: 'Connections whose handle did not reach the cluster worker they were handed to (it had no descriptor free), by outcome: handed_again (to the next worker), closed (missed by 3 in a row)',
  labelNames: ['outcome'] as const,
  registers: [listenerRegistry],
});
for (const outcome of ['handed_again', 'closed'] as const) notReceived.inc({ outcome }, 0);

export type HandoverOutcome = 'handed_again' | 'closed';

/** Counts connections a cluster worker had been handed when it ended (the primary's handover.ts). */
export function countWorkerEnded(outcome: HandoverOutcome, connections: number): void {
  if (connections > 0) workerEnded.inc({ outcome }, connections);
}

/** Counts a connection whose handle did not reach its worker (the primary's handover.ts). */
export function countNotReceived(outcome: HandoverOutcome): void {
  notReceived.inc({ outcome });
}

/** The per-address cap of the process that accepts connections, with its count and refusals in the metrics. */
export function connectionCap(limits: ConnectionLimits, shed?: (key: string) => boolean): ConnectionCap {
  const cap = new ConnectionCap(limits, () => refusedConnections.inc({ reason: 'per_address' }), shed);
  capSource = cap;
  return cap;
}

/** The listening socket's metrics, in the text format (the cluster primary's part of a scrape). */
export function listenerMetrics(): Promise<string> {
  return listenerRegistry.metrics();
}

export interface Scrape {
  contentType: string;
  body: string;
}

/**
 * Readiness as a gauge, asmx_ready: set at each scrape from the readiness check (a probe at most once
 * a second, store/health.ts), so that an alert sees what /readyz would answer. In a registry of its
 * own, made per scrape (two scrapes at once share nothing): with workers, /metrics is their
 * registries summed by the primary, while readiness is the primary's one answer for the whole
 * service (every worker asked); summed, two ready workers would read 2.
 */
export async function withReadiness(metrics: Scrape, isReady: boolean): Promise<Scrape> {
  const registry = new client.Registry();
  const ready = new client.Gauge({
    name: 'asmx_ready',
    help: '1 when /readyz answers ready (the store takes writes, the schema is current, not stopping); 0 otherwise',
    registers: [registry],
  });
  ready.set(isReady ? 1 : 0);
  const body = metrics.body === '' || metrics.body.endsWith('\n') ? metrics.body : `${metrics.body}\n`;
  return { contentType: metrics.contentType, body: body + (await registry.metrics()) };
}

/** This process's metrics, in Prometheus's text format. */
export async function scrape(): Promise<Scrape> {
  return { contentType: registry.contentType, body: `${await registry.metrics()}\n${await listenerMetrics()}` };
}

/**
 * Only the metrics named, as prom-client holds them (objects, not text read back): what the console
 * reads every few seconds. Reading the whole registry would run every collector, and the event-loop
 * delay's starts afresh at each read: its max must stay the worst stall between Prometheus's
 * scrapes, not between the console's.
 */
export async function samplesOf(names: readonly string[]): Promise<Sample[]> {
  const metrics = names.flatMap((n) => registry.getSingleMetric(n) ?? []);
  const read = await Promise.all(metrics.map((m) => m.get()));
  return read.flatMap((m) =>
    m.values.map((v) => ({
      name: (v as { metricName?: string }).metricName ?? m.name,
      labels: Object.fromEntries(Object.entries(v.labels).map(([k, l]) => [k, String(l)])),
      value: v.value,
    })),
  );
}

/** In a cluster worker: answer the primary's AggregatorRegistry with this registry. */
export function enableClusterMetrics(): void {
  // Constructing one registers prom-client's worker-side IPC listener.
  new client.AggregatorRegistry();
}
