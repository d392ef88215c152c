import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app';
import { hostRules, unknownMethodAnswer } from '../../src/app/iis';
import { configureLog } from '../../src/basics/log';
import { projectRoot } from '../../src/basics/paths';
import { loadConfig } from '../../src/config';
import { createSms } from '../../src/sms';
import { fileSource, importFiles } from '../../src/store/import';
import { openStore } from '../../src/store/open';
import { createServer } from '../../src/transport/server';

/**
 * Our service in this process, as the legacy comparison asks it: the app behind the service's own
 * listener (transport/server.ts: http.sys's limits and refusals), over a throw-away SQLite store
 * loaded with the data set the legacy host serves (test/fixtures/data/), with a site
 * configuration's XML_NAMESPACE, PROTOCOLS and BASE_PATH. AuthCode is queued, never sent.
 */
export async function startOurs(env: Record<string, string>): Promise<{ base: string; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'differential-'));
  const config = loadConfig({ ...env, SQLITE_PATH: path.join(dir, 'service.db'), HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' });
  configureLog(config);
  const store = await openStore(config);
  const data = path.join(projectRoot, 'test', 'fixtures', 'data');
  const fixture = (name: string) => fileSource(name, path.join(data, name));
  await importFiles({ students: fixture('students.csv'), devices: fixture('devices.csv') }, { delimiter: ',', replace: false }, () =>
    store.beginImport(),
  );
  const sms = createSms(config.sms, store);
  // with the answers to methods node's parser refuses (DEBUG, FOO) as src/process/server.ts gives them
  const server = createServer(
    config.limits,
    await createApp(config, store, { intake: sms.intake }),
    unknownMethodAnswer(hostRules(config.basePath, config.limits)),
  );
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}${config.basePath}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sms.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
