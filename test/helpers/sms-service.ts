import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type http from 'node:http';
import Database from 'better-sqlite3';
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
      if (start) sms.start();
      return { app: await createApp(config, store, { intake: sms.intake }), store, sms, config };
    },
  };
}

/**
 * A provider's answer never taken for lost: for a test that counts sends and is not about time-outs.
 * The 300 ms time-out of the others lets a loaded machine (load 20 on 2 cores) lose a slow answer,
 * and its resend (the one second text the design allows, counted in asmx_sms_resent_total) counted
 * as a second send: 63 sends for 60, or a code sent twice.
 */
export const PATIENT_PROVIDER = { SMS_HTTP_TIMEOUT_MS: '10000', SMS_LEASE_MS: '20000' };

export const authCode = (app: http.RequestListener, code: string, phone: string, headers: Record<string, string> = {}) =>
  request(app).post('/AuthCodeSending.asmx/AuthCode').set(headers).type('form').send({ code, phone });

export const rows = (s: Service | Store): Promise<OutboxRecord[]> => ('outbox' in s ? s : s.store).outbox.list(false, 1000);
export const byStatus = async (s: Service | Store, status: OutboxRecord['status']) =>
  (await rows(s)).filter((r) => r.status === status).length;
export const phone = (i: number) => `+96477012${String(i).padStart(5, '0')}`;

type Cell = string | number | null;

/**
 * Runs SQL on a test's outbox with a connection of its own, outside the store under test: `?`
 * parameters on both stores. For rows the service cannot make itself (queued long ago).
 */
export async function rawSql(world: SmsWorld, s: Service, sql: string, params: Cell[] = []): Promise<void> {
  if (world.db !== null) {
    let n = 0;
    await world.db.query(
      sql.replace(/\?/g, () => `$${(n += 1)}`),
      params,
    );
    return;
  }
  const db = new Database(s.config.sqlitePath);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

const ago = (seconds: number): string => new Date(Date.now() - seconds * 1000).toISOString();

/** Makes a queued row look `seconds` old (created, and due, then). */
export const backdate = (world: SmsWorld, s: Service, id: number, seconds: number): Promise<void> =>
  rawSql(world, s, 'UPDATE auth_code_outbox SET created_at = ?, next_attempt_at = ? WHERE id = ?', [ago(seconds), ago(seconds), id]);

/** An outbox row as it would be after its story: queued `createdAgo` seconds ago, ended `endedAgo` ago. */
export const insertRow = (
  world: SmsWorld,
  s: Service,
  status: 'pending' | 'delivered' | 'failed' | 'expired',
  createdAgo: number,
  endedAgo = createdAgo,
) =>
  rawSql(
    world,
    s,
    `INSERT INTO auth_code_outbox (code, phone, created_at, next_attempt_at, status, delivered_at, failed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [
      status === 'delivered' || status === 'expired' ? null : '4242',
      '+9647701234567',
      ago(createdAgo),
      ago(createdAgo),
      status,
      status === 'delivered' ? ago(endedAgo) : null,
      status === 'failed' || status === 'expired' ? ago(endedAgo) : null,
    ],
  );
