import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { consoleNotReady, fillUp, readyzUntil, tmpfsOver } from './helpers/readiness';
import { removeCopies, runnableAs } from './helpers/other-user';
import { request, servicesPerTest, storeDir } from './helpers/service';
import { Client } from 'pg';
import { TEST_STORE, testDatabase, type TestDatabase } from './helpers/postgres';
import { PROBE_INTERVAL_MS, WriteHealth } from '../src/store/health';
import { openSqliteStore } from '../src/store/sqlite';

/** What /readyz adds while no SMS gateway is configured (the default). */
const NO_GATEWAY = 'SMS: codes are queued, not sent: no gateway is configured (SMS_GATEWAY=none)';

/**
 * Ready means able (issue 21, rule 9): a SQLite file the service user cannot write is refused at
 * start with one line, and readiness turns false, with the reason, once the store cannot be written.
 * The service runs as nobody (uid 65534), which needs the tests to run as root.
 */

const service = servicesPerTest();
const NOBODY = 65534;
afterAll(removeCopies);
const asRoot = process.getuid?.() === 0 && process.platform === 'linux' && TEST_STORE === 'sqlite' ? describe : describe.skip;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What an import or a start run as root leaves behind: the file's companions, owned by root. */
function rootCompanions(_dir: string, db: string): void {
  for (const f of [`${db}-wal`, `${db}-shm`]) {
    fs.writeFileSync(f, '');
    fs.chownSync(f, 0, 0);
    fs.chmodSync(f, 0o644);
  }
}

asRoot('the SQLite file, as a service user that cannot write it', () => {
  test.each([
    [
      '-wal and -shm left behind by root',
      rootCompanions,
      (db: string) => `its -wal file ${db}-wal is not writable by this user (uid ${NOBODY}): owner uid 0, mode 644`,
    ],
    [
      'the file read-only',
      (_dir: string, db: string) => fs.chmodSync(db, 0o444),
      (db: string) => `the file ${db} is not writable by this user (uid ${NOBODY}): owner uid ${NOBODY}, mode 444`,
    ],
  ])('%s: the start fails with one line naming the file', async (_name, prepare, why) => {
    const s = await service({ uid: NOBODY, prepare, waitListening: false });
    expect((await s.exited).code).toBe(1);
    expect(s.text).toEqual([
      `error: SQLITE_PATH (${s.dbPath}): ${why(s.dbPath)}; the service writes the file, its -wal and -shm companions and its directory`,
    ]);
    expect(s.lines.filter((l) => l.msg.startsWith('listening'))).toEqual([]);
  });

  test('the same files, writable by the service user: it starts and is ready', async () => {
    const s = await service({
      uid: NOBODY,
      prepare: (dir, db) => (rootCompanions(dir, db), fs.chownSync(`${db}-wal`, NOBODY, NOBODY), fs.chownSync(`${db}-shm`, NOBODY, NOBODY)),
    });
    expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: `ready\n${NO_GATEWAY}\n` });
  });

  test('readiness turns false, with the reason, once the file or its -wal cannot be written; true again once it can', async () => {
    const s = await service({ uid: NOBODY });
    // An AuthCode makes the -wal exist (the service holds it open from then on).
    await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=1234&phone=%2B9647701234567');
    expect(fs.existsSync(`${s.dbPath}-wal`)).toBe(true);
    expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: `ready\n${NO_GATEWAY}\n` });

    fs.chmodSync(s.dbPath, 0o444);
    const readOnly = await request(s.adminPort, '/readyz');
    expect(readOnly.status).toBe(503);
    expect(readOnly.body).toBe(
      `not ready: store: the file ${s.dbPath} is not writable by this user (uid ${NOBODY}): owner uid ${NOBODY}, mode 444; the service writes the file, its -wal and -shm companions and its directory\n`,
    );
    expect(await consoleNotReady(s.adminPort)).toBe(
      `Not ready: store: the file ${s.dbPath} is not writable by this user (uid ${NOBODY}): owner uid ${NOBODY}, mode 444; the service writes the file, its -wal and -shm companions and its directory.`,
    );
    fs.chmodSync(s.dbPath, 0o644);
    expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: `ready\n${NO_GATEWAY}\n` });
    expect(await consoleNotReady(s.adminPort)).toBeNull();

    fs.chownSync(`${s.dbPath}-wal`, 0, 0);
    expect((await request(s.adminPort, '/readyz')).body).toMatch(
      new RegExp(
        `^not ready: store: its -wal file ${escapeRegExp(s.dbPath)}-wal is not writable by this user \\(uid ${NOBODY}\\): owner uid 0`,
      ),
    );
  });

  test("readiness probes a write on the store's own connection: a connection that cannot write is not ready", async () => {
    // Past the start's check (a store opened directly), as a file that turned read-only under an open connection would be.
    const { dir, dbPath } = await storeDir(false);
    try {
      for (const p of [dir, path.dirname(dbPath), dbPath]) fs.chownSync(p, NOBODY, NOBODY);
      rootCompanions(dir, dbPath);
      const script = `
        const { openSqliteStore } = require(${JSON.stringify(path.join(runnableAs(NOBODY).build, 'src', 'store', 'sqlite.js'))});
        const store = openSqliteStore(process.argv[1], { migrate: false });
        store.deviceToken('dev-1001').then(() => store.ping()).then(() => console.log('ready'), (e) => console.log(e.message));`;
      const run = spawnSync(runnableAs(NOBODY).node, ['-e', script, dbPath], {
        cwd: dir,
        uid: NOBODY,
        gid: NOBODY,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent' },
      });
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe('cannot write: attempt to write a readonly database\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Ready means able, both ways (issue 30, rule 2): the store that cannot take a write (a full disk, a
 * lock held past its limit, privileges revoked) turns /readyz and the console's verdict not ready
 * within seconds, with the reason, and a write that succeeds again turns them ready. Each waits by
 * polling /readyz (a count of answers, not a time), with a generous bound.
 */
const sqliteWrites = process.getuid?.() === 0 && process.platform === 'linux' && TEST_STORE === 'sqlite' ? describe : describe.skip;
const READY = `ready\n${NO_GATEWAY}\n`;
/** Each of these waits for a lock's limit and then polls: a loaded machine only makes it longer. */
const SLOW = 90_000;

sqliteWrites('SQLite: readiness follows whether the store takes writes', () => {
  test(
    'a full disk (a small tmpfs filled up after the start): not ready with the reason, on /readyz and the console; ready again once space is freed',
    async () => {
      let dataDir = '';
      const s = await service({ prepare: (_dir, db) => tmpfsOver((dataDir = path.dirname(db)), '8m') });
      try {
        expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: READY });
        expect((await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=1234&phone=%2B9647701234567')).status).toBe(200);
        expect(await consoleNotReady(s.adminPort)).toBeNull();

        fillUp(path.join(dataDir, 'filler'));
        const full = await readyzUntil(s.adminPort, (r) => r.status !== 200, 'not ready');
        expect(full.status).toBe(503);
        expect(full.body).toMatch(
          new RegExp(
            `^not ready: store: cannot write: (the file system holding ${escapeRegExp(dataDir)} is full: \\d+ bytes free \\(under 1 MiB\\)|database or disk is full)\n$`,
          ),
        );
        expect(await consoleNotReady(s.adminPort)).toMatch(/^Not ready: store: cannot write: /);

        fs.unlinkSync(path.join(dataDir, 'filler'));
        expect(await readyzUntil(s.adminPort, (r) => r.status === 200, 'ready')).toEqual(expect.objectContaining({ body: READY }));
        expect(await consoleNotReady(s.adminPort)).toBeNull();
        expect((await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=5678&phone=%2B9647701234567')).status).toBe(200);
      } finally {
        s.kill();
        await s.exited;
        const unmounted = spawnSync('umount', [dataDir], { encoding: 'utf8' });
        if (unmounted.status !== 0) spawnSync('umount', ['-l', dataDir]);
      }
    },
    SLOW,
  );

  test(
    'a write lock another connection holds past the limit: not ready with the reason, on /readyz and the console; ready again once it is released',
    async () => {
      const s = await service();
      expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: READY });
      const holder = new Database(s.dbPath);
      try {
        holder.exec('BEGIN IMMEDIATE');
        const locked = await readyzUntil(s.adminPort, (r) => r.status !== 200, 'not ready');
        expect(locked).toMatchObject({
          status: 503,
          body: 'not ready: store: cannot write: the database is locked: another connection has held its write lock past the 5 s limit\n',
        });
        expect(await consoleNotReady(s.adminPort)).toBe(
          'Not ready: store: cannot write: the database is locked: another connection has held its write lock past the 5 s limit.',
        );
        holder.exec('ROLLBACK');
        expect(await readyzUntil(s.adminPort, (r) => r.status === 200, 'ready')).toEqual(expect.objectContaining({ body: READY }));
        expect(await consoleNotReady(s.adminPort)).toBeNull();
      } finally {
        holder.close();
      }
    },
    SLOW,
  );
});

const sqliteOnly = TEST_STORE === 'sqlite' ? describe : describe.skip;

sqliteOnly('the write probe: rate-limited, cached, and told of real traffic failing', () => {
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

  test('one probe per interval whoever asks; a store fault of real traffic is reported at once, without a probe; a statement fault is not', async () => {
    let clock = 0;
    let probes = 0;
    let outcome: Error | null = null;
    const health = new WriteHealth(
      async () => {
        probes += 1;
        if (outcome !== null) throw outcome;
      },
      (e) => (e as { code?: string }).code === 'SQLITE_FULL',
      () => clock,
    );
    const reason = () =>
      health.check().then(
        () => 'ok',
        (e: Error) => e.message,
      );
    expect([await reason(), await reason(), probes]).toEqual(['ok', 'ok', 1]);

    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    await expect(health.observe(() => Promise.reject(full))).rejects.toBe(full);
    expect([await reason(), probes]).toEqual(['cannot write: database or disk is full', 1]);

    clock += PROBE_INTERVAL_MS;
    expect([await reason(), probes]).toEqual(['ok', 2]);
    const constraint = Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
    await expect(health.observe(() => Promise.reject(constraint))).rejects.toBe(constraint);
    expect(await health.observe(async () => 7)).toBe(7);
    expect([await reason(), probes]).toEqual(['ok', 2]);

    outcome = new Error('disk I/O error');
    clock += PROBE_INTERVAL_MS;
    expect([await reason(), probes]).toEqual(['cannot write: disk I/O error', 3]);
    outcome = null;
    clock += PROBE_INTERVAL_MS;
    expect([await reason(), probes]).toEqual(['ok', 4]);
  });

  test('a probe still waiting (for a lock) does not hold the answer: the last result is given meanwhile', async () => {
    let clock = 0;
    let release: (e: Error | null) => void = () => undefined;
    const health = new WriteHealth(
      () => new Promise<void>((resolve, reject) => (release = (e) => (e === null ? resolve() : reject(e)))),
      () => false,
      () => clock,
    );
    const first = health.check();
    release(null);
    await first;
    clock += PROBE_INTERVAL_MS;
    await expect(health.check()).resolves.toBeUndefined();
    release(busy);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(health.check()).rejects.toThrow('cannot write: database is locked');
  });

  test(
    "SQLite: an AuthCode's write failing for the store's reason makes ping fail at once, with that write's error; a write succeeding again, ready",
    async () => {
      const { dir, dbPath } = await storeDir(false);
      const store = openSqliteStore(dbPath);
      const holder = new Database(dbPath);
      try {
        await store.ping();
        holder.exec('BEGIN IMMEDIATE');
        await expect(store.outbox.enqueue('1234', '+9647701234567')).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
        // The raw error of the outbox's INSERT, not the probe's wording: no probe has run since.
        await expect(store.ping()).rejects.toThrow(/^cannot write: database is locked$/);
        holder.exec('ROLLBACK');
        for (
          let i = 0;
          i < 100 &&
          (await store.ping().then(
            () => false,
            () => true,
          ));
          i += 1
        )
          await new Promise((r) => setTimeout(r, 100));
        await expect(store.ping()).resolves.toBeUndefined();
      } finally {
        holder.close();
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    SLOW,
  );
});

const postgresOnly = TEST_STORE === 'postgres' ? describe : describe.skip;

postgresOnly('PostgreSQL: readiness follows whether the store takes writes', () => {
  /** A schema of its own, owned by a role of its own: privileges are not checked for a superuser. */
  let db: TestDatabase;
  let role = '';
  let url = '';
  beforeAll(async () => {
    db = await testDatabase('t30');
    role = `${db.schema}_svc`;
    await db.query(`CREATE ROLE ${role} LOGIN`);
    await db.query(`ALTER SCHEMA ${db.schema} OWNER TO ${role}`);
    const u = new URL(db.url);
    u.username = role;
    url = u.toString();
  });
  afterAll(async () => {
    await db.drop();
    await db.query(`DROP ROLE IF EXISTS ${role}`);
  });

  test(
    'privileges on the outbox revoked: AuthCode fails and readiness turns false with the reason, on /readyz and the console; granted again, ready',
    async () => {
      const s = await service({ env: { DATABASE_URL: url } });
      expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: READY });
      await db.query(`REVOKE INSERT ON auth_code_outbox FROM ${role}`);
      expect((await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=1234&phone=%2B9647701234567')).status).toBe(500);
      const revoked = await readyzUntil(s.adminPort, (r) => r.status !== 200, 'not ready');
      // The failed INSERT's own error at once, or the probe's once it has run.
      expect(revoked.body).toMatch(
        /^not ready: store: cannot write: (permission denied for table auth_code_outbox|this role may not insert, update and delete rows of auth_code_outbox \(privileges revoked\))\n$/,
      );
      expect(await readyzUntil(s.adminPort, (r) => r.body.includes('privileges revoked'), "the probe's reason")).toMatchObject({
        status: 503,
      });
      expect(await consoleNotReady(s.adminPort)).toMatch(/^Not ready: store: cannot write: /);
      await db.query(`GRANT INSERT ON auth_code_outbox TO ${role}`);
      expect(await readyzUntil(s.adminPort, (r) => r.status === 200, 'ready')).toEqual(expect.objectContaining({ body: READY }));
      expect(await consoleNotReady(s.adminPort)).toBeNull();
      expect((await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=1234&phone=%2B9647701234567')).status).toBe(200);
    },
    SLOW,
  );

  test(
    'INSERT, UPDATE and DELETE revoked on every table: not ready with the reason; writable again, ready',
    async () => {
      const s = await service({ env: { DATABASE_URL: url } });
      expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: READY });
      await db.query(`REVOKE INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${db.schema} FROM ${role}`);
      const refused = await readyzUntil(s.adminPort, (r) => r.status !== 200, 'not ready');
      expect(refused.body).toBe('not ready: store: cannot write: permission denied for table store_heartbeat\n');
      await db.query(`GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${db.schema} TO ${role}`);
      expect(await readyzUntil(s.adminPort, (r) => r.status === 200, 'ready')).toEqual(expect.objectContaining({ body: READY }));
    },
    SLOW,
  );

  test(
    'a lock on the outbox held past the statement time-out: not ready with the reason; released, ready',
    async () => {
      const s = await service({ env: { DATABASE_URL: url, DATABASE_STATEMENT_TIMEOUT_MS: '2000' } });
      expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: READY });
      const holder = new Client({ connectionString: db.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE auth_code_outbox IN ACCESS EXCLUSIVE MODE');
        const locked = await readyzUntil(s.adminPort, (r) => r.status !== 200, 'not ready');
        expect(locked.body).toBe('not ready: store: cannot write: canceling statement due to statement timeout\n');
        await holder.query('ROLLBACK');
        expect(await readyzUntil(s.adminPort, (r) => r.status === 200, 'ready')).toEqual(expect.objectContaining({ body: READY }));
      } finally {
        await holder.end();
      }
    },
    SLOW,
  );
});
