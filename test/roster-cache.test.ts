import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { compileAnswerWriter, KeptBytes } from '../src/bindings/answers';
import { findEndpoint } from '../src/contract/operations';
import { openSqliteStore, type SqliteStore } from '../src/store/sqlite';
import { RosterCache } from '../src/store/roster-cache';
import type { StudentInfo } from '../src/contract/types';

/** The SQLite store keeps rosters it has read only while nobody has changed the data. */

const SCHOOL = 'http://cache.school.example';
let dir: string;
let a: SqliteStore;
let b: SqliteStore;

async function addStudent(store: SqliteStore, id: string, name: string): Promise<void> {
  const session = await store.beginImport();
  await session.stageStudents([{ school_base_url: SCHOOL, id_student: id, fullName: name, id_device: '', ShowActive: '1', line: 1 }]);
  await session.stageDevices([]);
  await session.commit(false);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'roster-cache-'));
  a = openSqliteStore(join(dir, 'x.db'));
  b = openSqliteStore(join(dir, 'x.db'));
});
afterEach(async () => {
  await a.close();
  await b.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a roster read again is the same frozen roster, until another connection commits', async () => {
  await addStudent(a, '1', 'One');
  const first = await a.studentsOf(SCHOOL, '1');
  expect(first.map((s) => s.fullName)).toEqual(['One']);
  expect(await a.studentsOf(SCHOOL, '1')).toBe(first);
  expect(Object.isFrozen(first) && Object.isFrozen(first[0])).toBe(true);

  await addStudent(b, '2', 'Two');
  expect((await a.studentsOf(SCHOOL, '1')).map((s) => s.fullName)).toEqual(['One', 'Two']);
});

test('a write by plain SQL from another process is seen too', async () => {
  await addStudent(a, '1', 'One');
  await a.studentsOf(SCHOOL, '1');
  const other = new Database(join(dir, 'x.db'));
  other.prepare('UPDATE students SET "fullName" = ? WHERE id_student = ?').run('Renamed', '1');
  other.close();
  expect((await a.studentsOf(SCHOOL, '1'))[0].fullName).toBe('Renamed');
});

test("the store's own import is seen at once", async () => {
  await addStudent(a, '1', 'One');
  await a.studentsOf(SCHOOL, '1');
  await addStudent(a, '2', 'Two');
  expect(await a.studentsOf(SCHOOL, '1')).toHaveLength(2);
});

test('the cache holds at most its number of students, the least recently used going first', () => {
  const cache = new RosterCache(3);
  const roster = (n: number) => () =>
    Array.from({ length: n }, (_, i): StudentInfo => ({ id_student: String(i), fullName: '', id_device: '', ShowActive: '1' }));
  const x = cache.get(1, 'x', '1', roster(2));
  const y = cache.get(1, 'y', '1', roster(1));
  expect(cache.get(1, 'x', '1', roster(2))).toBe(x);
  cache.get(1, 'z', '1', roster(1)); // 4 students: y, the least recently used, goes
  expect(cache.get(1, 'x', '1', roster(2))).toBe(x);
  expect(cache.get(1, 'y', '1', roster(1))).not.toBe(y);
  expect(cache.get(2, 'x', '1', roster(2))).not.toBe(x);
});

test('the XML kept for a frozen roster is the XML written for an equal fresh one', () => {
  const op = findEndpoint('NotificationNotes')!.operations[0];
  const writer = compileAnswerWriter(op, 'http://tempuri.org/');
  const rows = (): StudentInfo[] => [
    { id_student: '7', fullName: 'A & <B>', id_device: '', ShowActive: '1' },
    { id_student: '8', fullName: 'زينب', id_device: 'dev-8', ShowActive: '1' },
  ];
  const frozen = Object.freeze(rows()) as StudentInfo[];
  for (const form of ['soap', 'http'] as const) {
    expect(writer[form](frozen)).toBe(writer[form](rows()));
    expect(writer[form](frozen)).toBe(writer[form](frozen));
  }
  expect(writer.http(rows())).toContain('<fullName>A &amp; &lt;B&gt;</fullName>\r\n    <id_device />');
});

test('the bytes of an answer to a frozen result are kept; any other result is rendered each time', () => {
  const kept = new KeptBytes();
  const render = jest.fn(() => '<a>زينب</a>');
  const frozen = Object.freeze([]) as unknown as StudentInfo[];
  const first = kept.of(frozen, render);
  expect(Buffer.isBuffer(first) && first.equals(Buffer.from('<a>زينب</a>'))).toBe(true);
  expect(kept.of(frozen, render)).toBe(first);
  expect(render).toHaveBeenCalledTimes(1);
  expect(kept.of([], render)).toBe('<a>زينب</a>');
  expect(kept.of('token', render)).toBe('<a>زينب</a>');
  expect(render).toHaveBeenCalledTimes(3);
});
