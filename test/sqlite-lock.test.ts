import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type http from 'node:http';
import Database from 'better-sqlite3';
import request from 'supertest';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { scrape } from '../src/app/metrics';
import { createSms, type Sms } from '../src/sms';
import { isBusy, whenUnlocked } from '../src/store/busy';
import { fileSource, importFiles } from '../src/store/import';
import { openStore } from '../src/store/open';
import type { Store } from '../src/store/store';
import { envelope, faultOf, NS, opElement, soap11 } from './helpers/soap';
import { FakeGateway, until } from './helpers/sms-gateway';

/**
 * Rule 2 of issue 21: nothing waits synchronously on a locked SQLite file. Another connection (an
 * import's batch, another worker) holds the write lock; the service keeps answering, its event loop
 * keeps turning, and its writes go through once the lock is free, or fail after the limit with the
 * store fault every store failure gets. SQLite only: PostgreSQL's waits were always asynchronous.
 */

let dir: string;
let dbPath: string;
let gateway: FakeGateway;
let store: Store;
let sms: Sms;
let app: http.RequestListener;
let blocker: Database.Database;
let holding: NodeJS.Timeout | undefined;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-lock-'));
  dbPath = path.join(dir, 'service.db');
  gateway = new FakeGateway();
  const config = loadConfig({
    SQLITE_PATH: dbPath,
    SMS_GATEWAY: 'http',
    SMS_HTTP_URL: `${await gateway.listen()}/send`,
    SMS_POLL_MS: '25',
    SMS_DEFAULT_REGION: 'IQ',
  });
  store = await openStore(config);
  const data = (name: string) => fileSource(name, path.join(__dirname, 'fixtures', 'data', name));
  await importFiles({ devices: data('devices.csv') }, { delimiter: ',', replace: false }, () => store.beginImport());
  sms = createSms(config.sms, store);
  sms.start();
  app = await createApp(config, store, { intake: sms.intake });
  blocker = new Database(dbPath, { timeout: 0 });
});

afterEach(async () => {
  clearTimeout(holding);
  if (blocker.inTransaction) blocker.exec('ROLLBACK');
  blocker.close();
  await sms.close();
  await store.close();
  await gateway.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The longest gap between ticks of a 10 ms interval: how long the event loop was blocked at most. */
function loopWatch(): { stop(): number } {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  return {
    stop: () => {
      clearInterval(timer);
      return worst;
    },
  };
}

/** The write lock held by the other connection for `ms`, as an import's batch or another worker would. */
function holdWriteLock(ms: number): Promise<void> {
  blocker.exec('BEGIN IMMEDIATE');
  blocker.prepare("INSERT INTO devices (id_device, token) VALUES ('held', 'by another connection')").run();
  const held = blocker;
  return new Promise((resolve) => {
    holding = setTimeout(() => {
      held.exec('ROLLBACK');
      resolve();
    }, ms);
  });
}

const authCode = (code: string, phone: string) =>
  soap11(app, '/AuthCodeSending.asmx', `"${NS}AuthCode"`, envelope('1.1', opElement('AuthCode', { code, phone })));

async function lockWaits(outcome: 'waited' | 'gave_up'): Promise<number> {
  const line = (await scrape()).body.split('\n').find((l) => l.startsWith(`asmx_store_lock_waits_total{outcome="${outcome}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

test('while another connection holds the write lock, requests are answered, the loop turns, and the writes land after', async () => {
  const waitedBefore = await lockWaits('waited');
  const loop = loopWatch();
  const released = holdWriteLock(2000);
  const started = performance.now();
  const sent = authCode('4821', '+9647701234567').then((r) => ({ r, ms: performance.now() - started }));

  // Reads do not wait for a writer (WAL): the tokens keep coming while the AuthCode waits.
  for (let i = 0; i < 5; i += 1) {
    const t0 = performance.now();
    const res = await request(app).get('/PushNotificationMobile.asmx/GetTokenDevice').query({ id: 'dev-1001' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('<string xmlns="http://tempuri.org/">');
    expect(performance.now() - t0).toBeLessThan(1000);
  }
  expect(blocker.inTransaction).toBe(true);

  const { r, ms } = await sent;
  await released;
  expect(r.status).toBe(200);
  // It did wait for the lock, and was saved once it was free.
  expect(ms).toBeGreaterThan(1500);
  expect(loop.stop()).toBeLessThan(500);
  expect(await lockWaits('waited')).toBeGreaterThan(waitedBefore);
  // The gateway counts a delivery as it answers; the dispatcher records it just after.
  const statuses = async () => (await store.outbox.list(false, 10)).map((row) => row.status);
  await until('the code is recorded delivered', async () => (await statuses()).join() === 'delivered');
  expect(gateway.delivered).toBe(1);
  expect(await statuses()).toEqual(['delivered']);
});

test('a lock held past the limit: the write gives up after about 5 s with the store fault, without blocking the loop', async () => {
  const gaveUpBefore = await lockWaits('gave_up');
  const loop = loopWatch();
  const released = holdWriteLock(6500);
  const started = performance.now();
  const refused = await authCode('4821', '+9647701234567');
  const ms = performance.now() - started;
  expect(refused.status).toBe(500);
  expect(faultOf(refused.body)).toEqual({
    code: 'soap:Server',
    text: 'Server was unable to process request. ---> An internal error occurred while processing the request.',
  });
  expect(ms).toBeGreaterThan(4900);
  expect(ms).toBeLessThan(6400);
  expect(loop.stop()).toBeLessThan(500);
  // This AuthCode, and the dispatcher's claims polling meanwhile.
  expect(await lockWaits('gave_up')).toBeGreaterThan(gaveUpBefore);
  await released;

  // The lock free again, the next request is saved and sent.
  expect((await authCode('5932', '+9647701234568')).status).toBe(200);
  await until('the code is delivered', () => gateway.delivered === 1);
}, 20_000);

test('the dispatcher and the outbox command wait for the lock too, off the event loop', async () => {
  await sms.dispatcher.stop();
  await store.outbox.enqueue('7777', '+9647701234569');
  const loop = loopWatch();
  const released = holdWriteLock(1500);
  const claim = store.outbox.claimDue('test', new Date(), new Date(Date.now() + 60_000), 10, new Date(0));
  const retried = store.outbox.retry(null, new Date(), new Date(0));
  await released;
  expect((await claim).map((m) => m.code)).toEqual(['7777']);
  expect(await retried).toBe(0);
  expect(loop.stop()).toBeLessThan(500);
});

describe('whenUnlocked', () => {
  const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

  test('runs at once when nothing is locked, and passes other errors through untried', async () => {
    let calls = 0;
    const order: string[] = [];
    const done = whenUnlocked(() => {
      calls += 1;
      order.push('ran');
      return 42;
    });
    order.push('returned');
    expect(await done).toBe(42);
    expect(order).toEqual(['ran', 'returned']);
    const constraint = Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
    await expect(
      whenUnlocked(() => {
        calls += 1;
        throw constraint;
      }),
    ).rejects.toBe(constraint);
    expect(calls).toBe(2);
  });

  test('tries a busy statement again until it runs, or throws its SQLITE_BUSY after the limit', async () => {
    let tries = 0;
    expect(
      await whenUnlocked(() => {
        tries += 1;
        if (tries < 4) throw busy();
        return 'done';
      }),
    ).toBe('done');
    expect(tries).toBe(4);

    tries = 0;
    const started = performance.now();
    const err = await whenUnlocked(() => {
      tries += 1;
      throw busy();
    }, 200).catch((e: unknown) => e);
    expect(isBusy(err)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(195);
    // Backing off to 8 ms steps: a few dozen tries in 200 ms, not thousands.
    expect(tries).toBeGreaterThan(10);
    expect(tries).toBeLessThan(60);
  });
});
