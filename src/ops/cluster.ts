import cluster, { type Worker } from 'node:cluster';
import type http from 'node:http';
import client from 'prom-client';
import type { Config } from '../config';
import { type Readiness, createAdminServer, listen } from './admin';
import type { ToPrimary, ToWorker } from './cluster-messages';
import { log } from './log';
import { openStoreOrExit } from './server';
import { markStopping, isStopping } from './shutdown';
import { startLine } from './start-line';

/** How long a worker may take to answer a readiness question. */
const READY_ASK_MS = 2000;
/** Beyond SHUTDOWN_TIMEOUT_MS, the time workers get to close their store and exit on their own. */
const EXIT_MARGIN_MS = 2000;

/**
 * The cluster primary (WORKERS > 1): it serves nothing itself. It migrates the store once, forks the
 * workers (which share the port through node's cluster module and, with SQLite, the database file in
 * WAL mode), replaces a worker that dies, holds the admin listener (metrics summed over the workers by
 * prom-client's AggregatorRegistry, readiness asked of each worker), and on SIGTERM/SIGINT stops the
 * workers gracefully and exits 0 once all of them have.
 */
export async function runPrimary(config: Config): Promise<void> {
  // Migrations run here, once, before any worker opens the file; the counts are for the start line.
  const store = openStoreOrExit(config);
  const counts = await store.counts();
  await store.close();

  const listened = new Set<Worker>();
  let announced = false;
  let failedExit = false;

  const fork = () => {
    const worker = cluster.fork();
    worker.on('message', (m: ToPrimary) => {
      if (m.type !== 'listening') return;
      listened.add(worker);
      if (!announced && listened.size === config.workers) {
        announced = true;
        log.info(startLine(config, counts, config.workers));
      }
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    const hadListened = listened.delete(worker);
    if (isStopping()) {
      if (code !== 0) failedExit = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) finish(failedExit ? 1 : 0);
      return;
    }
    if (!hadListened) {
      // It never served: a setting or the store is wrong, and a new one would fail the same way.
      log.error('a worker failed to start; stopping', { workerPid: worker.process.pid, exitCode: code, signal });
      stopAll('worker failed to start');
      failedExit = true;
      return;
    }
    log.warn('worker died; starting another', { workerPid: worker.process.pid, exitCode: code, signal });
    fork();
  });

  for (let i = 0; i < config.workers; i += 1) fork();

  let admin: http.Server | null = null;
  if (config.adminPort !== 0) {
    const aggregator = new client.AggregatorRegistry();
    admin = createAdminServer({
      metrics: async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }),
      readiness: () => clusterReadiness(listened),
    });
    try {
      await listen(admin, config.adminPort, config.adminHost);
    } catch (e) {
      process.stderr.write(`error: cannot listen on ${config.adminHost}:${config.adminPort} (ADMIN_HOST, ADMIN_PORT): ${(e as Error).message}\n`);
      stopAll('admin listener failed');
      failedExit = true;
      return;
    }
    log.info('admin listener', { url: `http://${config.adminHost}:${config.adminPort}/`, paths: ['/metrics', '/healthz', '/readyz'] });
  }

  function stopAll(reason: string): void {
    if (isStopping()) return;
    markStopping();
    log.info('stopping workers', { reason, timeoutMs: config.shutdownTimeoutMs });
    for (const worker of Object.values(cluster.workers ?? {})) worker?.send({ type: 'shutdown' } satisfies ToWorker);
    setTimeout(() => {
      log.error('workers still running after the shutdown time-out; killing them');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      finish(1);
    }, config.shutdownTimeoutMs + EXIT_MARGIN_MS).unref();
    if (Object.keys(cluster.workers ?? {}).length === 0) finish(failedExit ? 1 : 0);
  }

  function finish(code: number): void {
    admin?.close();
    log.info('stopped', { exitCode: code });
    process.exit(code);
  }

  let signals = 0;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (++signals === 1) return stopAll(signal);
      log.warn('second signal: exiting now', { signal });
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    });
  }
}

let nextQuestion = 0;

/** Ready when not stopping, at least one worker serves, and every serving worker says it is ready. */
async function clusterReadiness(workers: ReadonlySet<Worker>): Promise<Readiness> {
  if (isStopping()) return { ready: false, reason: 'shutting down' };
  if (workers.size === 0) return { ready: false, reason: 'no worker is serving yet' };
  const answers = await Promise.all([...workers].map(ask));
  const notReady = answers.find((a) => !a.ready);
  return notReady ?? { ready: true };
}

function ask(worker: Worker): Promise<Readiness> {
  const id = ++nextQuestion;
  return new Promise((resolve) => {
    const onMessage = (m: ToPrimary) => {
      if (m.type !== 'readyz' || m.id !== id) return;
      done({ ready: m.ready, reason: m.reason });
    };
    const timer = setTimeout(() => done({ ready: false, reason: `worker ${worker.process.pid} did not answer` }), READY_ASK_MS);
    const done = (r: Readiness) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(r);
    };
    worker.on('message', onMessage);
    worker.send({ type: 'readyz?', id } satisfies ToWorker);
  });
}
