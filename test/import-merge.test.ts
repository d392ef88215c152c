import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { main, type ImportIo } from '../scripts/import';
import { type ImportReport, ImportStoppedError, importFiles, type ImportSource } from '../src/store/import';
import { SqliteStore } from '../src/store/sqlite';
import { MERGE_PACING, type MergePacing } from '../src/store/sqlite-import';
import { HEADER as ROSTER_HEADER, schoolStates, type SchoolState, tally, twoVersions } from './helpers/rosters';

/**
 * SQLite's import merges in short batches, each its own transaction (src/store/sqlite-import.ts), so
 * that the service's writers never wait long for the file's lock. These tests hold it to what the
 * one-transaction merge gave: the same tables, --replace removing exactly the absent students, and
 * an import stopped part way completed by running it again.
 */

const HEADER = 'school_base_url,id_student,fullName,id_device,ShowActive';
/** Batches of a few rows: many boundaries, some inside a school, in a tiny data set. */
const TINY: MergePacing = { firstBatch: 3, minBatch: 2, maxBatch: 5, targetMs: 20, pauseMs: 2 };
/** The whole of each table in one batch: the one-transaction merge. */
const WHOLE: MergePacing = { ...MERGE_PACING, firstBatch: 1e9, minBatch: 1e9, maxBatch: 1e9 };

const csv = (name: string, lines: string[]): ImportSource => ({
  name,
  async *read() {
    yield Buffer.from(`${lines.join('\n')}\n`);
  },
});

// Keys whose text order is not their number order ('10' < '9'), and a school whose name extends another's.
const SCHOOLS = ['http://a.example', 'http://a.example.more', 'http://c.example'];
const first = {
  students: SCHOOLS.flatMap((s, k) => Array.from({ length: 12 }, (_, i) => `${s},${i + 1},Student ${k}-${i + 1},d${i},${i % 2}`)),
  devices: Array.from({ length: 20 }, (_, i) => `d${i},token ${i}`),
};
// --replace for the first two schools: school a keeps 5..12 (renamed) and gains 13..40, school
// a.example.more keeps only 1 and 10; school c is not in the file and is left alone.
const second = {
  students: [
    ...Array.from({ length: 36 }, (_, i) => `${SCHOOLS[0]},${i + 5},"Renamed, ${i + 5}",d${i % 30},1`),
    `${SCHOOLS[1]},10,Kept ten,d10,0`,
    `${SCHOOLS[1]},1,Kept one,d1,1`,
  ],
  devices: Array.from({ length: 21 }, (_, i) => `d${i + 10},new token ${i + 10}`),
};

let dir: string;
const stores: SqliteStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'import-merge-'));
});

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(name: string): SqliteStore {
  const store = new SqliteStore(join(dir, name));
  stores.push(store);
  return store;
}

const load = (
  store: SqliteStore,
  data: { students: string[]; devices: string[] },
  replace: boolean,
  pacing: MergePacing,
): Promise<ImportReport> =>
  importFiles(
    { students: csv('s.csv', [HEADER, ...data.students]), devices: csv('d.csv', ['id_device,token', ...data.devices]) },
    { delimiter: ',', replace },
    () => store.beginImport(pacing),
  );

/** The tables as another connection reads them. */
function dump(store: SqliteStore): { students: unknown[]; devices: unknown[] } {
  const db = new Database(store.location, { readonly: true });
  try {
    return {
      students: db.prepare('SELECT * FROM students ORDER BY school_base_url, id_student').all(),
      devices: db.prepare('SELECT * FROM devices ORDER BY id_device').all(),
    };
  } finally {
    db.close();
  }
}

/** How many commits another connection sees while `work` runs (PRAGMA data_version moves at each). */
async function commitsSeen(path: string, work: () => Promise<unknown>): Promise<number> {
  const db = new Database(path, { readonly: true });
  const version = db.prepare('PRAGMA data_version').pluck();
  let last = version.get();
  let seen = 0;
  const timer = setInterval(() => {
    const now = version.get();
    if (now !== last) seen += 1;
    last = now;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
    db.close();
  }
  return seen;
}

test('a merge in many small batches leaves the tables as one batch does, --replace removing exactly the absent students', async () => {
  const batched = open('batched.db');
  const whole = open('whole.db');
  expect(await load(batched, first, false, TINY)).toMatchObject({ students: 36, devices: 20, removed: 0 });
  expect(await load(whole, first, false, WHOLE)).toMatchObject({ students: 36, devices: 20, removed: 0 });

  let report: ImportReport | undefined;
  const commits = await commitsSeen(batched.location, async () => (report = await load(batched, second, true, TINY)));
  // 21 devices in batches of at most 5, then each of the file's two schools (36 and 2 students, 14
  // removals) whole in a transaction of its own: a school is never cut, however small the batches.
  expect(commits).toBeGreaterThanOrEqual(7);
  const wholeReport = await load(whole, second, true, WHOLE);
  expect(report).toEqual(wholeReport);
  expect(report).toMatchObject({ students: 38, devices: 21, removed: 14 });
  expect(dump(batched)).toEqual(dump(whole));

  const { students, devices } = dump(batched) as { students: Record<string, string>[]; devices: Record<string, string>[] };
  const of = (school: string) => students.filter((s) => s.school_base_url === school);
  expect(
    of(SCHOOLS[0]!)
      .map((s) => Number(s.id_student))
      .sort((a, b) => a - b),
  ).toEqual(Array.from({ length: 36 }, (_, i) => i + 5));
  expect(of(SCHOOLS[0]!).every((s) => s.fullName === `Renamed, ${s.id_student}`)).toBe(true);
  expect(of(SCHOOLS[1]!).map((s) => `${s.id_student} ${s.fullName}`)).toEqual(['1 Kept one', '10 Kept ten']);
  expect(of(SCHOOLS[2]!)).toHaveLength(12);
  expect(devices).toHaveLength(31);
  expect(devices.find((d) => d.id_device === 'd3')?.token).toBe('token 3');
  expect(devices.find((d) => d.id_device === 'd30')?.token).toBe('new token 30');
});

test('an import stopped part way keeps what it merged, says to run it again, and running it again completes it', async () => {
  const reference = open('reference.db');
  await load(reference, first, false, WHOLE);
  await load(reference, second, true, WHOLE);

  const store = open('stopped.db');
  await load(store, first, false, TINY);
  // A failure in the middle of the students (the disk filling, the process killed): school a, id 30.
  const db = new Database(store.location);
  db.exec(`CREATE TRIGGER fail BEFORE INSERT ON students WHEN NEW.id_student = '30'
    BEGIN SELECT RAISE(ABORT, 'simulated failure'); END`);
  const stopped = await load(store, second, true, TINY).catch((err: unknown) => err);
  expect(stopped).toBeInstanceOf(ImportStoppedError);
  expect((stopped as Error).message).toBe(
    'the import stopped part way (simulated failure); run the same import again: it is safe to repeat and completes it',
  );
  // Batches commit one by one: the devices all merged; school a, whose batch failed, all as it was
  // (none renamed, none removed: a school is switched whole or not at all), and the schools after it too.
  const partial = dump(store) as { students: Record<string, string>[]; devices: Record<string, string>[] };
  expect(partial.devices).toEqual(dump(reference).devices);
  expect(partial.students.filter((s) => s.fullName.startsWith('Renamed') || s.fullName.startsWith('Kept'))).toEqual([]);
  expect(
    partial.students
      .filter((s) => s.school_base_url === SCHOOLS[0])
      .map((s) => s.id_student)
      .sort((a, b) => Number(a) - Number(b)),
  ).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));

  // Through the command, as an operator meets it, then again once the cause is gone.
  const files = { students: join(dir, 's.csv'), devices: join(dir, 'd.csv') };
  writeFileSync(files.students, `${[HEADER, ...second.students].join('\n')}\n`);
  writeFileSync(files.devices, `${['id_device,token', ...second.devices].join('\n')}\n`);
  const err: string[] = [];
  const io: ImportIo = { out: () => undefined, err: (l) => err.push(l), env: { SQLITE_PATH: store.location }, cwd: dir };
  const args = ['--students', files.students, '--devices', files.devices, '--replace'];
  expect(await main(args, io)).toBe(1);
  expect(err).toEqual([
    `error: import into ${store.location}: the import stopped part way (simulated failure); run the same import again: it is safe to repeat and completes it`,
  ]);
  db.exec('DROP TRIGGER fail');
  db.close();
  expect(await main(args, io)).toBe(0);
  expect(dump(store)).toEqual(dump(reference));
  // And once more: nothing changes.
  expect(await main(args, io)).toBe(0);
  expect(dump(store)).toEqual(dump(reference));
});

test("bad input still writes nothing, and the import's connection leaves no staging behind", async () => {
  const store = open('bad.db');
  await load(store, first, false, TINY);
  const before = dump(store);
  const bad = { students: [...second.students, `${SCHOOLS[0]},5,Twice,d1,1`], devices: second.devices };
  await expect(load(store, bad, true, TINY)).rejects.toThrow('duplicate id_student "5"');
  expect(dump(store)).toEqual(before);
  // The store's own connection can import again at once (a ':memory:' store shares it with the import).
  const memory = new SqliteStore(':memory:');
  stores.push(memory);
  await expect(load(memory, bad, false, TINY)).rejects.toThrow('duplicate');
  expect(await load(memory, first, false, TINY)).toMatchObject({ students: 36, devices: 20 });
  expect(await memory.counts()).toEqual({ students: 36, devices: 20 });
});

// Issue 30, rule 7: a school's roster switches whole. Batches smaller than a school (TINY) used to
// cut schools; now each batch holds whole schools, so every state a reader can see between two
// batches, and every state a failure (or a kill) between them leaves, has each school all old or all new.
describe('a school switches whole', () => {
  const data = twoVersions(6, 8);
  const loadStudents = (store: SqliteStore, lines: string[], replace: boolean, pacing: MergePacing) =>
    importFiles({ students: csv('s.csv', [ROSTER_HEADER, ...lines]) }, { delimiter: ',', replace }, () => store.beginImport(pacing));
  const statesOf = async (store: SqliteStore) => schoolStates(data, (s, a) => store.studentsOf(s, a));

  test('after every batch, a reader on another connection (through its roster cache) sees each school all old or all new, never old again once new', async () => {
    const store = open('rosters.db');
    const service = open('rosters.db');
    await loadStudents(store, data.old, false, WHOLE);
    const seen: ReturnType<typeof tally>[] = [];
    let wentBack = 0;
    const last = new Map<string, SchoolState>();
    const look = async () => {
      const states = await statesOf(service);
      seen.push(tally(states));
      for (const [school, state] of states) {
        if (last.get(school) === 'new' && state !== 'new') wentBack += 1;
        last.set(school, state);
      }
    };
    await look(); // the cache now holds every old roster
    await loadStudents(store, data.new, true, { ...TINY, afterBatch: look });
    await look();
    expect(seen.filter((t) => t.mixed > 0)).toEqual([]);
    expect(wentBack).toBe(0);
    // Batches of at most 5 rows, schools of 8: one school per batch, each seen beside the others.
    expect(seen.map((t) => t.new)).toEqual([0, 1, 2, 3, 4, 5, 6, 6]);
    expect(seen.at(-1)).toEqual({ old: 0, new: 6, mixed: 0 });
  });

  test.each([1, 2, 4])('an import failing after batch %i leaves every school whole; running it again completes it', async (failAt) => {
    const reference = open('reference.db');
    await loadStudents(reference, data.new, false, WHOLE);
    const store = open('failed.db');
    await loadStudents(store, data.old, false, WHOLE);
    let batches = 0;
    const failing: MergePacing = {
      ...TINY,
      afterBatch: () => {
        if ((batches += 1) === failAt) throw new Error('killed between two batches');
      },
    };
    const stopped = await loadStudents(store, data.new, true, failing).catch((err: unknown) => err);
    expect(stopped).toBeInstanceOf(ImportStoppedError);
    expect(tally(await statesOf(store))).toEqual({ old: 6 - failAt, new: failAt, mixed: 0 });
    expect(await loadStudents(store, data.new, true, TINY)).toMatchObject({ students: 48, removed: 2 * (6 - failAt) });
    expect(tally(await statesOf(store))).toEqual({ old: 0, new: 6, mixed: 0 });
    expect(dump(store)).toEqual(dump(reference));
  });
});
