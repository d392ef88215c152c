import fs from 'fs';
import os from 'os';
import path from 'path';
import type http from 'node:http';
import request from 'supertest';
import { createApp } from '../../src/app';
import { type Config, loadConfig } from '../../src/config';
import { createSms, type Sms } from '../../src/sms';
import { openStore } from '../../src/store/open';
import type { OutboxRecord, Store } from '../../src/store/store';
import { TEST_STORE, testDatabase, type TestDatabase } from './postgres';
import { FakeGateway } from './sms-gateway';

/**
 * In-process SMS services for the SMS suites: the service's app, its intake and dispatcher over the
 * configured store (SQLite, or PostgreSQL in jest's postgres project), against a fake provider.
 * Call `smsServices()` at the top of a test file: it sets up and tears down per test.
 */
export interface Service {
  app: http.RequestListener;
  store: Store;
  sms: Sms;
  config: Config;
}

export interface SmsWorld {
  readonly gateway: FakeGateway;
  readonly gatewayUrl: string;
  readonly dir: string;
  readonly db: TestDatabase | null;
  /** One service process: its own store connection, intake and dispatcher (started unless told not to). */
  service(env?: Record<string, string>, start?: boolean): Promise<Service>;
}

export function smsServices(): SmsWorld {
  const opened: { sms: Sms; store: Store }[] = [];
  const world = {} as { gateway: FakeGateway; gatewayUrl: string; dir: string; db: TestDatabase | null };
  beforeEach(async () => {
    world.gateway = new FakeGateway();
    world.gatewayUrl = await world.gateway.listen();
    world.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sms-'));
    world.db = TEST_STORE === 'postgres' ? await testDatabase('t7') : null;
  });
  afterEach(async () => {
    for (const { sms, store } of opened.splice(0)) {
      await sms.close();
      await store.close();
    }
    await world.gateway.close();
    await world.db?.drop();
    fs.rmSync(world.dir, { recursive: true, force: true });
  });
  return {
    get gateway() {
      return world.gateway;
    },
    get gatewayUrl() {
      return world.gatewayUrl;
    },
    get dir() {
      return world.dir;
    },
    get db() {
      return world.db;
    },
    async service(env = {}, start = true) {
      const config = loadConfig({
        SQLITE_PATH: path.join(world.dir, 'sms.db'),
        ...(world.db === null ? {} : { DATABASE_URL: world.db.url }),
        SMS_GATEWAY: 'http',
        SMS_HTTP_URL: `${world.gatewayUrl}/send`,
        SMS_HTTP_TIMEOUT_MS: '300',
        SMS_LEASE_MS: '2000',
        SMS_RETRY_BASE_MS: '20',
        SMS_POLL_MS: '25',
        SMS_DEFAULT_REGION: 'IQ',
        SMS_TEMPLATE: 'رمز التحقق: {code}',
        ...env,
      });
      const store = await openStore(config);
      const sms = createSms(config.sms, store);
      opened.push({ sms, store });
      if (start) sms.dispatcher.start();
      return { app: await createApp(config, store, { intake: sms.intake }), store, sms, config };
    },
  };
}

export const authCode = (app: http.RequestListener, code: string, phone: string, headers: Record<string, string> = {}) =>
  request(app).post('/AuthCodeSending.asmx/AuthCode').set(headers).type('form').send({ code, phone });

export const rows = (s: Service | Store): Promise<OutboxRecord[]> => ('outbox' in s ? s : s.store).outbox.list(false, 1000);
export const byStatus = async (s: Service | Store, status: OutboxRecord['status']) => (await rows(s)).filter((r) => r.status === status).length;
export const phone = (i: number) => `+96477012${String(i).padStart(5, '0')}`;
