import { loadConfig } from '../../src/config';
import { configureLog } from '../../src/basics/log';
import { createSms } from '../../src/sms';
import { openStore } from '../../src/store/open';

/**
 * One service process for test/sms-processes.test.ts: the configured store and the SMS dispatcher,
 * as main.ts runs them, until SIGTERM (a graceful stop) or SIGKILL. Says `ready` once started.
 */
async function run(): Promise<void> {
  const config = loadConfig(process.env);
  configureLog(config);
  const store = await openStore(config);
  const sms = createSms(config.sms, store);
  sms.start();
  // A real service is kept alive by its listener; the dispatcher's own timers do not hold a process.
  const alive = setInterval(() => undefined, 1 << 30);
  process.on('SIGTERM', () => {
    clearInterval(alive);
    void sms
      .close()
      .then(() => store.close())
      .then(() => process.exit(0));
  });
  process.stdout.write('ready\n');
}

void run();
