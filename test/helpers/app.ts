import fs from 'fs';
import os from 'os';
import path from 'path';
import type express from 'express';
import { createApp } from '../../src/app';
import { type Config, loadConfig } from '../../src/config';
import { parseImport } from '../../src/store/import';
import { openSqliteStore } from '../../src/store/sqlite';
import type { Store } from '../../src/store/store';

export const FIXTURES = path.join(__dirname, '..', 'fixtures');

export interface TestApp {
  app: express.Express;
  store: Store;
  config: Config;
  close(): Promise<void>;
}

/** The app over a throw-away SQLite store loaded with the data set the exchanges were recorded on. */
export async function createTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-'));
  const config = loadConfig({ SQLITE_PATH: path.join(dir, 'test.db'), ...env });
  const store = openSqliteStore(config.sqlitePath);
  const read = (name: string) => ({ name, text: fs.readFileSync(path.join(FIXTURES, 'data', name), 'utf8') });
  const data = parseImport(read('students.csv'), read('devices.csv'));
  await store.upsert(data.students, data.devices);
  const app = await createApp(config, store);
  return {
    app,
    store,
    config,
    close: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
