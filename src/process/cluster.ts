import cluster, { type Worker } from 'node:cluster';
import type http from 'node:http';
import net from 'node:net';
import client from 'prom-client';
import type { Config } from '../config';
import { connectionCap, listenerMetrics } from '../app/metrics';
import type { Sample } from '../basics/sample';
import type { RowCounts, Store } from '../store/store';
import { type Console, createConsole } from '../console';
import { writeForWorkers } from '../shadow/log-relay';
import { STOP_SETTLE_MAX_MS } from '../shadow/mirror';
import { smsReadiness, smsSummary } from '../sms/summary';
import { type Readiness, createAdminServer } from './admin';
import { adminHosts } from './admin-hosts';
import type { ToPrimary, ToWorker } from './cluster-messages';
import { ADMIN_LISTENER, listenOrExit, SERVICE_LISTENER } from './listen';
import { log } from '../basics/log';
import { Handout } from './handover';
import { openStoreOrExit } from './server';
import { Restarts, RESTART_POLICY } from './restarts';
import { isStopping, markStopping } from './shutdown';
import { closeListener, HOLD_MAX_MS } from '../transport/listener-close';
import { onStopSignals } from './signals';
import { startLine } from './start-line';

/** How long a worker may take to answer a readiness question. */
const READY_ASK_MS = 2000;
/**
 * Beyond SHUTDOWN_TIMEOUT_MS (the drain) and SMS_HTTP_TIMEOUT_MS (a send in flight, which may
 * finish after the drain), the time workers get to close their store and exit on their own. Only
 * then does the primary kill them: never in the middle of a send.
 */
const EXIT_MARGIN_MS = 2000;

/**
 * The cluster primary (WORKERS > 1). It migrates the store once, forks the workers (with SQLite they
 * share the database file in WAL mode; they open it without migrating), replaces a worker that dies
 * or fails to start (with backoff, restarts.ts), holds the admin listener (metrics
 * summed over the workers by prom-client's AggregatorRegistry, readiness asked of each worker), and on
 * SIGTERM/SIGINT stops the workers gracefully and exits 0 once all of them have.
 *
 * It also holds the listening socket and hands each accepted connection to a worker in turn, rather
 * than leaving that to the cluster module's shared handle: so that on shutdown the port is closed
 * first (new connections are refused, as by a single process) before any worker drains. With the
 * shared handle the port stays open until the last worker has closed, and connections accepted in
 * that window are reset. Holding the socket, it also caps the connections per client address
 * (transport/connection-cap.ts) before any worker sees one; each worker says when it has taken a
 * connection and when that connection closes. A worker that dies leaves nothing hanging: what it had
 * not taken goes to another worker, what it had taken closed with it (handover.ts).
 */
export async function runPrimary(config: Config): Promise<void> {
  const primary = new Primary(config);
  await primary.open();
  await primary.listen();
  await primary.startAdmin();
  // Forked once both ports are open: a failed start ends with its error line, no worker's after it.
  for (let i = 0; i < config.workers; i += 1) primary.fork();
  // The workers are told once, by message (a signal sent to the process group reaches them too).
  onStopSignals({ stop: (reason) => primary.stopAll(reason), exitNow: () => primary.exitNow(), watchNpm: true });
}

/** The primary's state and its steps, in the order runPrimary takes them. */
class Primary {
  private store!: Store;
  private counts!: RowCounts;
  private listener!: net.Server;
  private port = 0;
  private announced = false;
  private exitCode = 0;
  private readonly handout: Handout;
  /** Workers forked whose process has not yet closed (exited, and its channel read to the end). */
  private readonly alive = new Set<Worker>();
  private readonly restarts = new Restarts();
  /** Replacements waiting for their backoff. */
  private readonly pending = new Set<NodeJS.Timeout>();
  /** The one writer of the differences log: workers send their lines here (shadow/log-relay.ts). */
  private readonly differences: ReturnType<typeof writeForWorkers> | null;
  private admin: http.Server | null = null;
  private cutover: Console | null = null;

  constructor(private readonly config: Config) {
    this.handout = new Handout(connectionCap(config.connections), config.connections.perAddress);
    this.differences =
      config.shadow?.log != null
        ? writeForWorkers(config.shadow.log, { maxBytes: config.shadow.logMaxBytes, keepFree: config.shadow.logKeepFree })
        : null;
  }

  /**
   * Migrations run here, once, before any worker opens the file; the counts are for the start line.
   * The console (with the admin listener) keeps the connection for the outbox's state.
   */
  async open(): Promise<void> {
    this.store = await openStoreOrExit(this.config);
    this.counts = await this.store.counts();
    if (this.config.adminPort === 0) await this.store.close();
  }

  /** The service's port, held here: each accepted connection is handed to a worker (handover.ts). */
  async listen(): Promise<void> {
    this.listener = net.createServer({ pauseOnConnect: true }, (socket) => this.handout.accept(socket));
    this.port = await listenOrExit(this.listener, this.config.port, this.config.host, SERVICE_LISTENER);
  }

  /** The admin listener: the workers' metrics summed, readiness asked of each, the console. */
  async startAdmin(): Promise<void> {
    const { config } = this;
    if (config.adminPort === 0) return;
    const { serving } = this.handout;
    const aggregator = new client.AggregatorRegistry();
    // The workers' metrics summed, and the listening socket's, which only this process keeps.
    const metrics = async () => ({
      contentType: aggregator.contentType,
      body: `${await aggregator.clusterMetrics()}\n${await listenerMetrics()}`,
    });
    const readiness = () => clusterReadiness(serving);
    this.cutover = createConsole({ config, metrics: (names) => workersMetrics(serving, names), readiness, store: this.store });
    this.admin = createAdminServer({ metrics, readiness, note: smsReadiness(config.sms), console: this.cutover }, adminHosts(config));
    await listenOrExit(this.admin, config.adminPort, config.adminHost, ADMIN_LISTENER);
    log.info('admin listener', {
      url: `http://${config.adminHost}:${config.adminPort}/`,
      paths: ['/metrics', '/healthz', '/readyz', '/console'],
    });
  }

  /** A worker, in the handout's turn once it says it serves; replaced (with backoff) when it dies. */
  fork(): void {
    const { config, handout, restarts } = this;
    const worker = cluster.fork();
    this.alive.add(worker);
    let steady: NodeJS.Timeout | undefined;
    /** Whether it started: said it serves (it may have been taken out of the turn since). */
    let served = false;
    worker.on('message', (m: ToPrimary) => {
      handout.heard(worker, m);
      if (m.type === 'shadow-log')
        this.differences?.take(m, (answer) => worker.isConnected() && worker.send(answer satisfies ToWorker, undefined, () => undefined));
      if (m.type !== 'serving') return;
      served = true;
      handout.serve(worker);
      restarts.started();
      steady = setTimeout(() => restarts.steady(), RESTART_POLICY.steadyMs).unref();
      if (!this.announced && handout.serving.length === config.workers) {
        this.announced = true;
        log.info(startLine(config, this.port, this.counts, config.workers), { sms: smsSummary(config.sms) });
      }
    });
    // No connection more for a worker that exited; what it was handed is settled once its channel is
    // read to the end (its process's 'close', always after 'exit'), and the worker replaced then.
    worker.once('exit', () => {
      clearTimeout(steady);
      handout.retire(worker);
    });
    worker.process.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      this.alive.delete(worker);
      handout.ended(worker);
      this.ended(worker, served, code, signal);
    });
  }

  private ended(worker: Worker, served: boolean, code: number | null, signal: NodeJS.Signals | null): void {
    if (isStopping()) {
      if (code !== 0) this.exitCode = 1;
      if (this.alive.size === 0) this.finish();
      return;
    }
    const inMs = this.restarts.exited(served, this.handout.serving.length);
    const fields = { workerPid: worker.process.pid, exitCode: code, signal };
    if (inMs === null) {
      log.error('workers keep failing to start and none is serving; stopping', { ...fields, failedStarts: this.restarts.failures });
      this.exitCode = 1;
      return this.stopAll('workers fail to start');
    }
    if (served) log.warn('worker died; starting another', { ...fields, inMs });
    else log.error('a worker failed to start; starting another', { ...fields, failedStarts: this.restarts.failures, inMs });
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      this.fork();
    }, inMs);
    this.pending.add(timer);
  }

  stopAll(reason: string): void {
    const { config } = this;
    if (isStopping()) return;
    markStopping();
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    // A worker's copies in flight get their short chance to settle after the drain (shadow/mirror.ts).
    const shadowSettleMs = config.shadow === null ? 0 : Math.min(config.shadow.timeoutMs, STOP_SETTLE_MAX_MS);
    const killAfterMs =
      config.drainDelayMs + HOLD_MAX_MS + config.shutdownTimeoutMs + config.sms.http.timeoutMs + shadowSettleMs + EXIT_MARGIN_MS;
    log.info('stopping workers', { reason, timeoutMs: config.shutdownTimeoutMs, drainDelayMs: config.drainDelayMs, killAfterMs });
    setTimeout(() => {
      log.error('workers still running after the shutdown time-out; killing them');
      for (const worker of this.alive) worker.process.kill('SIGKILL');
      this.exitCode = 1;
      this.finish();
    }, killAfterMs).unref();
    void this.closeThenStopWorkers();
  }

  /**
   * Not ready at once (isStopping), the workers go on serving what the listener hands them for the
   * drain delay; then the listener closes without resetting a connection, the connections held
   * meanwhile go to the workers, and only then are the workers told to stop (after those, in order).
   */
  private async closeThenStopWorkers(): Promise<void> {
    if (this.config.drainDelayMs > 0) await new Promise((r) => setTimeout(r, this.config.drainDelayMs));
    this.handout.hold();
    // The sockets closeListener returns are those the handout holds, with their connection-cap tickets.
    await closeListener(this.listener);
    this.handout.release();
    // A worker that is going away is not told (the send fails): it ends all the same.
    for (const worker of this.alive) worker.send({ type: 'shutdown' } satisfies ToWorker, undefined, undefined, () => undefined);
    if (this.alive.size === 0) this.finish();
  }

  private finish(): void {
    this.admin?.close();
    this.cutover?.close();
    // The console's connection, closed without waiting: the process ends now either way.
    if (this.cutover !== null) void this.store.close().catch(() => undefined);
    log.info('stopped', { exitCode: this.exitCode });
    process.exit(this.exitCode);
  }

  /** A second stop signal: the workers killed, and out at once. */
  exitNow(): void {
    for (const worker of this.alive) worker.process.kill('SIGKILL');
    process.exit(1);
  }
}

let nextQuestion = 0;

/** Ready when not stopping, at least one worker serves, and every serving worker says it is ready. */
async function clusterReadiness(workers: readonly Worker[]): Promise<Readiness> {
  if (isStopping()) return { ready: false, reason: 'shutting down' };
  if (workers.length === 0) return { ready: false, reason: 'no worker is serving yet' };
  const answers = await Promise.all(workers.map(ask));
  return answers.find((a) => !a.ready) ?? { ready: true };
}

const ask = (worker: Worker): Promise<Readiness> =>
  question(
    worker,
    { type: 'readyz?', id: ++nextQuestion },
    (m) => (m.type === 'readyz' ? { ready: m.ready, reason: m.reason } : undefined),
    {
      ready: false,
      reason: `worker ${worker.process.pid} did not answer`,
    },
  );

/**
 * The console's metrics: each serving worker's samples of the metrics named, all together (the
 * console sums what it reads by labels, so the workers' counts add up as in /metrics). A worker that
 * does not answer in time adds nothing to this read.
 */
async function workersMetrics(workers: readonly Worker[], names: readonly string[]): Promise<Sample[]> {
  const each = await Promise.all(
    workers.map((w) =>
      question(w, { type: 'metrics?', id: ++nextQuestion, names: [...names] }, (m) => (m.type === 'metrics' ? m.samples : undefined), []),
    ),
  );
  return each.flat();
}

/** Sends `message` to a worker and resolves with what `answer` reads from its reply (same id), or `otherwise` after READY_ASK_MS. */
function question<T>(
  worker: Worker,
  message: ToWorker & { id: number },
  answer: (m: ToPrimary) => T | undefined,
  otherwise: T,
): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: ToPrimary) => {
      const value = 'id' in m && m.id === message.id ? answer(m) : undefined;
      if (value !== undefined) done(value);
    };
    const timer = setTimeout(() => done(otherwise), READY_ASK_MS);
    const done = (value: T) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(value);
    };
    worker.on('message', onMessage);
    // A worker going away cannot answer: `otherwise`, after the wait.
    worker.send(message, undefined, undefined, () => undefined);
  });
}
