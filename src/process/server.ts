import type http from 'node:http';
import { createApp } from '../app';
import { hostRules, unknownMethodAnswer } from '../app/iis';
import type { Config } from '../config';
import { type Console, createConsole } from '../console';
import { createShadow, type Shadow } from '../shadow';
import { relayToPrimary } from '../shadow/log-relay';
import type { OpenOptions } from '../store/migrations';
import { openStore, StoreOpenError } from '../store/open';
import type { Store } from '../store/store';
import { createSms, type Sms, smsReadiness, smsSummary } from '../sms';
import { capConnections } from '../transport/connection-cap';
import { idleConnections } from '../transport/idle';
import { createServer } from '../transport/server';
import { type Readiness, createAdminServer } from './admin';
import { adminHosts } from './admin-hosts';
import { ADMIN_LISTENER, exitStart, listenOrExit, SERVICE_LISTENER } from './listen';
import { log } from '../basics/log';
import { connectionCap, samplesOf, scrape, watchStore } from '../app/metrics';
import { type Drainable, drainable, isStopping } from './shutdown';
import type { ToPrimary, ToWorker } from './cluster-messages';
import { socketOf } from './handover';
import { onStopSignals } from './signals';
import { startLine } from './start-line';

/** Opens the configured store, or ends the process with one line naming the setting. */
export async function openStoreOrExit(config: Config, options: OpenOptions = {}): Promise<Store> {
  try {
    return await openStore(config, options);
  } catch (e) {
    if (!(e instanceof StoreOpenError)) throw e;
    return exitStart(e.message);
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
 * One serving process: alone (WORKERS=1, listening, with its own admin listener) or as a cluster
 * worker (the primary listens and holds the admin listener, and hands over connections and questions).
 * Either way SIGTERM, SIGINT or SIGHUP stops it gracefully, and a second signal ends it at once.
 */
export async function serve(config: Config, role: 'single' | 'worker'): Promise<void> {
  // A worker's primary migrated before forking it: workers only check the schema, and never wait for its lock.
  const store = await openStoreOrExit(config, { migrate: role !== 'worker' });
  watchStore(store);
  const sms = createSms(config.sms, store);
  sms.start();
  // A worker's differences log goes to its primary, the one process writing the file (shadow/log-relay.ts).
  const relay =
    role === 'worker' && config.shadow?.log != null
      ? relayToPrimary((m) => process.connected && (process.send!(m, undefined, undefined, () => undefined), true))
      : undefined;
  // Each batch of comparisons settled is added to the verdict's totals in the store as it comes: exact across restarts.
  const shadow = createShadow(config, (batch) => store.addShadowTotals(batch), relay);
  const app = await createApp(config, store, { intake: sms.intake, tap: shadow?.tap });
  const server = createServer(
    config.limits,
    shadow === null ? app : await shadow.listener(app),
    unknownMethodAnswer(hostRules(config.basePath, config.limits)),
  );
  const connections = drainable(server);

  let admin: http.Server | null = null;
  let cutover: Console | null = null;
  const stop = once((reason: string) => {
    cutover?.close();
    void shutdown(config, reason, connections, sms, store, admin, shadow);
  });
  onStopSignals({ stop, exitNow: () => process.exit(1), watchNpm: role === 'single' });

  if (role === 'worker') {
    // The primary listens and hands each connection over (see cluster.ts for why).
    // Once the primary is gone a send fails; that failure is not this worker's to crash on.
    const send = (m: ToPrimary) => void (process.connected && process.send?.(m, undefined, undefined, () => undefined));
    const take = (connection: number, handle: unknown) => {
      // The primary counts the connection against its address until told it closed.
      if (handle == null) return send({ type: 'closed', connection });
      // Wrapped (and so read) only once `taken` is written: a connection this worker had not taken
      // when it died was never read, and the primary hands it to another worker (handover.ts).
      // Should the primary be gone, the connection is served all the same while this worker stops.
      const serveIt = () => {
        const socket = socketOf(handle);
        socket.once('close', () => send({ type: 'closed', connection }));
        server.emit('connection', socket);
        socket.resume();
      };
      if (!process.connected) return serveIt();
      process.send?.({ type: 'taken', connection } satisfies ToPrimary, undefined, undefined, serveIt);
    };
    // A connection whose handle did not reach this worker (no descriptor free: the kernel drops it)
    // never comes as a message; Node tells only the primary's Node, which sends a native handle once.
    (process as NodeJS.EventEmitter).on('internalMessage', (m: { cmd?: string; msg?: ToWorker }, handle?: unknown) => {
      if (m.cmd === 'NODE_HANDLE' && handle == null && m.msg?.type === 'connection') send({ type: 'missed', connection: m.msg.connection });
    });
    process.on('message', (m: ToWorker, handle?: unknown) => {
      if (m.type === 'connection') take(m.connection, handle);
      else if (m.type === 'shutdown') stop('primary');
      else if (m.type === 'readyz?') void readinessOf(store).then((r) => send({ type: 'readyz', id: m.id, ...r }));
      else if (m.type === 'metrics?') void samplesOf(m.names).then((samples) => send({ type: 'metrics', id: m.id, samples }));
      else if (m.type === 'shadow-logged') relay?.written(m);
      // The primary's cap reached by an address: one of its idle connections here gives way.
      else if (m.type === 'shed?') send({ type: 'shed', id: m.id, closed: idleConnections.evict(m.key) });
    });
    // The primary gone (killed outright): nobody is left to stop this worker.
    process.on('disconnect', () => {
      relay?.gone();
      stop('primary gone');
    });
    send({ type: 'serving' });
    return;
  }

  // At its cap an address's oldest idle keep-alive gives way (transport/idle.ts).
  capConnections(
    server,
    connectionCap(config.connections, (key) => idleConnections.evict(key)),
  );
  const port = await listenOrExit(server, config.port, config.host, SERVICE_LISTENER);
  // Both listeners open before the start line: a start that fails on the admin port never said "listening".
  if (config.adminPort !== 0) {
    const readiness = () => readinessOf(store);
    cutover = createConsole({ config, metrics: samplesOf, readiness, store });
    admin = createAdminServer({ metrics: scrape, readiness, note: smsReadiness(config.sms), console: cutover }, adminHosts(config));
    await listenOrExit(admin, config.adminPort, config.adminHost, ADMIN_LISTENER);
  }
  // The SMS summary as a field of its own: a dashboard filters on it without parsing the message.
  log.info(startLine(config, port, await store.counts(), 1), { sms: smsSummary(config.sms) });
  if (admin !== null)
    log.info('admin listener', {
      url: `http://${config.adminHost}:${config.adminPort}/`,
      paths: ['/metrics', '/healthz', '/readyz', '/console'],
    });
}

async function shutdown(
  config: Config,
  reason: string,
  connections: Drainable,
  sms: Sms,
  store: Store,
  admin: http.Server | null,
  shadow: Shadow | null,
): Promise<void> {
  log.info('stopping', { reason, timeoutMs: config.shutdownTimeoutMs, drainDelayMs: config.drainDelayMs });
  // The dispatcher stops claiming at once, beside the drain: the sends in flight finish and are
  // recorded, claimed rows not yet sent are released for another instance; new ones wait for it.
  const smsStopped = sms.dispatcher.stop();
  let code = 0;
  try {
    await connections.drain(config.shutdownTimeoutMs, config.drainDelayMs);
  } catch (e) {
    log.error('stopped before every request finished', { error: e });
    code = 1;
  }
  admin?.close();
  await smsStopped;
  await sms.close();
  // Copies still waiting or in flight are given up: they never hold a stop.
  await shadow?.close();
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
