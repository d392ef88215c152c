import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { BUILD_DIR, request, servicesPerTest, storeDir } from './helpers/service';

/** What /readyz adds while no SMS gateway is configured (the default). */
const NO_GATEWAY = 'SMS: codes are queued, not sent: no gateway is configured (SMS_GATEWAY=none)';

/**
 * Ready means able (issue 21, rule 9): a SQLite file the service user cannot write is refused at
 * start with one line, and readiness turns false, with the reason, once the store cannot be written.
 * The service runs as nobody (uid 65534), which needs the tests to run as root.
 */

const service = servicesPerTest();
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0 && process.platform === 'linux' ? describe : describe.skip;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

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
    ['-wal and -shm left behind by root', rootCompanions, (db: string) => `its -wal file ${db}-wal is not writable by this user (uid ${NOBODY}): owner uid 0, mode 644`],
    ['the file read-only', (_dir: string, db: string) => fs.chmodSync(db, 0o444), (db: string) => `the file ${db} is not writable by this user (uid ${NOBODY}): owner uid ${NOBODY}, mode 444`],
  ])('%s: the start fails with one line naming the file', async (_name, prepare, why) => {
    const s = await service({ uid: NOBODY, prepare, waitListening: false });
    expect((await s.exited).code).toBe(1);
    expect(s.text).toEqual([
      `error: SQLITE_PATH (${s.dbPath}): ${why(s.dbPath)}; the service writes the file, its -wal and -shm companions and its directory`,
    ]);
    expect(s.lines.filter((l) => l.msg.startsWith('listening'))).toEqual([]);
  });

  test('the same files, writable by the service user: it starts and is ready', async () => {
    const s = await service({ uid: NOBODY, prepare: (dir, db) => (rootCompanions(dir, db), fs.chownSync(`${db}-wal`, NOBODY, NOBODY), fs.chownSync(`${db}-shm`, NOBODY, NOBODY)) });
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
    expect(readOnly.body).toBe(`not ready: store: the file ${s.dbPath} is not writable by this user (uid ${NOBODY}): owner uid ${NOBODY}, mode 444; the service writes the file, its -wal and -shm companions and its directory\n`);
    fs.chmodSync(s.dbPath, 0o644);
    expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: `ready\n${NO_GATEWAY}\n` });

    fs.chownSync(`${s.dbPath}-wal`, 0, 0);
    expect((await request(s.adminPort, '/readyz')).body).toMatch(new RegExp(`^not ready: store: its -wal file ${escape(s.dbPath)}-wal is not writable by this user \\(uid ${NOBODY}\\): owner uid 0`));
  });

  test("readiness probes a write on the store's own connection: a connection that cannot write is not ready", async () => {
    // Past the start's check (a store opened directly), as a file that turned read-only under an open connection would be.
    const { dir, dbPath } = await storeDir(false);
    try {
      for (const p of [dir, path.dirname(dbPath), dbPath]) fs.chownSync(p, NOBODY, NOBODY);
      rootCompanions(dir, dbPath);
      const script = `
        const { openSqliteStore } = require(${JSON.stringify(path.join(BUILD_DIR, 'src', 'store', 'sqlite.js'))});
        const store = openSqliteStore(process.argv[1], { migrate: false });
        store.deviceToken('dev-1001').then(() => store.ping()).then(() => console.log('ready'), (e) => console.log(e.message));`;
      const run = spawnSync(process.execPath, ['-e', script, dbPath], { uid: NOBODY, gid: NOBODY, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent' } });
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe('cannot write: attempt to write a readonly database\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Ready means able, both ways (issue 30, rule 2): a store that cannot take a write turns readiness
 * false within seconds, with the reason, and true again once a write succeeds. The probe used to
 * roll back an empty transaction, which a full disk passes while every AuthCode fails.
 */
asRoot('a store that cannot take a write', () => {
  let mnt: string;
  beforeEach(() => {
    mnt = fs.mkdtempSync(path.join(require('os').tmpdir(), 'ready-tmpfs-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt], { encoding: 'utf8' });
    if (mounted.status !== 0) throw new Error(`cannot mount a tmpfs for the full-disk test (root is needed): ${mounted.stderr}`);
  });
  afterEach(() => {
    spawnSync('umount', ['-l', mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
  });

  /** /readyz until `wanted` holds of it (a probe is reused for a second, so it may take two). */
  async function readyzUntil(adminPort: number, wanted: (r: { status: number; body: string }) => boolean, limitMs = 15_000) {
    const until = Date.now() + limitMs;
    for (;;) {
      const r = await request(adminPort, '/readyz');
      if (wanted(r) || Date.now() > until) return r;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const isReady = (r: { status: number }) => r.status === 200;

  test('a full disk: not ready with the free bytes, on /readyz and the console; ready again once space is freed', async () => {
    const dbPath = path.join(mnt, 'service.db');
    const s = await service({ env: { SQLITE_PATH: dbPath } });
    expect(await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=1234&phone=%2B9647701234567')).toMatchObject({ status: 200 });
    expect((await readyzUntil(s.adminPort, isReady)).status).toBe(200);
    // Fill the file system to the last block, as a log or a backup left beside the store would.
    const filled = spawnSync('dd', ['if=/dev/zero', `of=${path.join(mnt, 'filler')}`, 'bs=64k'], { encoding: 'utf8' });
    expect(filled.stderr).toMatch(/No space left on device/);
    const full = await readyzUntil(s.adminPort, (r) => !isReady(r));
    expect(full.status).toBe(503);
    expect(full.body).toMatch(new RegExp(`^not ready: store: cannot write: the file system holding ${escape(dbPath)} has \\d+ bytes free \\(the store needs at least 1048576\\)\\n$`));
    expect((await request(s.adminPort, '/console')).body).toContain(`Not ready: store: cannot write: the file system holding ${dbPath}`);
    fs.rmSync(path.join(mnt, 'filler'));
    expect(await readyzUntil(s.adminPort, isReady)).toMatchObject({ status: 200, body: `ready\n${NO_GATEWAY}\n` });
    expect(await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=4321&phone=%2B9647701234567')).toMatchObject({ status: 200 });
  });

  test('the write lock held by another connection past the limit AuthCodes wait for: not ready, then ready once it is released', async () => {
    const s = await service();
    expect((await readyzUntil(s.adminPort, isReady)).status).toBe(200);
    const Database = require('better-sqlite3');
    const holder = new Database(s.dbPath);
    try {
      holder.exec('BEGIN IMMEDIATE');
      // Briefly held is busy, not broken: still ready.
      expect((await request(s.adminPort, '/readyz')).status).toBe(200);
      const held = await readyzUntil(s.adminPort, (r) => !isReady(r));
      expect(held.status).toBe(503);
      expect(held.body).toMatch(/^not ready: store: cannot write: another connection has held the write lock for \d+ s \(AuthCodes give up after 5 s\)\n$/);
      holder.exec('ROLLBACK');
      expect((await readyzUntil(s.adminPort, isReady)).status).toBe(200);
    } finally {
      holder.close();
    }
  });
});
