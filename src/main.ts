import { createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { log } from './log';
import { createSms } from './sms';
import { openStore, StoreOpenError } from './store/open';
import { createServer } from './transport/server';

/**
 * The last line: an exception nothing caught leaves the process in a state nobody reasoned about.
 * It is logged and the process exits, for its supervisor (the cluster primary, systemd) to replace
 * it. Every write is a transaction of its own, so nothing is left half-written.
 */
function exitOnUncaught(kind: string, error: unknown): void {
  log.error(kind, { error });
  process.exit(1);
}
process.on('uncaughtException', (e) => exitOnUncaught('uncaught exception', e));
process.on('unhandledRejection', (e) => exitOnUncaught('unhandled rejection', e));

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }

  let store;
  try {
    store = await openStore(config);
  } catch (e) {
    if (e instanceof StoreOpenError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const sms = createSms(config.sms, store);
  sms.dispatcher.start();
  const app = await createApp(config, store, sms.intake);
  const server = createServer(config.limits, app);
  server.listen(config.port, config.host, () => {
    log.info('listening', { host: config.host, port: config.port, basePath: config.basePath, store: store.location });
  });
  server.on('error', (e) => {
    process.stderr.write(`error: cannot listen on ${config.host}:${config.port}: ${e.message}\n`);
    process.exit(1);
  });

  const stop = () => {
    log.info('stopping');
    // The dispatcher stops claiming and finishes its sends before the store closes.
    server.close(() => {
      void sms.close().then(() => store.close()).then(() => process.exit(0));
    });
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
