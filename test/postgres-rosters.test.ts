/**
 * The roster cache on PostgreSQL: several instances share one database, so each keeps the rosters it
 * read only while migration 4's trigger and its LISTEN connection (src/store/pg-changes.ts) vouch
 * that nobody changed students. Runs only in jest's postgres project (jest.config.js), skipped with a
 * message when PostgreSQL is absent; REQUIRE_POSTGRES=1 (CI) makes that an error.
 */
import { Client } from 'pg';
import type { StudentInfo } from '../src/contract/types';
import { importFiles } from '../src/store/import';
import { openStore } from '../src/store/open';
import { StudentChanges, type WatchTiming } from '../src/store/pg-changes';
import { RosterCache } from '../src/store/roster-cache';
import type { Store } from '../src/store/store';
import { testDatabase, type TestDatabase } from './helpers/postgres';
import { until } from './helpers/sms-gateway';

const SCHOOL = 'http://rosters.school.example';
const FAST: WatchTiming = { heartbeatMs: 50, timeoutMs: 2000, reconnectMs: [50] };

let db: TestDatabase;
const closing: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  db = await testDatabase('store_rc');
});

afterEach(async () => {
  await Promise.all(closing.splice(0).map((s) => s.close()));
  await db.drop();
});

/** The URL with an application_name of this test's own, so that its connections can be found and killed. */
function named(): string {
  const url = new URL(db.url);
  url.searchParams.set('application_name', db.schema);
  return url.toString();
}

async function open(url = db.url): Promise<Store> {
  const store = await openStore({ sqlitePath: 'unused.db', databaseUrl: url, databasePoolSize: 2, databaseStatementTimeoutMs: 5000 });
  closing.push(store);
  return store;
}

async function importStudents(store: Store, ids: string[], replace = false): Promise<void> {
  const csv = ['school_base_url,id_student,fullName,id_device,ShowActive', ...ids.map((id) => `${SCHOOL},${id},Name ${id},,1`)].join('\n');
  const source = {
    name: 's.csv',
    read: async function* () {
      yield Buffer.from(csv);
    },
  };
  await importFiles({ students: source }, { delimiter: ',', replace }, () => store.beginImport());
}

const ids = async (store: Store): Promise<string[]> => (await store.studentsOf(SCHOOL, '1')).map((s) => s.id_student);

test('two instances on one schema: a roster read twice is kept, and an import through either is answered by the other', async () => {
  const [a, b] = await Promise.all([open(), open()]);
  await importStudents(a, ['1', '2']);
  expect((await b.studentsOf(SCHOOL, '1')).map((s) => s.id_student)).toEqual(['1', '2']);
  // Kept: read twice, the very same frozen roster. Once b's listener is live and has heard of the
  // import, that is: both come a moment after its start and the import (after the first read, on a
  // loaded machine), and until then a read is not kept.
  let kept: readonly StudentInfo[] = [];
  await until('a roster read twice is kept', async () => {
    kept = await b.studentsOf(SCHOOL, '1');
    return (await b.studentsOf(SCHOOL, '1')) === kept;
  });
  expect(Object.isFrozen(kept) && Object.isFrozen(kept[0])).toBe(true);

  await importStudents(a, ['2', '3'], true);
  await until('the other instance answers the import', async () => (await ids(b)).join() === '2,3');
  await importStudents(b, ['4']);
  await until('the first instance answers the import through the second', async () => (await ids(a)).join() === '2,3,4');
});

test('rows written by another system (plain SQL: insert, update, delete, truncate) are answered too', async () => {
  const store = await open();
  await importStudents(store, ['1']);
  expect(await ids(store)).toEqual(['1']);
  await db.query(
    `INSERT INTO students (school_base_url, id_student, "fullName", id_device, "ShowActive") VALUES ($1, '2', 'Two', '', '1')`,
    [SCHOOL],
  );
  await until('the insert is answered', async () => (await ids(store)).join() === '1,2');
  await db.query(`UPDATE students SET "fullName" = 'Renamed' WHERE id_student = '2'`);
  await until('the update is answered', async () => (await store.studentsOf(SCHOOL, '1'))[1]?.fullName === 'Renamed');
  await db.query(`DELETE FROM students WHERE id_student = '1'`);
  await until('the delete is answered', async () => (await ids(store)).join() === '2');
  await db.query('TRUNCATE students');
  await until('the truncate is answered', async () => (await ids(store)).length === 0);
});

describe('the watch (pg-changes.ts)', () => {
  async function watch(): Promise<StudentChanges> {
    await open(); // migrates the schema: the trigger exists
    const changes = new StudentChanges({ connectionString: named() }, FAST);
    closing.push(changes);
    await changes.start();
    return changes;
  }
  const write = () =>
    db.query(`INSERT INTO students (school_base_url, id_student, "fullName", id_device, "ShowActive") VALUES ('s', $1, 'n', '', '1')`, [
      String(Math.random()),
    ]);

  test('its version moves with each committed change of students, not with a rolled-back one or another schema', async () => {
    const changes = await watch();
    const v0 = changes.version();
    expect(v0).not.toBeNull();
    await write();
    await until('the change is heard', () => changes.version() !== v0);

    // A rolled-back write sends nothing; another schema's trigger names its own schema.
    const other = await testDatabase('store_rc');
    try {
      await open(other.url);
      const client = new Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query('BEGIN');
        await client.query(`INSERT INTO students VALUES ('s', 'x', 'n', '', '1')`);
        await client.query('ROLLBACK');
      } finally {
        await client.end();
      }
      const v1 = changes.version();
      await other.query(`INSERT INTO students VALUES ('s', 'x', 'n', '', '1')`);
      // A change after both (a statement-level trigger fires for no rows too), heard: the two before it
      // moved nothing, since notifications reach a listener in commit order.
      await db.query('UPDATE students SET "fullName" = "fullName" WHERE false');
      await until('a later change is heard', () => changes.version() !== v1);
      expect(changes.version()).toBe(v1! + 1);
    } finally {
      await other.drop();
    }
  });

  test('a lost connection is replaced, and nothing kept before the loss survives it', async () => {
    const changes = await watch();
    const v0 = changes.version();
    const killed = await db.query<{ ok: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
      [db.schema],
    );
    expect(killed).toEqual([{ ok: true }]);
    await until('listening again, at a new version', () => changes.version() !== null && changes.version() !== v0);
    // And hearing changes again.
    const v1 = changes.version();
    await write();
    await until('a change after the loss is heard', () => changes.version() !== v1);
  });

  test('without a trigger that fires for every writer nothing is kept; with it back, nothing from before is', async () => {
    const changes = await watch();
    const v0 = changes.version();
    await db.query('ALTER TABLE students DISABLE TRIGGER students_changed');
    await until('off while the trigger is disabled', () => changes.version() === null);
    await db.query('ALTER TABLE students ENABLE ALWAYS TRIGGER students_changed');
    await until('on again', () => changes.version() !== null);
    expect(changes.version()).not.toBe(v0);

    // Writes let through with the trigger disabled and enabled again in one transaction: the trigger's
    // row changed, so the version moves though no notification came.
    const v1 = changes.version();
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE students DISABLE TRIGGER students_changed');
      await client.query(`INSERT INTO students VALUES ('s', 'quiet', 'n', '', '1')`);
      await client.query('ALTER TABLE students ENABLE ALWAYS TRIGGER students_changed');
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
    await until('the altered trigger is noticed', () => changes.version() !== null && changes.version() !== v1);
  });
});

describe('RosterCache.getAsync', () => {
  const roster = (n: number): StudentInfo[] =>
    Array.from({ length: n }, (_, i) => ({ id_student: String(i), fullName: '', id_device: '', ShowActive: '1' }));
  function deferred(): { promise: Promise<StudentInfo[]>; resolve(rows: StudentInfo[]): void } {
    let resolve!: (rows: StudentInfo[]) => void;
    const promise = new Promise<StudentInfo[]>((r) => (resolve = r));
    return { promise, resolve };
  }

  test('requests for one roster at one version share one read; the roster is kept', async () => {
    const cache = new RosterCache(100);
    const d = deferred();
    let reads = 0;
    const read = () => ((reads += 1), d.promise);
    const both = Promise.all([cache.getAsync(() => 1, 'x', '1', read), cache.getAsync(() => 1, 'x', '1', read)]);
    d.resolve(roster(2));
    const [p, q] = await both;
    expect(p).toBe(q);
    expect(await cache.getAsync(() => 1, 'x', '1', read)).toBe(p);
    expect(reads).toBe(1);
  });

  test('a read that ends after the version moved is answered but not kept; a request after the move reads anew', async () => {
    const cache = new RosterCache(100);
    let version = 1;
    const d = deferred();
    const early = cache.getAsync(
      () => version,
      'x',
      '1',
      () => d.promise,
    );
    version = 2;
    let reads = 0;
    const late = cache.getAsync(
      () => version,
      'x',
      '1',
      async () => ((reads += 1), roster(3)),
    );
    d.resolve(roster(2));
    expect(await early).toHaveLength(2);
    expect(await late).toHaveLength(3);
    expect(
      await cache.getAsync(
        () => version,
        'x',
        '1',
        async () => ((reads += 1), roster(4)),
      ),
    ).toHaveLength(3);
    expect(reads).toBe(1);
  });

  test('with no version (not watching) every request reads and nothing is kept', async () => {
    const cache = new RosterCache(100);
    const a = await cache.getAsync(
      () => null,
      'x',
      '1',
      async () => roster(1),
    );
    const b = await cache.getAsync(
      () => null,
      'x',
      '1',
      async () => roster(1),
    );
    expect(a).not.toBe(b);
    expect(
      await cache.getAsync(
        () => 1,
        'x',
        '1',
        async () => roster(5),
      ),
    ).toHaveLength(5);
  });
});
