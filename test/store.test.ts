import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SchemaVersionError } from '../src/store/migrations';
import { openStore } from '../src/store/open';
import { openSqliteStore } from '../src/store/sqlite';
import type { DeviceRow, ImportCounts, Store, StudentRow } from '../src/store/store';
import { pendingCount, queued } from './helpers/outbox';
import { TEST_STORE, testDatabase, type TestDatabase } from './helpers/postgres';

const ALNOOR = 'http://alnoor.school.example';
const OTHER = 'http://other.school.example';

const student = (school_base_url: string, id_student: string, ShowActive = '1', fullName = `Name ${id_student}`): StudentRow => ({
  school_base_url,
  id_student,
  fullName,
  id_device: `dev-${id_student}`,
  ShowActive,
});

/** Inserts or replaces rows by key, all or nothing: an import from rows already in memory. */
async function upsert(store: Store, students: readonly StudentRow[], devices: readonly DeviceRow[]): Promise<ImportCounts> {
  const session = await store.beginImport();
  try {
    await session.stageStudents(students.map((s, i) => ({ ...s, line: i + 1 })));
    await session.stageDevices(devices.map((d, i) => ({ ...d, line: i + 1 })));
    return await session.commit(false);
  } catch (err) {
    await session.rollback();
    throw err;
  }
}

let dir: string;
let dbPath: string;
let pg: TestDatabase | undefined;
let store: Store | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'store-test-'));
  // A directory that does not exist yet: opening must create it.
  dbPath = join(dir, 'nested', 'deeper', 'student-info.db');
  if (TEST_STORE === 'postgres') pg = await testDatabase();
});

afterEach(async () => {
  await store?.close();
  store = undefined;
  await pg?.drop();
  pg = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The store under test: the SQLite file at dbPath, or this test's PostgreSQL schema. */
const openTestStore = (): Promise<Store> =>
  openStore({ sqlitePath: dbPath, databaseUrl: pg?.url ?? null, databasePoolSize: 2, databaseStatementTimeoutMs: 5000 });

/** The SQLite-only checks of the file itself; postgres.test.ts has PostgreSQL's. */
const sqliteOnly = TEST_STORE === 'sqlite' ? describe : describe.skip;

/**
 * The reason a promise rejected. Not `.rejects.toThrow()`: better-sqlite3's SqliteError is not a
 * genuine Error object (Object.prototype.toString gives [object Object]) and is not `instanceof` the
 * Error of jest's sandbox when the suite runs in a worker, so jest would report "did not throw".
 */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the promise to reject');
    },
    (reason: unknown) => reason,
  );
}

/** Runs SQL (`?` parameters) with a separate connection, as another process would. */
async function peek<T>(sql: string, ...params: unknown[]): Promise<T[]> {
  if (pg !== undefined) {
    let n = 0;
    return pg.query<T>(
      sql.replace(/\?/g, () => `$${(n += 1)}`),
      params,
    );
  }
  const db = new Database(dbPath);
  try {
    const statement = db.prepare(sql);
    return (statement.reader ? statement.all(...params) : (statement.run(...params), [])) as T[];
  } finally {
    db.close();
  }
}

sqliteOnly('opening a SQLite file and its migrations', () => {
  test('creates the parent directory, the schema and WAL mode', async () => {
    store = openSqliteStore(dbPath);
    await store.close();
    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
      expect(tables).toEqual(expect.arrayContaining([{ name: 'auth_code_outbox' }, { name: 'devices' }, { name: 'students' }]));
    } finally {
      db.close();
    }
  });

  test('reopening is idempotent and keeps the data', async () => {
    store = openSqliteStore(dbPath);
    await upsert(store, [student(ALNOOR, '1')], [{ id_device: 'd', token: 't' }]);
    await store.outbox.enqueue('1234', '0770');
    await store.close();

    for (let i = 0; i < 2; i += 1) {
      store = openSqliteStore(dbPath);
      expect(await store.studentsOf(ALNOOR, '1')).toHaveLength(1);
      expect(await store.deviceToken('d')).toBe('t');
      expect(await pendingCount(store)).toBe(1);
      await store.close();
    }
    expect(await peek<{ user_version: number }>('PRAGMA user_version')).toEqual([{ user_version: MIGRATIONS.length }]);
  });

  test('the students query is served by the index, without a sort step', async () => {
    store = openSqliteStore(dbPath);
    const plan = (
      await peek<{ detail: string }>(
        'EXPLAIN QUERY PLAN SELECT id_student, fullName, id_device, ShowActive FROM students WHERE school_base_url = ? AND ShowActive = ? ORDER BY id_student',
        ALNOOR,
        '1',
      )
    ).map((r) => r.detail);
    expect(plan.join('\n')).toMatch(/students_by_school_active/);
    expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
  });

  test('refuses a database from a newer schema', async () => {
    await openSqliteStore(dbPath).close();
    const db = new Database(dbPath);
    // As a newer program whose new migration is not additive leaves it (schema-compat.test.ts has the additive case).
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.prepare('UPDATE schema_compat SET oldest_version = ?').run(MIGRATIONS.length + 1);
    db.close();
    expect(() => openSqliteStore(dbPath)).toThrow(SchemaVersionError);
    await expect(openTestStore()).rejects.toThrow(
      `SQLITE_PATH (${dbPath}): database schema version ${MIGRATIONS.length + 1} is newer than this program supports (${MIGRATIONS.length}); upgrade the program`,
    );
  });

  test('storage problems at start are one line naming the setting and the path', async () => {
    const opening = (sqlitePath: string) =>
      openStore({ sqlitePath, databaseUrl: null, databasePoolSize: 1, databaseStatementTimeoutMs: 1000 }).then(
        () => 'opened',
        (err: Error) => `${err.name}: ${err.message}`,
      );
    const notADirectory = join(dir, 'file');
    writeFileSync(notADirectory, 'x');
    expect(await opening(join(notADirectory, 'db', 'x.db'))).toBe(
      `StoreOpenError: SQLITE_PATH (${notADirectory}/db/x.db): ${notADirectory} is a file, not a directory`,
    );
    const notADatabase = join(dir, 'notes.txt');
    writeFileSync(notADatabase, 'these are not the droids '.repeat(100));
    expect(await opening(notADatabase)).toBe(`StoreOpenError: SQLITE_PATH (${notADatabase}): the file is not a SQLite database`);
    expect(await opening(dir)).toMatch(
      new RegExp(`^StoreOpenError: SQLITE_PATH \\(${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): cannot open the file`),
    );
  });
});

describe('studentsOf', () => {
  beforeEach(async () => {
    store = await openTestStore();
    await upsert(
      store,
      [
        student(ALNOOR, '9'),
        student(ALNOOR, '10'),
        student(ALNOOR, '2', '0'),
        student(ALNOOR, '100'),
        student(ALNOOR, 'b'),
        student(ALNOOR, 'B'),
        student(OTHER, '1'),
      ],
      [],
    );
  });

  test('filters by school and ShowActive, ordered by id_student as plain strings', async () => {
    const active = await store!.studentsOf(ALNOOR, '1');
    expect(active.map((s) => s.id_student)).toEqual(['10', '100', '9', 'B', 'b']);
    expect((await store!.studentsOf(ALNOOR, '0')).map((s) => s.id_student)).toEqual(['2']);
    expect((await store!.studentsOf(OTHER, '1')).map((s) => s.id_student)).toEqual(['1']);
  });

  test('returns StudentInfo objects with exactly the wire fields, in wire order', async () => {
    const [first] = await store!.studentsOf(OTHER, '1');
    expect(Object.keys(first!)).toEqual(['id_student', 'fullName', 'id_device', 'ShowActive']);
    expect(first).toEqual({ id_student: '1', fullName: 'Name 1', id_device: 'dev-1', ShowActive: '1' });
  });

  test('matches exactly: no case folding, no trimming, nothing for an unknown school', async () => {
    expect(await store!.studentsOf(ALNOOR.toUpperCase(), '1')).toEqual([]);
    expect(await store!.studentsOf(`${ALNOOR}/`, '1')).toEqual([]);
    expect(await store!.studentsOf('http://nowhere.example', '1')).toEqual([]);
    expect(await store!.studentsOf(ALNOOR, '\0')).toEqual([]);
  });

  test('a null school matches nothing', async () => {
    expect(await store!.studentsOf(null, '1')).toEqual([]);
  });
});

describe('deviceToken', () => {
  beforeEach(async () => {
    store = await openTestStore();
    await upsert(
      store,
      [],
      [
        { id_device: 'dev-1', token: 'fcm:abc' },
        { id_device: 'dev-empty', token: '' },
        { id_device: 'جهاز', token: 'رمز' },
      ],
    );
  });

  test('answers the token, including an empty one and non-ASCII keys', async () => {
    expect(await store!.deviceToken('dev-1')).toBe('fcm:abc');
    expect(await store!.deviceToken('dev-empty')).toBe('');
    expect(await store!.deviceToken('جهاز')).toBe('رمز');
  });

  test('answers null for an unknown or null device', async () => {
    expect(await store!.deviceToken('DEV-1')).toBeNull();
    expect(await store!.deviceToken('')).toBeNull();
    expect(await store!.deviceToken(null)).toBeNull();
  });
});

describe('AuthCode outbox', () => {
  test('keeps requests oldest first, each due at once; a claim honours its limit', async () => {
    store = await openTestStore();
    const before = Date.now();
    await store.outbox.enqueue('1234', '07701234567');
    await store.outbox.enqueue('5678', '07801234567');
    await store.outbox.enqueue('9012', '07901234567');

    const now = new Date();
    const claimed = await store.outbox.claimDue('me', now, new Date(now.getTime() + 60_000), 2, new Date(0));
    expect(claimed.map(({ code, phone }) => ({ code, phone }))).toEqual([
      { code: '1234', phone: '07701234567' },
      { code: '5678', phone: '07801234567' },
    ]);
    expect(claimed[0].id).toBeLessThan(claimed[1].id);
    for (const p of claimed) {
      expect(p.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(p.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    }
    // The two claimed are leased; the third waits.
    expect(await queued(store)).toEqual([{ code: '9012', phone: '07901234567' }]);
    expect(await pendingCount(store)).toBe(3);
  });

  test('an accepted request is visible to another connection at once and survives reopening', async () => {
    store = await openTestStore();
    await store.outbox.enqueue('42', '0780');
    expect(await peek('SELECT code, phone, delivered_at FROM auth_code_outbox')).toEqual([
      { code: '42', phone: '0780', delivered_at: null },
    ]);
    await store.close();
    store = await openTestStore();
    expect((await queued(store)).map((p) => p.code)).toEqual(['42']);
  });

  test('delivered requests are not pending', async () => {
    store = await openTestStore();
    await store.outbox.enqueue('1', 'a');
    await store.outbox.enqueue('2', 'b');
    const now = new Date();
    const [first] = await store.outbox.claimDue('me', now, new Date(now.getTime() + 60_000), 1, new Date(0));
    expect(first!.code).toBe('1');
    expect(await store.outbox.markDelivered(first!.id, 'me', now)).toBe(true);
    expect((await queued(store)).map((p) => p.code)).toEqual(['2']);
  });
});

describe('upsert', () => {
  test('inserts, then replaces by key without touching other rows, and returns counts', async () => {
    store = await openTestStore();
    expect(await upsert(store, [student(ALNOOR, '1'), student(ALNOOR, '2')], [{ id_device: 'd1', token: 'old' }])).toEqual({
      students: 2,
      devices: 1,
      removed: 0,
    });

    expect(
      await upsert(
        store,
        [{ school_base_url: ALNOOR, id_student: '1', fullName: 'Renamed', id_device: 'd9', ShowActive: '0' }],
        [
          { id_device: 'd1', token: 'new' },
          { id_device: 'd2', token: 'x' },
        ],
      ),
    ).toEqual({ students: 1, devices: 2, removed: 0 });

    expect(await store.studentsOf(ALNOOR, '0')).toEqual([{ id_student: '1', fullName: 'Renamed', id_device: 'd9', ShowActive: '0' }]);
    expect((await store.studentsOf(ALNOOR, '1')).map((s) => s.id_student)).toEqual(['2']);
    expect(await store.deviceToken('d1')).toBe('new');
    expect(await store.deviceToken('d2')).toBe('x');
    expect(await peek<{ n: number }>('SELECT CAST(count(*) AS INTEGER) AS n FROM students')).toEqual([{ n: 2 }]);
  });

  test('the same id_student in two schools is two students', async () => {
    store = await openTestStore();
    await upsert(store, [student(ALNOOR, '1'), student(OTHER, '1')], []);
    expect(await peek<{ n: number }>('SELECT CAST(count(*) AS INTEGER) AS n FROM students')).toEqual([{ n: 2 }]);
  });

  test('is all or nothing', async () => {
    store = await openTestStore();
    await upsert(store, [student(ALNOOR, '1', '1', 'Original')], []);
    const broken = { ...student(ALNOOR, '3'), fullName: null } as unknown as StudentRow;
    const failure = await rejection(
      upsert(store, [student(ALNOOR, '1', '1', 'Changed'), student(ALNOOR, '2'), broken], [{ id_device: 'd', token: 't' }]),
    );
    // The database's own NOT NULL constraint refused the row.
    expect(failure).toMatchObject({ code: TEST_STORE === 'sqlite' ? 'SQLITE_CONSTRAINT_NOTNULL' : '23502' });
    expect(await store.studentsOf(ALNOOR, '1')).toEqual([{ id_student: '1', fullName: 'Original', id_device: 'dev-1', ShowActive: '1' }]);
    expect(await store.deviceToken('d')).toBeNull();
  });

  test('stores text exactly: Arabic, markup characters, quotes, backslashes, tabs, line breaks, empty strings', async () => {
    store = await openTestStore();
    const name = 'سارة & <co> "q" \'a\' back\\slash\ttab\r\nbreak \\N';
    const tricky = { school_base_url: 'http://مدرسة.example', id_student: '3001', fullName: name, id_device: '', ShowActive: '\\' };
    await upsert(store, [tricky], [{ id_device: '\\N', token: '\t' }]);
    expect(await store.studentsOf('http://مدرسة.example', '\\')).toEqual([
      { id_student: '3001', fullName: name, id_device: '', ShowActive: '\\' },
    ]);
    expect(await store.deviceToken('\\N')).toBe('\t');
  });
});

test('close is idempotent and later calls reject', async () => {
  const s = await openTestStore();
  await s.close();
  await s.close();
  expect(await rejection(s.deviceToken('x'))).toMatchObject({ message: expect.stringMatching(/not open|after calling end/) });
});
