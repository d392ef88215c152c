import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { COMMAND, main, type ImportIo } from '../scripts/import';
import { helpText } from '../src/basics/command-line';
import { type CsvProblem, type CsvRecord, readCsv } from '../src/store/csv';
import { fileSource, ImportError, importFiles, type ImportReport, type ImportSource } from '../src/store/import';
import { openStore } from '../src/store/open';
import type { Store } from '../src/store/store';
import { TEST_STORE, testDatabase, type TestDatabase } from './helpers/postgres';
import { HEADER, rosterStates, schoolStates, type SchoolState, spawnImport, tally, type TwoVersions, twoVersions } from './helpers/rosters';

const FIXTURES = join(__dirname, 'fixtures', 'data');
const STUDENTS_CSV = join(FIXTURES, 'students.csv');
const DEVICES_CSV = join(FIXTURES, 'devices.csv');
const STUDENTS_HEADER = 'school_base_url,id_student,fullName,id_device,ShowActive';
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Text as an import source, delivered in small chunks so that records cross chunk boundaries. */
const text = (name: string, content: string | Buffer, chunk = 7): ImportSource => ({
  name,
  async *read() {
    const bytes = Buffer.from(content);
    for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
  },
});

/** The whole file through the streaming reader: the records, the problems, and the last line read. */
async function parseCsv(content: string | Buffer, chunk = 5): Promise<{ records: CsvRecord[]; problems: CsvProblem[] }> {
  const records: CsvRecord[] = [];
  const problems: CsvProblem[] = [];
  await readCsv(
    text('t.csv', content, chunk).read(),
    ',',
    async (batch) => void records.push(...batch),
    (p) => problems.push(p),
  );
  return { records, problems };
}

let dir: string;
let dbPath: string;
let pg: TestDatabase | undefined;
let store: Store | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'import-test-'));
  dbPath = join(dir, 'data', 'student-info.db');
  if (TEST_STORE === 'postgres') pg = await testDatabase();
});

afterEach(async () => {
  await store?.close();
  store = undefined;
  await pg?.drop();
  pg = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The settings that point the import at this test's store. */
const storeEnv = (): Record<string, string> => (pg === undefined ? { SQLITE_PATH: dbPath } : { DATABASE_URL: pg.url });

async function runImport(students?: ImportSource, devices?: ImportSource, replace = false): Promise<ImportReport> {
  return importFiles({ students, devices }, { delimiter: ',', replace }, async () => {
    store ??= await openStore({ sqlitePath: dbPath, databaseUrl: pg?.url ?? null, databasePoolSize: 2, databaseStatementTimeoutMs: 5000 });
    return store.beginImport();
  });
}

/** The ImportError's list, or a failure if the import did not throw one. */
async function importErrors(students?: ImportSource, devices?: ImportSource): Promise<readonly string[]> {
  try {
    await runImport(students, devices);
  } catch (err) {
    if (err instanceof ImportError) return err.errors;
    throw err;
  }
  throw new Error('expected an ImportError');
}

/** Whole database content, read with a connection of its own, for comparing before and after. */
async function dump(): Promise<{ students: Record<string, string>[]; devices: Record<string, string>[] }> {
  const sql = {
    students: 'SELECT * FROM students ORDER BY school_base_url, id_student',
    devices: 'SELECT * FROM devices ORDER BY id_device',
  };
  if (pg !== undefined) return { students: await pg.query(sql.students), devices: await pg.query(sql.devices) };
  const db = new Database(dbPath, { readonly: true });
  try {
    return {
      students: db.prepare(sql.students).all() as Record<string, string>[],
      devices: db.prepare(sql.devices).all() as Record<string, string>[],
    };
  } finally {
    db.close();
  }
}

describe('the CSV reader', () => {
  test('reads quoted fields, doubled quotes, embedded line breaks, CRLF and a BOM, across chunk boundaries', async () => {
    const content = '\ufeffa,b,c\r\n1,"x, ""y""",\r\n2,"multi\nline\r\nvalue",z\n3,,""\n';
    for (const chunk of [1, 3, 64]) {
      const { records, problems } = await parseCsv(content, chunk);
      expect(problems).toEqual([]);
      expect(records).toEqual([
        { line: 1, fields: ['a', 'b', 'c'] },
        { line: 2, fields: ['1', 'x, "y"', ''] },
        { line: 3, fields: ['2', 'multi\nline\r\nvalue', 'z'] },
        { line: 6, fields: ['3', '', ''] },
      ]);
    }
  });

  test('a file without a final line break, and trailing blank lines, are fine', async () => {
    expect((await parseCsv('a,b\n1,2')).records).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['1', '2'] },
    ]);
    const trailing = await parseCsv('a,b\r\n1,2\r\n\r\n\n');
    expect(trailing.problems).toEqual([]);
    expect(trailing.records).toHaveLength(2);
  });

  test('an empty file has no records and no problems', async () => {
    expect(await parseCsv('')).toEqual({ records: [], problems: [] });
    expect(await parseCsv('\ufeff\n')).toEqual({ records: [], problems: [] });
  });

  test('reports each malformed record at the physical line where it starts, and carries on', async () => {
    const content = [
      'a,b,c',
      '1,2,3',
      '1,x"y,3', // 3: stray quote
      '"q"x,2,3', // 4: junk after the closing quote
      '', // 5: empty line in the middle
      '"multi', // 6: a good record spanning lines 6-7
      'line",2,3',
      '9,8,7', // 8
      '1,"never closed,3', // 9
      '4,5,6',
    ].join('\n');
    const { records, problems } = await parseCsv(content);
    expect(problems).toEqual([
      { line: 3, reason: 'quote in unquoted field 2 (quote the whole field and double the quote)' },
      { line: 4, reason: 'unexpected character after closing quote in field 1' },
      { line: 5, reason: 'empty line' },
      { line: 9, reason: 'unterminated quoted field (no closing quote before end of file)' },
    ]);
    expect(records.map((r) => r.line)).toEqual([1, 2, 6, 8]);
    expect(records[2]!.fields).toEqual(['multi\nline', '2', '3']);
  });

  test('a bare carriage return is an error', async () => {
    expect((await parseCsv('a,b\n1,x\ry\n')).problems).toEqual([{ line: 2, reason: 'carriage return not followed by a line feed' }]);
  });

  test('bytes that are not UTF-8 are reported on their own line, and the rest is still read', async () => {
    const content = Buffer.concat([Buffer.from('a,b\n1,caf'), Buffer.from([0xe9]), Buffer.from('\n2,ok\n3,x"\n')]);
    for (const chunk of [2, 64]) {
      const { records, problems } = await parseCsv(content, chunk);
      expect(problems).toEqual([
        { line: 2, reason: 'not valid UTF-8 text (save the file as UTF-8)' },
        { line: 4, reason: 'quote in unquoted field 2 (quote the whole field and double the quote)' },
      ]);
      expect(records.map((r) => r.line)).toEqual([1, 2, 3]);
    }
  });

  test('memory stays bounded: an unclosed quote or an endless line is an error, not a growing buffer', async () => {
    const huge = 'x'.repeat(1100 * 1024);
    const manyLines = `${'y'.repeat(1023)}\n`.repeat(1100);
    expect((await parseCsv(`a,b\n1,"${manyLines}`, 65536)).problems).toEqual([
      { line: 2, reason: 'quoted field longer than 1048576 characters (is a closing quote missing?)' },
    ]);
    const endless = await parseCsv(`a,b\n1,${huge}\n2,3\n`, 65536);
    expect(endless.problems).toEqual([{ line: 2, reason: 'line longer than 1048576 bytes' }]);
    expect(endless.records.map((r) => r.line)).toEqual([1, 3]);
  });
});

describe('importFiles', () => {
  test('the reference files import completely and exactly', async () => {
    const report = await runImport(fileSource('students.csv', STUDENTS_CSV), fileSource('devices.csv', DEVICES_CSV));
    // Every line after the header is one record in these files (no embedded line breaks).
    const lines = (path: string) => readFileSync(path, 'utf8').trimEnd().split('\n').length - 1;
    expect(report).toEqual({ students: lines(STUDENTS_CSV), devices: lines(DEVICES_CSV), removed: 0, warnings: [], warningCount: 0 });
    expect(report.students).toBe(506);
    expect(report.devices).toBe(5);

    const { students, devices } = await dump();
    const byId = new Map(students.map((s) => [s.id_student, s]));
    expect(byId.get('1004')).toEqual({
      school_base_url: 'http://alnoor.school.example',
      id_student: '1004',
      fullName: 'سارة محمد & <co>',
      id_device: 'dev-1004',
      ShowActive: '1',
    });
    expect(byId.get('2001')?.id_device).toBe('');
    expect(byId.get('3001')?.school_base_url).toBe('http://مدرسة.example');
    expect(byId.get('50007')?.fullName).toBe('Student 7 "quoted" \'apos\'');
    expect(byId.get('1003')?.ShowActive).toBe('0');

    expect(devices).toContainEqual({ id_device: 'dev-1004', token: 'tok<&>"quoted"' });
    expect(devices).toContainEqual({ id_device: 'dev-3001', token: 'رمز-3001' });
    expect(devices).toContainEqual({ id_device: 'dev-empty', token: '' });
  });

  test('either file may be omitted', async () => {
    expect(await runImport(undefined, fileSource('d.csv', DEVICES_CSV))).toMatchObject({ students: 0, devices: 5 });
    expect(await runImport(fileSource('s.csv', STUDENTS_CSV))).toMatchObject({ students: 506, devices: 0 });
  });

  test('collects every row problem across both files as file:line: reason, in line order', async () => {
    const students = text(
      's.csv',
      [
        STUDENTS_HEADER,
        'http://a.example,1,Ok,d1,1',
        ',2,No school,d2,1',
        'http://a.example,,No id,d3,1',
        'http://a.example,4,Two chars,d4,10',
        'http://a.example,5,No char,d5,',
        'http://a.example,1,Again,d6,1',
        'http://b.example,1,Other school is fine,d7,1',
        'http://a.example,8,"Bad"quote,d8,1',
        'http://a.example,9,Short',
        'http://a.example,10,Nul\0,d10,1',
      ].join('\r\n'),
    );
    const devices = text('d.csv', 'id_device,token\nd1,t1\n,t2\nd1,t3\nd4,"\n');
    expect(await importErrors(students, devices)).toEqual([
      's.csv:3: school_base_url is empty',
      's.csv:4: id_student is empty',
      's.csv:5: ShowActive must be exactly one character, found "10"',
      's.csv:6: ShowActive must be exactly one character, found ""',
      's.csv:7: duplicate id_student "1" for school "http://a.example" (first on line 2)',
      's.csv:9: unexpected character after closing quote in field 3',
      's.csv:10: expected 5 fields, found 3',
      's.csv:11: fullName contains a NUL character',
      'd.csv:3: id_device is empty',
      'd.csv:4: duplicate id_device "d1" (first on line 2)',
      'd.csv:5: unterminated quoted field (no closing quote before end of file)',
    ]);
    expect(await dump()).toEqual({ students: [], devices: [] });
  });

  test('a bad file lists the first 20 errors in line order and counts them all', async () => {
    const rows = Array.from({ length: 30 }, (_, i) => `http://a.example,${i % 2 === 0 ? i : 0},n,d,${i % 2 === 0 ? 'xx' : '1'}`);
    let error: ImportError | undefined;
    try {
      await runImport(text('s.csv', [STUDENTS_HEADER, ...rows].join('\n'), 4096));
    } catch (err) {
      error = err as ImportError;
    }
    // 15 bad ShowActive values on even rows, 14 duplicates of id 0 on odd rows after the first.
    expect(error?.total).toBe(29);
    expect(error?.errors).toHaveLength(20);
    expect(error?.errors[0]).toBe('s.csv:2: ShowActive must be exactly one character, found "xx"');
    expect(error?.errors[1]).toBe('s.csv:4: ShowActive must be exactly one character, found "xx"');
    expect(error?.errors[2]).toBe('s.csv:5: duplicate id_student "0" for school "http://a.example" (first on line 3)');
    const lines = error!.errors.map((e) => Number(e.split(':')[1]));
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
  });

  test('ShowActive is one UTF-16 unit, like System.Char: Arabic letters pass, astral characters do not', async () => {
    const file = (c: string) => text('s.csv', `${STUDENTS_HEADER}\nhttp://a.example,1,n,d,${c}\n`);
    expect(await importErrors(file('😀'))).toEqual(['s.csv:2: ShowActive must be exactly one character, found "😀"']);
    await runImport(file('ن'));
    expect((await dump()).students[0]?.ShowActive).toBe('ن');
  });

  test('headers must match exactly', async () => {
    const withHeader = (header: string) => text('s.csv', `${header}\nhttp://a.example,1,n,d,1\n`);
    const expected = `s.csv:1: header must be "${STUDENTS_HEADER}"`;
    for (const bad of [
      'school_base_url,id_student,fullname,id_device,ShowActive',
      'id_student,school_base_url,fullName,id_device,ShowActive',
      'school_base_url,id_student,fullName,id_device',
      'school_base_url, id_student,fullName,id_device,ShowActive',
    ]) {
      expect(await importErrors(withHeader(bad))).toEqual([`${expected}, found "${bad}"`]);
    }
    expect(await importErrors(undefined, text('d.csv', 'id_device,token,extra\n'))).toEqual([
      'd.csv:1: header must be "id_device,token", found "id_device,token,extra"',
    ]);
    expect(await importErrors(text('s.csv', ''))).toEqual(['s.csv:1: file is empty; a header row is required']);
    expect(await importErrors(text('s.csv', `\n${STUDENTS_HEADER}\n`))).toEqual([
      's.csv:1: empty line',
      's.csv:1: a header row is required on line 1',
    ]);
    // A BOM before the header, as Excel writes it, is not part of the first column name.
    expect(await runImport(text('s.csv', `\ufeff${STUDENTS_HEADER}\r\nhttp://a.example,1,n,d,1\r\n`))).toMatchObject({ students: 1 });
  });

  test('a ;-separated export is refused with the option to use, and read with --delimiter', async () => {
    const european = `${STUDENTS_HEADER.split(',').join(';')}\nhttp://a.example;1;"Nour; Ali";d;1\n`;
    expect(await importErrors(text('s.csv', european))).toEqual([
      's.csv:1: the columns are separated by ";", not "," (European Excel saves CSV so): run the import with --delimiter ";"',
    ]);
    const report = await importFiles({ students: text('s.csv', european) }, { delimiter: ';', replace: false }, async () => {
      store = await openStore({ sqlitePath: dbPath, databaseUrl: pg?.url ?? null, databasePoolSize: 2, databaseStatementTimeoutMs: 5000 });
      return store.beginImport();
    });
    expect(report.students).toBe(1);
    expect((await dump()).students[0]?.fullName).toBe('Nour; Ali');
  });

  test('values with leading or trailing spaces are kept, with a warning', async () => {
    const report = await runImport(
      text('s.csv', `${STUDENTS_HEADER}\nhttp://a.example ,1,  Padded name  ,d,1\nhttp://a.example,2,n, d2,1\n`),
    );
    expect(report.warnings).toEqual([
      's.csv:2: warning: school_base_url "http://a.example " has leading or trailing spaces; it is kept as is and will never match a request without them',
      's.csv:3: warning: id_device " d2" has leading or trailing spaces; it is kept as is and will never match a request without them',
    ]);
    expect((await dump()).students.map((s) => [s.school_base_url, s.fullName])).toEqual([
      ['http://a.example', 'n'],
      ['http://a.example ', '  Padded name  '],
    ]);
  });

  test('--replace makes the file the whole truth for the schools it names, and counts the removed', async () => {
    await runImport(
      text(
        's.csv',
        `${STUDENTS_HEADER}\nhttp://a.example,1,n,d,1\nhttp://a.example,2,n,d,1\nhttp://a.example,3,n,d,1\nhttp://b.example,1,n,d,1\n`,
      ),
    );
    const report = await runImport(
      text('s.csv', `${STUDENTS_HEADER}\nhttp://a.example,2,Renamed,d,1\nhttp://a.example,4,New,d,1\n`),
      undefined,
      true,
    );
    expect(report).toMatchObject({ students: 2, removed: 2 });
    expect((await dump()).students.map((s) => `${s.school_base_url} ${s.id_student} ${s.fullName}`)).toEqual([
      'http://a.example 2 Renamed',
      'http://a.example 4 New',
      'http://b.example 1 n',
    ]);
  });
});

describe('import CLI', () => {
  let out: string[];
  let err: string[];
  let io: ImportIo;

  beforeEach(() => {
    out = [];
    err = [];
    io = { out: (l) => out.push(l), err: (l) => err.push(l), env: storeEnv(), cwd: dir };
  });

  const write = (name: string, content: string | Buffer): string => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  /** Where the CLI says it imported into: the file, or the URL without a password. */
  const location = () => (pg === undefined ? dbPath : pg.url);
  const imported = (counts: string) => new RegExp(`^imported ${counts} into ${escapeRe(location())} in \\d+\\.\\d s$`);

  test('imports the reference files and reports the counts and the time taken', async () => {
    expect(await main(['--students', STUDENTS_CSV, '--devices', DEVICES_CSV], io)).toBe(0);
    expect(out).toEqual([expect.stringMatching(imported('506 students, 5 devices'))]);
    expect(err).toEqual([]);
    expect((await dump()).students.filter((s) => s.school_base_url === 'http://big.school.example')).toHaveLength(500);
  });

  test('relative paths are relative to the directory the command was run from', async () => {
    io.cwd = FIXTURES;
    expect(await main(['--devices', 'devices.csv'], io)).toBe(0);
    io.cwd = dir;
    expect(await main(['--devices', relative(dir, DEVICES_CSV)], io)).toBe(0);
    expect(await main(['--devices', 'devices.csv'], io)).toBe(2);
    expect(err).toEqual(['error: cannot read devices.csv: no such file']);
  });

  test('accepts --flag=value and a single file; re-importing replaces, it does not duplicate', async () => {
    expect(await main([`--devices=${DEVICES_CSV}`], io)).toBe(0);
    expect(await main([`--devices=${DEVICES_CSV}`], io)).toBe(0);
    expect(out).toEqual([
      expect.stringMatching(imported('0 students, 5 devices')),
      expect.stringMatching(imported('0 students, 5 devices')),
    ]);
    const { students, devices } = await dump();
    expect(students).toEqual([]);
    expect(devices).toHaveLength(5);
    expect(devices).toContainEqual({ id_device: 'dev-empty', token: '' });
  });

  test('--replace reports the students it removed', async () => {
    expect(await main(['--students', STUDENTS_CSV], io)).toBe(0);
    const fewer = write(
      'fewer.csv',
      readFileSync(STUDENTS_CSV, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('http://big.school.example,5000'))
        .join('\n'),
    );
    expect(await main(['--students', fewer, '--replace'], io)).toBe(0);
    expect(out[1]).toMatch(imported('496 students, 0 devices, removed 10 students absent from the file'));
  });

  test('bad input prints every error, writes nothing and exits 1', async () => {
    expect(await main(['--students', STUDENTS_CSV, '--devices', DEVICES_CSV], io)).toBe(0);
    const before = await dump();
    out.length = 0;

    const students = write(
      'students.csv',
      `${STUDENTS_HEADER}\nhttp://alnoor.school.example,1001,Changed,dev-x,1\nhttp://alnoor.school.example,1002,Bad,dev-y,yes\n`,
    );
    const devices = write('devices.csv', 'id_device,token\ndev-1001,changed\ndev-1001,again\n');
    expect(await main(['--students', students, '--devices', devices], io)).toBe(1);
    expect(out).toEqual([]);
    expect(err).toEqual([
      `${students}:3: ShowActive must be exactly one character, found "yes"`,
      `${devices}:3: duplicate id_device "dev-1001" (first on line 2)`,
      'nothing was written',
    ]);
    expect(await dump()).toEqual(before);
  });

  test('more than 20 errors: the first 20 and the count', async () => {
    const rows = Array.from({ length: 25 }, (_, i) => `http://a.example,${i},n,d,no`);
    const bad = write('bad.csv', [STUDENTS_HEADER, ...rows].join('\n'));
    expect(await main(['--students', 'bad.csv'], io)).toBe(1);
    expect(err).toHaveLength(22);
    expect(err[0]).toBe('bad.csv:2: ShowActive must be exactly one character, found "no"');
    expect(err.slice(20)).toEqual(['... 25 errors in all', 'nothing was written']);
    expect(bad).toBe(join(dir, 'bad.csv'));
  });

  test('bad input on a fresh setup does not even create the database', async () => {
    const bad = write('bad.csv', 'wrong,header\n');
    expect(await main(['--devices', bad], io)).toBe(1);
    expect(err).toEqual([`${bad}:1: header must be "id_device,token", found "wrong,header"`, 'nothing was written']);
    expect(existsSync(dbPath)).toBe(false);
  });

  test('a file that is not UTF-8 is bad input, named with its line', async () => {
    const latin1 = write('latin1.csv', Buffer.concat([Buffer.from('id_device,token\nd,caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    expect(await main(['--devices', latin1], io)).toBe(1);
    expect(err).toEqual([`${latin1}:2: not valid UTF-8 text (save the file as UTF-8)`, 'nothing was written']);
  });

  test('--delimiter reads a ;-separated file', async () => {
    const european = write('eu.csv', 'id_device;token\nd1;t1\n');
    expect(await main(['--devices', european], io)).toBe(1);
    expect(err[0]).toMatch(/run the import with --delimiter ";"$/);
    expect(await main(['--devices', european, '--delimiter', ';'], io)).toBe(0);
    expect((await dump()).devices).toEqual([{ id_device: 'd1', token: 't1' }]);
  });

  test('--demo loads the demo set', async () => {
    expect(await main(['--demo'], io)).toBe(0);
    expect(out).toEqual([expect.stringMatching(imported('\\d+ students, \\d+ devices'))]);
    const { students, devices } = await dump();
    expect(students.length).toBeGreaterThanOrEqual(8);
    expect(devices.length).toBeGreaterThan(0);
    expect(students.some((s) => /[\u0600-\u06ff]/.test(s.fullName!))).toBe(true);
    expect(students.some((s) => /[&<>"]/.test(s.fullName!))).toBe(true);
    expect(students.some((s) => s.id_device === '')).toBe(true);
    expect(new Set(students.map((s) => s.ShowActive))).toEqual(new Set(['0', '1']));
  });

  test.each([
    [[], 'nothing to import'],
    [['--bogus'], 'unknown option --bogus'],
    [['stray.csv'], 'unexpected argument "stray.csv"'],
    [['--students'], '--students needs a value (FILE.csv)'],
    [['--students', '--devices', 'x.csv'], '--students needs a value (FILE.csv)'],
    [['--students='], '--students needs a value (FILE.csv)'],
    [['--devices', 'a.csv', '--devices', 'b.csv'], '--devices given more than once'],
    [['--demo', '--students', 'a.csv'], '--demo cannot be combined with --students or --devices'],
    [['--replace=yes', '--demo'], '--replace takes no value'],
    [['--demo', '--delimiter', ';;'], '--delimiter must be one character other than a quote or a line break, such as ";"'],
  ])('usage error %j exits 2', async (argv, message) => {
    expect(await main(argv, io)).toBe(2);
    expect(err).toEqual([`error: ${message}`, `usage: ${COMMAND.usage[0]}`]);
    expect(out).toEqual([]);
  });

  test('a missing file is a usage error, reported before any content check', async () => {
    const bad = write('bad.csv', 'wrong\n');
    const missing = join(dir, 'missing.csv');
    expect(await main(['--students', bad, '--devices', missing], io)).toBe(2);
    expect(err).toEqual([`error: cannot read ${missing}: no such file`]);
    expect(await main(['--students', dir], io)).toBe(2);
    expect(err[1]).toBe(`error: cannot read ${dir}: it is a directory`);
  });

  test('--help prints usage and exits 0', async () => {
    expect(await main(['--help'], io)).toBe(0);
    expect(out).toEqual([helpText(COMMAND)]);
    expect(out[0]!.split('\n')[0]).toBe(`usage: ${COMMAND.usage[0]}`);
  });

  test('a configuration error exits 1 with one line', async () => {
    io.env = { SQLITE_PATH: '' };
    expect(await main(['--demo'], io)).toBe(1);
    expect(err).toEqual(['error: SQLITE_PATH must not be empty']);
  });

  test('a store that cannot be opened exits 1 with one line naming the setting', async () => {
    io.env = pg === undefined ? { SQLITE_PATH: dir } : { DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:5432/test' };
    expect(await main(['--devices', DEVICES_CSV], io)).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(
      pg === undefined
        ? new RegExp(`^error: SQLITE_PATH \\(${escapeRe(dir)}\\): `)
        : /^error: DATABASE_URL \(postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:5432\/test\): PostgreSQL refused the login/,
    );
    expect(err[0]).not.toMatch(/secret/);
  });
});

describe('a school switches whole (issue 30, rule 7)', () => {
  const settings = () => ({ sqlitePath: dbPath, databaseUrl: pg?.url ?? null, databasePoolSize: 2, databaseStatementTimeoutMs: 5000 });
  const csvOf = (lines: string[]) => `${[HEADER, ...lines].join('\n')}\n`;
  const states = (reader: Store, data: TwoVersions, schools?: string[]) => schoolStates(data, (s, a) => reader.studentsOf(s, a), schools);

  test('a reader polling every roster during an import sees each roster all old or all new, and the new once it is done', async () => {
    // 40 schools of 30: the merge's first SQLite batch (500 rows) ends inside a school if schools are cut.
    const data = twoVersions(40, 30);
    await runImport(text('old.csv', csvOf(data.old), 1 << 16));
    // Another connection (and roster cache; on PostgreSQL, its own change listener), as a service's.
    const reader = await openStore(settings());
    try {
      const seen: ReturnType<typeof tally>[] = [];
      let wentBack = 0;
      const last = new Map<string, SchoolState>();
      // Each roster is one request's answer: whole, whatever the import does between two of them.
      const look = async (): Promise<void> => {
        const now = await rosterStates(data, (s, a) => reader.studentsOf(s, a));
        seen.push(tally(now));
        for (const [roster, state] of now) {
          // Once answered new, never old again: no stale roster kept from before the switch.
          if (last.get(roster) === 'new' && state !== 'new') wentBack += 1;
          last.set(roster, state);
        }
      };
      await look();
      let importing = true;
      const polling = (async () => {
        while (importing) {
          await look();
          await new Promise((r) => setImmediate(r));
        }
      })();
      await runImport(text('new.csv', csvOf(data.new), 1 << 16), undefined, true).finally(() => (importing = false));
      await polling;
      expect(seen.filter((t) => t.mixed > 0)).toEqual([]);
      expect(wentBack).toBe(0);
      // PostgreSQL's cache learns of the commit by notification, a moment after it.
      for (let i = 0; i < 500 && seen.at(-1)!.new < 2 * data.schools.length; i += 1) {
        await new Promise((r) => setTimeout(r, 10));
        await look();
      }
      expect(seen.at(-1)).toEqual({ old: 0, new: 80, mixed: 0 });
      expect(wentBack).toBe(0);
    } finally {
      await reader.close();
    }
  });

  test('an import killed (SIGKILL) at several points leaves every school whole, and running it again completes it', async () => {
    // Large enough that the merge takes many batches (SQLite) or seconds (PostgreSQL) to reach.
    const data = twoVersions(200, 400);
    await runImport(text('old.csv', csvOf(data.old), 1 << 16));
    const newCsv = join(dir, 'new.csv');
    writeFileSync(newCsv, csvOf(data.new));
    const reader = store!;
    const watcher = pg === undefined ? new Database(dbPath, { readonly: true }) : undefined;
    const client = pg === undefined ? undefined : new Client({ connectionString: pg.url });
    await client?.connect();
    // Commits another connection made (SQLite: each merge batch), or whether an import's merge holds the students table (PostgreSQL).
    const dataVersion = watcher?.prepare('PRAGMA data_version').pluck();
    const merging = async () =>
      (
        await client!.query(
          `SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname = 'students' AND l.mode = 'RowExclusiveLock' AND l.granted`,
          [pg!.schema],
        )
      ).rowCount! > 0;
    const points: { name: string; reached: (stderr: string, commits: number) => Promise<boolean> }[] = [
      { name: 'staging', reached: async (stderr) => stderr.includes('% read') },
      ...(pg === undefined
        ? [1, 2, 4].map((n) => ({ name: `after ${n} commits`, reached: async (_: string, commits: number) => commits >= n }))
        : [{ name: 'merging', reached: () => merging() }]),
    ];
    try {
      let mixedWhileRunning = 0;
      let next = 0;
      for (const point of points) {
        const run = spawnImport(['--students', newCsv, '--replace'], storeEnv());
        let commits = 0;
        let version = dataVersion?.get();
        let running = true;
        void run.exited.then(() => (running = false));
        while (running && !(await point.reached(run.stderr(), commits))) {
          // A reader in this process while another process imports: one school per turn.
          const school = data.schools[(next += 1) % data.schools.length]!;
          const rosters = await rosterStates(data, (s, a) => reader.studentsOf(s, a), [school]);
          if ([...rosters.values()].includes('mixed')) mixedWhileRunning += 1;
          const now = dataVersion?.get();
          if (now !== version) commits += 1;
          version = now;
          await new Promise((r) => setTimeout(r, 1));
        }
        run.child.kill('SIGKILL');
        expect({ point: point.name, ...(await run.exited), stderr: run.stderr().replace(/.*% read\n/g, '') }).toEqual({
          point: point.name,
          code: null,
          signal: 'SIGKILL',
          stderr: '',
        });
        expect({ point: point.name, mixed: tally(await states(reader, data)).mixed }).toEqual({ point: point.name, mixed: 0 });
      }
      expect(mixedWhileRunning).toBe(0);

      const rerun = spawnImport(['--students', newCsv, '--replace'], storeEnv());
      expect(await rerun.exited).toEqual({ code: 0, signal: null });
      for (let i = 0; i < 500 && tally(await states(reader, data)).new < data.schools.length; i += 1)
        await new Promise((r) => setTimeout(r, 10));
      expect(tally(await states(reader, data))).toEqual({ old: 0, new: 200, mixed: 0 });
      expect((await dump()).students).toHaveLength(data.new.length);
    } finally {
      watcher?.close();
      await client?.end();
    }
  }, 180_000);
});
