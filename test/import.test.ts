import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { main, USAGE, type ImportIo } from '../scripts/import';
import { decodeUtf8, parseCsv } from '../src/store/csv';
import { ImportError, parseImport, type ImportFile } from '../src/store/import';
import { openSqliteStore } from '../src/store/sqlite';

const FIXTURES = join(__dirname, 'fixtures', 'data');
const STUDENTS_CSV = join(FIXTURES, 'students.csv');
const DEVICES_CSV = join(FIXTURES, 'devices.csv');
const STUDENTS_HEADER = 'school_base_url,id_student,fullName,id_device,ShowActive';

const fixture = (path: string): ImportFile => ({ name: path, text: readFileSync(path, 'utf8') });

/** The ImportError's list, or a failure if parseImport did not throw one. */
function importErrors(students?: ImportFile, devices?: ImportFile): readonly string[] {
  try {
    parseImport(students, devices);
  } catch (err) {
    if (err instanceof ImportError) return err.errors;
    throw err;
  }
  throw new Error('expected an ImportError');
}

describe('parseCsv', () => {
  test('reads quoted fields, doubled quotes, embedded line breaks, CRLF and a BOM', () => {
    const text = '\ufeffa,b,c\r\n1,"x, ""y""",\r\n2,"multi\nline\r\nvalue",z\n3,,""\n';
    const table = parseCsv(text);
    expect(table.problems).toEqual([]);
    expect(table.header).toEqual({ line: 1, fields: ['a', 'b', 'c'] });
    expect(table.records).toEqual([
      { line: 2, fields: ['1', 'x, "y"', ''] },
      { line: 3, fields: ['2', 'multi\nline\r\nvalue', 'z'] },
      { line: 6, fields: ['3', '', ''] },
    ]);
  });

  test('a file without a final line break, and trailing blank lines, are fine', () => {
    expect(parseCsv('a,b\n1,2').records).toEqual([{ line: 2, fields: ['1', '2'] }]);
    const trailing = parseCsv('a,b\r\n1,2\r\n\r\n\n');
    expect(trailing.problems).toEqual([]);
    expect(trailing.records).toHaveLength(1);
  });

  test('an empty file has no header and no problems', () => {
    expect(parseCsv('')).toEqual({ header: null, records: [], problems: [] });
    expect(parseCsv('\ufeff\n')).toEqual({ header: null, records: [], problems: [] });
  });

  test('reports each malformed record at the physical line where it starts, and carries on', () => {
    const text = [
      'a,b,c',
      '1,2,3',
      '1,2', // 3: too few
      '1,2,3,4', // 4: too many
      '1,x"y,3', // 5: stray quote
      '"q"x,2,3', // 6: junk after the closing quote
      '', // 7: empty line in the middle
      '"multi', // 8: a good record spanning lines 8-9
      'line",2,3',
      '9,8,7', // 10
      '1,"never closed,3', // 11
      '4,5,6',
    ].join('\n');
    const table = parseCsv(text);
    expect(table.problems).toEqual([
      { kind: 'fieldCount', line: 3, reason: 'expected 3 fields, found 2' },
      { kind: 'fieldCount', line: 4, reason: 'expected 3 fields, found 4' },
      { kind: 'syntax', line: 5, reason: 'quote in unquoted field 2 (quote the whole field and double the quote)' },
      { kind: 'syntax', line: 6, reason: 'unexpected character after closing quote in field 1' },
      { kind: 'syntax', line: 7, reason: 'empty line' },
      { kind: 'syntax', line: 11, reason: 'unterminated quoted field (no closing quote before end of file)' },
    ]);
    expect(table.records.map((r) => r.line)).toEqual([2, 8, 10]);
    expect(table.records[1]!.fields).toEqual(['multi\nline', '2', '3']);
  });

  test('a bare carriage return is an error', () => {
    expect(parseCsv('a,b\n1,x\ry\n').problems).toEqual([{ kind: 'syntax', line: 2, reason: 'carriage return not followed by a line feed' }]);
  });

  test('a malformed first line means there is no header', () => {
    const table = parseCsv('a,"b\n');
    expect(table.header).toBeNull();
    expect(table.problems).toEqual([{ kind: 'syntax', line: 1, reason: 'unterminated quoted field (no closing quote before end of file)' }]);
  });

  test('decodeUtf8 rejects malformed bytes instead of replacing them', () => {
    expect(decodeUtf8(Buffer.from('نور', 'utf8'))).toBe('نور');
    expect(() => decodeUtf8(Buffer.from([0x61, 0xff, 0x62]))).toThrow();
  });
});

describe('parseImport', () => {
  test('the reference files import completely and exactly', () => {
    const { students, devices } = parseImport(fixture(STUDENTS_CSV), fixture(DEVICES_CSV));
    // Every line after the header is one record in these files (no embedded line breaks).
    const lines = (path: string) => readFileSync(path, 'utf8').trimEnd().split('\n').length - 1;
    expect(students).toHaveLength(lines(STUDENTS_CSV));
    expect(students).toHaveLength(506);
    expect(devices).toHaveLength(lines(DEVICES_CSV));
    expect(devices).toHaveLength(5);

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

  test('either file may be omitted', () => {
    expect(parseImport(undefined, fixture(DEVICES_CSV)).students).toEqual([]);
    expect(parseImport(fixture(STUDENTS_CSV)).devices).toEqual([]);
    expect(parseImport()).toEqual({ students: [], devices: [] });
  });

  test('collects every row problem across both files as file:line: reason, in line order', () => {
    const students: ImportFile = {
      name: 's.csv',
      text: [
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
      ].join('\r\n'),
    };
    const devices: ImportFile = {
      name: 'd.csv',
      text: 'id_device,token\nd1,t1\n,t2\nd1,t3\nd4,"\n',
    };
    expect(importErrors(students, devices)).toEqual([
      's.csv:3: school_base_url is empty',
      's.csv:4: id_student is empty',
      's.csv:5: ShowActive must be exactly one character, found "10"',
      's.csv:6: ShowActive must be exactly one character, found ""',
      's.csv:7: duplicate id_student "1" for school "http://a.example" (first on line 2)',
      's.csv:9: unexpected character after closing quote in field 3',
      's.csv:10: expected 5 fields, found 3',
      'd.csv:3: id_device is empty',
      'd.csv:4: duplicate id_device "d1" (first on line 2)',
      'd.csv:5: unterminated quoted field (no closing quote before end of file)',
    ]);
  });

  test('ShowActive is one UTF-16 unit, like System.Char: Arabic letters pass, astral characters do not', () => {
    const file = (c: string): ImportFile => ({ name: 's.csv', text: `${STUDENTS_HEADER}\nhttp://a.example,1,n,d,${c}\n` });
    expect(parseImport(file('ن')).students[0]?.ShowActive).toBe('ن');
    expect(importErrors(file('😀'))).toEqual(['s.csv:2: ShowActive must be exactly one character, found "😀"']);
  });

  test('headers must match exactly', () => {
    const withHeader = (header: string): ImportFile => ({ name: 's.csv', text: `${header}\nhttp://a.example,1,n,d,1\n` });
    const expected = `s.csv:1: header must be "${STUDENTS_HEADER}"`;
    for (const bad of [
      'school_base_url,id_student,fullname,id_device,ShowActive',
      'id_student,school_base_url,fullName,id_device,ShowActive',
      'school_base_url,id_student,fullName,id_device',
      'school_base_url, id_student,fullName,id_device,ShowActive',
    ]) {
      expect(importErrors(withHeader(bad))).toEqual([`${expected}, found "${bad}"`]);
    }
    expect(importErrors(undefined, { name: 'd.csv', text: 'id_device,token,extra\n' })).toEqual([
      'd.csv:1: header must be "id_device,token", found "id_device,token,extra"',
    ]);
    expect(importErrors({ name: 's.csv', text: '' })).toEqual(['s.csv:1: file is empty; a header row is required']);
    expect(importErrors({ name: 's.csv', text: `\n${STUDENTS_HEADER}\n` })).toEqual([
      's.csv:1: empty line',
      's.csv:1: a header row is required on line 1',
    ]);
    // A BOM before the header, as Excel writes it, is not part of the first column name.
    expect(parseImport({ name: 's.csv', text: `\ufeff${STUDENTS_HEADER}\r\nhttp://a.example,1,n,d,1\r\n` }).students).toHaveLength(1);
  });
});

describe('import CLI', () => {
  let dir: string;
  let dbPath: string;
  let out: string[];
  let err: string[];
  let io: ImportIo;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'import-test-'));
    dbPath = join(dir, 'data', 'student-info.db');
    out = [];
    err = [];
    io = { out: (l) => out.push(l), err: (l) => err.push(l), env: { SQLITE_PATH: dbPath } };
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string | Buffer): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  /** Whole database content, for comparing before and after a failed import. */
  function dump(): unknown {
    const db = new Database(dbPath, { readonly: true });
    try {
      return {
        students: db.prepare('SELECT * FROM students ORDER BY school_base_url, id_student').all(),
        devices: db.prepare('SELECT * FROM devices ORDER BY id_device').all(),
      };
    } finally {
      db.close();
    }
  }

  test('imports the reference files and reports the counts', async () => {
    expect(await main(['--students', STUDENTS_CSV, '--devices', DEVICES_CSV], io)).toBe(0);
    expect(out).toEqual([`imported 506 students, 5 devices into ${dbPath}`]);
    expect(err).toEqual([]);

    const store = openSqliteStore(dbPath);
    try {
      expect((await store.studentsOf('http://alnoor.school.example', '1')).map((s) => s.id_student)).toEqual(['1001', '1002', '1004']);
      expect(await store.studentsOf('http://big.school.example', '1')).toHaveLength(500);
      expect(await store.deviceToken('dev-1004')).toBe('tok<&>"quoted"');
    } finally {
      await store.close();
    }
  });

  test('accepts --flag=value and a single file; re-importing replaces, it does not duplicate', async () => {
    expect(await main([`--devices=${DEVICES_CSV}`], io)).toBe(0);
    expect(await main([`--devices=${DEVICES_CSV}`], io)).toBe(0);
    expect(out).toEqual([
      `imported 0 students, 5 devices into ${dbPath}`,
      `imported 0 students, 5 devices into ${dbPath}`,
    ]);
    expect(dump()).toMatchObject({ students: [], devices: expect.arrayContaining([{ id_device: 'dev-empty', token: '' }]) });
    expect((dump() as { devices: unknown[] }).devices).toHaveLength(5);
  });

  test('bad input prints every error, writes nothing and exits 1', async () => {
    expect(await main(['--students', STUDENTS_CSV, '--devices', DEVICES_CSV], io)).toBe(0);
    const before = dump();
    out.length = 0;

    const students = write('students.csv', `${STUDENTS_HEADER}\nhttp://alnoor.school.example,1001,Changed,dev-x,1\nhttp://alnoor.school.example,1002,Bad,dev-y,yes\n`);
    const devices = write('devices.csv', 'id_device,token\ndev-1001,changed\ndev-1001,again\n');
    expect(await main(['--students', students, '--devices', devices], io)).toBe(1);
    expect(out).toEqual([]);
    expect(err).toEqual([
      `${students}:3: ShowActive must be exactly one character, found "yes"`,
      `${devices}:3: duplicate id_device "dev-1001" (first on line 2)`,
      'nothing was written',
    ]);
    expect(dump()).toEqual(before);
  });

  test('bad input on a fresh setup does not even create the database', async () => {
    const bad = write('bad.csv', 'wrong,header\n');
    expect(await main(['--devices', bad], io)).toBe(1);
    expect(err).toEqual([`${bad}:1: header must be "id_device,token", found "wrong,header"`, 'nothing was written']);
    expect(existsSync(dbPath)).toBe(false);
  });

  test('a file that is not UTF-8 is bad input', async () => {
    const latin1 = write('latin1.csv', Buffer.concat([Buffer.from('id_device,token\nd,caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    expect(await main(['--devices', latin1], io)).toBe(1);
    expect(err).toEqual([`${latin1}: not valid UTF-8 text (save the file as UTF-8)`, 'nothing was written']);
  });

  test('--demo loads the demo set', async () => {
    expect(await main(['--demo'], io)).toBe(0);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(new RegExp(`^imported \\d+ students, \\d+ devices into ${dbPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    const { students, devices } = dump() as { students: { fullName: string; id_device: string; ShowActive: string }[]; devices: unknown[] };
    expect(students.length).toBeGreaterThanOrEqual(8);
    expect(devices.length).toBeGreaterThan(0);
    expect(students.some((s) => /[\u0600-\u06ff]/.test(s.fullName))).toBe(true);
    expect(students.some((s) => /[&<>"]/.test(s.fullName))).toBe(true);
    expect(students.some((s) => s.id_device === '')).toBe(true);
    expect(new Set(students.map((s) => s.ShowActive))).toEqual(new Set(['0', '1']));
  });

  test.each([
    [[], 'nothing to import'],
    [['--bogus'], 'unknown option --bogus'],
    [['stray.csv'], 'unexpected argument "stray.csv"'],
    [['--students'], '--students needs a file name'],
    [['--students', '--devices', 'x.csv'], '--students needs a file name'],
    [['--devices', 'a.csv', '--devices', 'b.csv'], '--devices given more than once'],
    [['--demo', '--students', 'a.csv'], '--demo cannot be combined with --students or --devices'],
  ])('usage error %j exits 2', async (argv, message) => {
    expect(await main(argv, io)).toBe(2);
    expect(err).toEqual([`error: ${message} (${USAGE})`]);
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
    expect(out).toEqual([USAGE]);
  });

  test('a configuration error exits 1 with one line', async () => {
    io.env = { SQLITE_PATH: '' };
    expect(await main(['--demo'], io)).toBe(1);
    expect(err).toEqual(['error: SQLITE_PATH must not be empty']);
  });

  test('a database that cannot be opened exits 1', async () => {
    io.env = { SQLITE_PATH: dir };
    expect(await main(['--devices', DEVICES_CSV], io)).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(new RegExp(`^error: cannot open database ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
  });
});
