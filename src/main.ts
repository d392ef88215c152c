import { createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { log } from './log';
import { openStore, StoreOpenError } from './store/open';

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
  const app = await createApp(config, store);
  const server = app.listen(config.port, config.host, () => {
    log.info('listening', { host: config.host, port: config.port, basePath: config.basePath, store: store.location });
  });
  server.on('error', (e) => {
    process.stderr.write(`error: cannot listen on ${config.host}:${config.port}: ${e.message}\n`);
    process.exit(1);
  });

  const stop = () => {
    log.info('stopping');
    server.close(() => {
      void store.close().then(() => process.exit(0));
    });
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
