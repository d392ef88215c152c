import http from 'node:http';
import { createApp } from '../app';
import type { Config } from '../config';
import { openSqliteStore } from '../store/sqlite';
import type { Store } from '../store/store';
import { type Readiness, createAdminServer, listen } from './admin';
import { log } from './log';
import { scrape, watchStore } from './metrics';
import { type Drainable, drainable, isStopping } from './shutdown';
import { type ToPrimary, type ToWorker } from './cluster-messages';
import { startLine } from './start-line';

/** Opens the configured store, or ends the process with one line naming the setting. */
export function openStoreOrExit(config: Config): Store {
  try {
    return openSqliteStore(config.sqlitePath);
  } catch (e) {
    process.stderr.write(`error: cannot open the store at SQLITE_PATH=${config.sqlitePath}: ${(e as Error).message}\n`);
    process.exit(1);
  }
}

export async function readinessOf(store: Store): Promise<Readiness> {
  if (isStopping()) return { ready: false, reason: 'shutting down' };
  try {
    await store.ping();
    return { ready: true };
  } catch (e) {
    return { ready: false, reason: `store: ${(e as Error).message}` };
  }
}

/**
 * One serving process: alone (WORKERS=1, with its own admin listener) or as a cluster worker (the
 * primary holds the admin listener and asks this process over IPC). Either way SIGTERM or SIGINT
 * stops it gracefully, and a second signal ends it at once.
 */
export async function serve(config: Config, role: 'single' | 'worker'): Promise<void> {
  const store = openStoreOrExit(config);
  watchStore(store);
  const app = await createApp(config, store);
  const server = http.createServer(app);
  const connections = drainable(server);
  const send = (m: ToPrimary) => process.send?.(m);

  try {
    await listen(server, config.port, config.host);
  } catch (e) {
    process.stderr.write(`error: cannot listen on ${config.host}:${config.port} (HOST, PORT): ${(e as Error).message}\n`);
    process.exit(1);
  }

  let admin: http.Server | null = null;
  const stop = once((reason: string) => void shutdown(config, reason, connections, store, admin));
  let signals = 0;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (++signals === 1) return stop(signal);
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    });
  }

  if (role === 'single') {
    log.info(startLine(config, await store.counts(), 1));
    if (config.adminPort !== 0) {
      admin = createAdminServer({ metrics: scrape, readiness: () => readinessOf(store) });
      try {
        await listen(admin, config.adminPort, config.adminHost);
      } catch (e) {
        process.stderr.write(`error: cannot listen on ${config.adminHost}:${config.adminPort} (ADMIN_HOST, ADMIN_PORT): ${(e as Error).message}\n`);
        process.exit(1);
      }
      log.info('admin listener', { url: `http://${config.adminHost}:${config.adminPort}/`, paths: ['/metrics', '/healthz', '/readyz'] });
    }
  } else {
    send({ type: 'listening' });
    process.on('message', (m: ToWorker) => {
      if (m.type === 'shutdown') stop('primary');
      else if (m.type === 'readyz?') void readinessOf(store).then((r) => send({ type: 'readyz', id: m.id, ...r }));
    });
    // The primary gone (killed outright): nobody is left to stop this worker.
    process.on('disconnect', () => stop('primary gone'));
  }
}

async function shutdown(config: Config, reason: string, connections: Drainable, store: Store, admin: http.Server | null): Promise<void> {
  log.info('stopping', { reason, timeoutMs: config.shutdownTimeoutMs });
  let code = 0;
  try {
    await connections.drain(config.shutdownTimeoutMs);
  } catch (e) {
    log.error('stopped before every request finished', { error: e });
    code = 1;
  }
  admin?.close();
  await store.close();
  log.info('stopped', { exitCode: code });
  process.exit(code);
}

function once<A extends unknown[]>(f: (...args: A) => void): (...args: A) => void {
  let called = false;
  return (...args) => {
    if (called) return;
    called = true;
    f(...args);
  };
}
