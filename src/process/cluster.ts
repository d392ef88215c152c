import cluster, { type Worker } from 'node:cluster';
import type http from 'node:http';
import net from 'node:net';
import client from 'prom-client';
import type { Config } from '../config';
import { connectionCap, listenerMetrics, type MetricSample } from '../app/metrics';
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
  // Migrations run here, once, before any worker opens the file; the counts are for the start line.
  // The console (with the admin listener) keeps the connection for the outbox's state.
  const store = await openStoreOrExit(config);
  const counts = await store.counts();
  if (config.adminPort === 0) await store.close();

  let announced = false;
  let exitCode = 0;
  const handout = new Handout(connectionCap(config.connections), config.connections.perAddress);
  const { serving } = handout;
  /** Workers forked whose process has not yet closed (exited, and its channel read to the end). */
  const alive = new Set<Worker>();

  const listener = net.createServer({ pauseOnConnect: true }, (socket) => handout.accept(socket));
  const port = await listenOrExit(listener, config.port, config.host, SERVICE_LISTENER);

  // The one writer of the differences log: workers send their lines here (shadow/log-relay.ts).
  const differences =
    config.shadow?.log != null
      ? writeForWorkers(config.shadow.log, { maxBytes: config.shadow.logMaxBytes, keepFree: config.shadow.logKeepFree })
      : null;

  const restarts = new Restarts();
  /** Replacements waiting for their backoff. */
  const pending = new Set<NodeJS.Timeout>();
  const fork = () => {
    const worker = cluster.fork();
    alive.add(worker);
    let steady: NodeJS.Timeout | undefined;
    /** Whether it started: said it serves (it may have been taken out of the turn since). */
    let served = false;
    worker.on('message', (m: ToPrimary) => {
      handout.heard(worker, m);
      if (m.type === 'shadow-log')
        differences?.take(m, (answer) => worker.isConnected() && worker.send(answer satisfies ToWorker, undefined, () => undefined));
      if (m.type !== 'serving') return;
      served = true;
      handout.serve(worker);
      restarts.started();
      steady = setTimeout(() => restarts.steady(), RESTART_POLICY.steadyMs).unref();
      if (!announced && serving.length === config.workers) {
        announced = true;
        log.info(startLine(config, port, counts, config.workers), { sms: smsSummary(config.sms) });
      }
    });
    // No connection more for a worker that exited; what it was handed is settled once its channel is
    // read to the end (its process's 'close', always after 'exit'), and the worker replaced then.
    worker.once('exit', () => {
      clearTimeout(steady);
      handout.retire(worker);
    });
    worker.process.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      alive.delete(worker);
      handout.ended(worker);
      ended(worker, served, code, signal);
    });
  };

  function ended(worker: Worker, served: boolean, code: number | null, signal: NodeJS.Signals | null): void {
    if (isStopping()) {
      if (code !== 0) exitCode = 1;
      if (alive.size === 0) finish();
      return;
    }
    const inMs = restarts.exited(served, serving.length);
    const fields = { workerPid: worker.process.pid, exitCode: code, signal };
    if (inMs === null) {
      log.error('workers keep failing to start and none is serving; stopping', { ...fields, failedStarts: restarts.failures });
      exitCode = 1;
      return stopAll('workers fail to start');
    }
    if (served) log.warn('worker died; starting another', { ...fields, inMs });
    else log.error('a worker failed to start; starting another', { ...fields, failedStarts: restarts.failures, inMs });
    const timer = setTimeout(() => {
      pending.delete(timer);
      fork();
    }, inMs);
    pending.add(timer);
  }

  let admin: http.Server | null = null;
  let cutover: Console | null = null;
  if (config.adminPort !== 0) {
    const aggregator = new client.AggregatorRegistry();
    // The workers' metrics summed, and the listening socket's, which only this process keeps.
    const metrics = async () => ({
      contentType: aggregator.contentType,
      body: `${await aggregator.clusterMetrics()}\n${await listenerMetrics()}`,
    });
    const readiness = () => clusterReadiness(serving);
    cutover = createConsole({ config, metrics: (names) => workersMetrics(serving, names), readiness, store });
    admin = createAdminServer({ metrics, readiness, note: smsReadiness(config.sms), console: cutover }, adminHosts(config));
    await listenOrExit(admin, config.adminPort, config.adminHost, ADMIN_LISTENER);
    log.info('admin listener', {
      url: `http://${config.adminHost}:${config.adminPort}/`,
      paths: ['/metrics', '/healthz', '/readyz', '/console'],
    });
  }
  // Forked once both ports are open: a failed start ends with its error line, no worker's after it.
  for (let i = 0; i < config.workers; i += 1) fork();

  function stopAll(reason: string): void {
    if (isStopping()) return;
    markStopping();
    for (const timer of pending) clearTimeout(timer);
    pending.clear();
    // A worker's copies in flight get their short chance to settle after the drain (shadow/mirror.ts).
    const shadowSettleMs = config.shadow === null ? 0 : Math.min(config.shadow.timeoutMs, STOP_SETTLE_MAX_MS);
    const killAfterMs =
      config.drainDelayMs + HOLD_MAX_MS + config.shutdownTimeoutMs + config.sms.http.timeoutMs + shadowSettleMs + EXIT_MARGIN_MS;
    log.info('stopping workers', { reason, timeoutMs: config.shutdownTimeoutMs, drainDelayMs: config.drainDelayMs, killAfterMs });
    setTimeout(() => {
      log.error('workers still running after the shutdown time-out; killing them');
      for (const worker of alive) worker.process.kill('SIGKILL');
      exitCode = 1;
      finish();
    }, killAfterMs).unref();
    void closeThenStopWorkers();
  }

  /**
   * Not ready at once (isStopping), the workers go on serving what the listener hands them for the
   * drain delay; then the listener closes without resetting a connection, the connections held
   * meanwhile go to the workers, and only then are the workers told to stop (after those, in order).
   */
  async function closeThenStopWorkers(): Promise<void> {
    if (config.drainDelayMs > 0) await new Promise((r) => setTimeout(r, config.drainDelayMs));
    handout.hold();
    // The sockets closeListener returns are those the handout holds, with their connection-cap tickets.
    await closeListener(listener);
    handout.release();
    // A worker that is going away is not told (the send fails): it ends all the same.
    for (const worker of alive) worker.send({ type: 'shutdown' } satisfies ToWorker, undefined, undefined, () => undefined);
    if (alive.size === 0) finish();
  }

  function finish(): void {
    admin?.close();
    cutover?.close();
    // The console's connection, closed without waiting: the process ends now either way.
    if (cutover !== null) void store.close().catch(() => undefined);
    log.info('stopped', { exitCode });
    process.exit(exitCode);
  }

  // The workers are told once, by message (a signal sent to the process group reaches them too).
  onStopSignals({
    stop: stopAll,
    exitNow: () => {
      for (const worker of alive) worker.process.kill('SIGKILL');
      process.exit(1);
    },
    watchNpm: true,
  });
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
async function workersMetrics(workers: readonly Worker[], names: readonly string[]): Promise<MetricSample[]> {
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
