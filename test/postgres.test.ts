/**
 * PostgreSQL beyond the shared behaviour suites: instances migrating at the same moment, a schema
 * newer than the code, and a database that goes away, stalls or drops connections under traffic.
 * Runs only in jest's postgres project (jest.config.js), which is skipped when PostgreSQL is absent.
 */
import net from 'node:net';
import type http from 'node:http';
import request from 'supertest';
import { createApp } from '../src/app';
import { type Config, loadConfig } from '../src/config';
import { createSms } from '../src/sms';
import { fileSource, importFiles } from '../src/store/import';
import { PG_MIGRATIONS } from '../src/store/migrations';
import { openStore, StoreOpenError } from '../src/store/open';
import type { Store } from '../src/store/store';
import { FIXTURES } from './helpers/app';
import { testDatabase, type TestDatabase } from './helpers/postgres';
import { envelope, opElement, post } from './helpers/soap';
import { pendingCount, queued } from './helpers/outbox';

let db: TestDatabase;
const stores: Store[] = [];

beforeEach(async () => {
  db = await testDatabase();
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await db.drop();
});

async function open(url = db.url, timeoutMs = 5000): Promise<Store> {
  const store = await openStore({ sqlitePath: 'unused.db', databaseUrl: url, databasePoolSize: 4, databaseStatementTimeoutMs: timeoutMs });
  stores.push(store);
  return store;
}

test('two instances starting at the same moment on an empty database both come up, migrating once', async () => {
  const [a, b] = await Promise.all([open(), open()]);
  expect(await db.query('SELECT version FROM schema_version ORDER BY version')).toEqual(PG_MIGRATIONS.map((_, i) => ({ version: i + 1 })));

  // A row imported through one is answered by the other at once.
  await importFiles({ devices: fileSource('devices.csv', `${FIXTURES}/data/devices.csv`) }, { delimiter: ',', replace: false }, () =>
    a!.beginImport(),
  );
  expect(await b!.deviceToken('dev-1004')).toBe('tok<&>"quoted"');
  await a!.outbox.enqueue('1234', '0770');
  expect(await queued(b!)).toEqual([{ code: '1234', phone: '0770' }]);
});

test('a database from a newer schema is refused with one line', async () => {
  await open();
  await db.query('INSERT INTO schema_version (version) VALUES ($1)', [PG_MIGRATIONS.length + 1]);
  // As a newer program whose new migration is not additive leaves it (schema-compat.test.ts has the additive case).
  await db.query('UPDATE schema_compat SET oldest_version = $1', [PG_MIGRATIONS.length + 1]);
  const failure = await open().then(
    () => null,
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(StoreOpenError);
  expect((failure as Error).message).toBe(
    `DATABASE_URL (${db.url}): database schema version ${PG_MIGRATIONS.length + 1} is newer than this program supports (${PG_MIGRATIONS.length}); upgrade the program`,
  );
});

test('readiness is false, with the reason, when PostgreSQL takes no writes (a read-only session; a standby alike)', async () => {
  await (await open()).ping();
  const url = new URL(db.url);
  url.searchParams.set('options', `${url.searchParams.get('options') ?? ''} -c default_transaction_read_only=on`);
  const readOnly = await openStore(
    { sqlitePath: 'unused.db', databaseUrl: url.toString(), databasePoolSize: 1, databaseStatementTimeoutMs: 5000 },
    { migrate: false },
  );
  stores.push(readOnly);
  expect(await readOnly.deviceToken('none')).toBeNull();
  await expect(readOnly.ping()).rejects.toThrow('cannot write: the PostgreSQL session is read-only (default_transaction_read_only)');
});

test('the text columns sort and compare bytewise, whatever the database locale', async () => {
  const store = await open();
  const rows = ['b', 'B', '10', '9', 'é', 'e'].map((id) => `http://a.example,${id},n,d,1`);
  const csv = ['school_base_url,id_student,fullName,id_device,ShowActive', ...rows].join('\n');
  await importFiles(
    {
      students: {
        name: 's.csv',
        read: async function* () {
          yield Buffer.from(csv);
        },
      },
    },
    { delimiter: ',', replace: false },
    () => store.beginImport(),
  );
  expect((await store.studentsOf('http://a.example', '1')).map((s) => s.id_student)).toEqual(['10', '9', 'B', 'b', 'e', 'é']);
  // PostgreSQL text cannot hold U+0000: such a value matches nothing instead of failing.
  expect(await store.studentsOf('http://a.example', '\0')).toEqual([]);
  expect(await store.deviceToken('d\0')).toBeNull();
});

test('an AuthCode with U+0000, which PostgreSQL text cannot hold, is refused as a bad code: the empty answer, nothing stored', async () => {
  const store = await open();
  const app = await appOver(loadConfig({ DATABASE_URL: db.url }), store);
  const res = await request(app).get('/AuthCodeSending.asmx/AuthCode?code=12%0034&phone=%2B9647701234567');
  expect([res.status, res.text]).toEqual([200, '']);
  expect(await pendingCount(store)).toBe(0);
  expect((await request(app).get('/AuthCodeSending.asmx/AuthCode?code=1234&phone=%2B9647701234567')).status).toBe(200);
  expect((await queued(store)).map((p) => p.code)).toEqual(['1234']);
});

/** The app over `store`, its SMS side not started (memory limits, nothing sent, nothing to close). */
const appOver = (config: Config, store: Store) => createApp(config, store, { intake: createSms(config.sms, store).intake });

/** A TCP relay between the store and PostgreSQL that can play an outage or a stalled network. */
class Relay {
  private readonly sockets = new Set<net.Socket>();
  private mode: 'up' | 'down' | 'stalled' = 'up';
  private readonly server = net.createServer((client) => {
    if (this.mode === 'down') return void client.destroy();
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    if (this.mode === 'stalled') return;
    const upstream = net.connect(5432, '127.0.0.1');
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });

  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  set(mode: 'up' | 'down' | 'stalled'): void {
    this.mode = mode;
    if (mode !== 'up') for (const s of this.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    this.set('down');
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('a database that goes away', () => {
  let relay: Relay;
  let app: http.RequestListener;
  const TIMEOUT_MS = 400;

  beforeEach(async () => {
    relay = new Relay();
    await relay.start();
    const url = new URL(db.url);
    url.port = String(relay.port);
    url.searchParams.set('application_name', db.schema);
    const config = loadConfig({ DATABASE_URL: url.toString(), DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
    const store = await open(config.databaseUrl!, TIMEOUT_MS);
    await importFiles({ devices: fileSource('devices.csv', `${FIXTURES}/data/devices.csv`) }, { delimiter: ',', replace: false }, () =>
      store.beginImport(),
    );
    app = await appOver(config, store);
  });

  afterEach(() => relay.stop());

  const token = () => request(app).get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001');
  const soapToken = () =>
    post(
      app,
      '/PushNotificationMobile.asmx',
      { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/GetTokenDevice"' },
      envelope('1.1', opElement('GetTokenDevice', { id: 'dev-1001' })),
    );
  const GENERIC = 'Server was unable to process request. ---> An internal error occurred while processing the request.';
  const reveals = /127\.0\.0\.1|postgres|t6_|SELECT|ECONN|timeout/i;

  const expectFault = async () => {
    const http = await token();
    expect(http.status).toBe(500);
    expect(http.text).toMatch(new RegExp(`^${GENERIC.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(http.text).not.toMatch(reveals);
    expect(http.text).not.toContain(String(relay.port));
    const soap = await soapToken();
    expect(soap.status).toBe(500);
    expect(soap.body).toContain('<faultcode>soap:Server</faultcode>');
    expect(soap.body).toContain(GENERIC.replace('>', '&gt;'));
    expect(soap.body).not.toContain(String(relay.port));
    expect(soap.body).not.toMatch(reveals);
  };

  test('while it is down requests get the server fault; once it is back they are answered, without a restart', async () => {
    expect((await token()).text).toContain('>fcm:APA91bH-token-1001<');
    relay.set('down');
    await expectFault();
    relay.set('up');
    expect((await token()).status).toBe(200);
    expect((await soapToken()).body).toContain('>fcm:APA91bH-token-1001<');
  });

  test('a stalled network or a locked table is bounded by the statement time-out', async () => {
    relay.set('stalled');
    await expectFault();
    relay.set('up');
    expect((await token()).status).toBe(200);

    // A slow statement: another session holds the table locked longer than the time-out.
    const blocker = new (await import('pg')).Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE devices IN ACCESS EXCLUSIVE MODE');
      await expectFault();
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect((await token()).status).toBe(200);
  });

  test('connections killed by the server (pg_terminate_backend) are replaced', async () => {
    await Promise.all([token(), token(), token()]);
    const killed = await db.query<{ ok: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
      [db.schema],
    );
    expect(killed.length).toBeGreaterThan(0);
    // The pool learns of each loss as it happens; at worst a request that raced it gets the fault.
    const first = await token();
    expect([200, 500]).toContain(first.status);
    const answers = await Promise.all([token(), token(), token()]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
  });
});
