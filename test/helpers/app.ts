import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app';
import { type Config, loadConfig } from '../../src/config';
import { createShadow } from '../../src/shadow';
import { createSms, type Sms } from '../../src/sms';
import { fileSource, importFiles } from '../../src/store/import';
import { openStore } from '../../src/store/open';
import type { Store } from '../../src/store/store';
import { TEST_STORE, testDatabase } from './postgres';
import { withTestSettings } from './settings';

export const FIXTURES = path.join(__dirname, '..', 'fixtures');

export interface TestApp {
  app: http.RequestListener;
  /** What serves the port: the app, or with SHADOW_MODE=legacy-first the front (src/shadow). */
  listener: http.RequestListener;
  store: Store;
  config: Config;
  /** The SMS side, not started: AuthCode requests are queued and never sent. */
  sms: Sms;
  close(): Promise<void>;
}

/**
 * The app over a throw-away store loaded with the data set the exchanges were recorded on: a SQLite
 * file, or a PostgreSQL schema of its own when jest runs the suite in its postgres project
 * (jest.config.js), so every behaviour suite runs against both stores. `data` is another data set's
 * directory (students.csv, devices.csv).
 */
export async function createTestApp(env: Record<string, string> = {}, data = path.join(FIXTURES, 'data')): Promise<TestApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-'));
  const db = TEST_STORE === 'postgres' ? await testDatabase() : null;
  const config = loadConfig(
    withTestSettings({ SQLITE_PATH: path.join(dir, 'test.db'), ...(db === null ? {} : { DATABASE_URL: db.url }), ...env }),
  );
  const store = await openStore(config);
  const fixture = (name: string) => fileSource(name, path.join(data, name));
  await importFiles({ students: fixture('students.csv'), devices: fixture('devices.csv') }, { delimiter: ',', replace: false }, () =>
    store.beginImport(),
  );
  const shadow = createShadow(config);
  const sms = createSms(config.sms, store);
  const app = await createApp(config, store, { intake: sms.intake, tap: shadow?.tap });
  return {
    app,
    listener: shadow === null ? app : await shadow.listener(app),
    store,
    config,
    sms,
    close: async () => {
      await shadow?.close();
      await sms.close();
      await store.close();
      await db?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The test app listening on a free port, for the duration of the enclosing jest block. */
export function listening(env: Record<string, string> = {}): { base: string } {
  const handle = { base: '' };
  let t: TestApp;
  let server: http.Server;
  beforeAll(async () => {
    t = await createTestApp(env);
    server = http.createServer(t.app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    handle.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.close();
  });
  return handle;
}
