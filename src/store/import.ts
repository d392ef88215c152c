import { parseCsv, type CsvRecord } from './csv';
import type { DeviceRow, StudentRow } from './store';

/** One import file: `name` is used only in messages (normally the path as the user typed it). */
export interface ImportFile {
  name: string;
  text: string;
}

export interface ParsedImport {
  students: StudentRow[];
  devices: DeviceRow[];
}

/** Everything wrong with an import, one `file:line: reason` string each; nothing may be written. */
export class ImportError extends Error {
  override name = 'ImportError';

  constructor(readonly errors: readonly string[]) {
    super(`${errors.length} error${errors.length === 1 ? '' : 's'} in import:\n${errors.join('\n')}`);
  }
}

export const STUDENT_COLUMNS = ['school_base_url', 'id_student', 'fullName', 'id_device', 'ShowActive'] as const;
export const DEVICE_COLUMNS = ['id_device', 'token'] as const;

/** The problems of one file, reported in line order whichever check found them. */
class FileProblems {
  private readonly found: { line: number; reason: string }[] = [];

  constructor(private readonly name: string) {}

  add(line: number, reason: string): void {
    this.found.push({ line, reason });
  }

  get count(): number {
    return this.found.length;
  }

  flushInto(errors: string[]): void {
    // Array.prototype.sort is stable, so problems on one line keep the order they were found in.
    for (const p of [...this.found].sort((a, b) => a.line - b.line)) errors.push(`${this.name}:${p.line}: ${p.reason}`);
  }
}

/**
 * Reads a file against an exact header. Order and spelling are both checked: the columns map by
 * position, and a renamed or reordered column would otherwise load into the wrong field unnoticed.
 */
function readTable(file: ImportFile, columns: readonly string[], problems: FileProblems): CsvRecord[] {
  const table = parseCsv(file.text);
  const found = table.header?.fields;
  const headerOk = found !== undefined && found.length === columns.length && found.every((name, i) => name === columns[i]);
  // Field counts measured against a wrong header would only bury the one real problem.
  for (const p of table.problems) if (headerOk || p.kind === 'syntax') problems.add(p.line, p.reason);
  if (found === undefined) {
    problems.add(1, table.problems.length === 0 ? 'file is empty; a header row is required' : 'a header row is required on line 1');
    return [];
  }
  if (!headerOk) {
    problems.add(1, `header must be "${columns.join(',')}", found "${found.join(',')}"`);
    return [];
  }
  return table.records;
}

function parseStudents(file: ImportFile, errors: string[]): StudentRow[] {
  const problems = new FileProblems(file.name);
  const rows: StudentRow[] = [];
  const firstLine = new Map<string, number>();
  for (const { line, fields } of readTable(file, STUDENT_COLUMNS, problems)) {
    const [school_base_url, id_student, fullName, id_device, ShowActive] = fields as [string, string, string, string, string];
    const before = problems.count;
    if (school_base_url === '') problems.add(line, 'school_base_url is empty');
    if (id_student === '') problems.add(line, 'id_student is empty');
    // ShowActive is a System.Char in the service: exactly one UTF-16 code unit, so `length` is right.
    if (ShowActive.length !== 1) {
      problems.add(line, `ShowActive must be exactly one character, found ${JSON.stringify(ShowActive)}`);
    }
    if (school_base_url !== '' && id_student !== '') {
      // JSON keeps the pair unambiguous whatever characters the two values contain.
      const key = JSON.stringify([school_base_url, id_student]);
      const first = firstLine.get(key);
      if (first === undefined) firstLine.set(key, line);
      else problems.add(line, `duplicate id_student "${id_student}" for school "${school_base_url}" (first on line ${first})`);
    }
    if (problems.count === before) rows.push({ school_base_url, id_student, fullName, id_device, ShowActive });
  }
  problems.flushInto(errors);
  return rows;
}

function parseDevices(file: ImportFile, errors: string[]): DeviceRow[] {
  const problems = new FileProblems(file.name);
  const rows: DeviceRow[] = [];
  const firstLine = new Map<string, number>();
  for (const { line, fields } of readTable(file, DEVICE_COLUMNS, problems)) {
    const [id_device, token] = fields as [string, string];
    if (id_device === '') {
      problems.add(line, 'id_device is empty');
      continue;
    }
    const first = firstLine.get(id_device);
    if (first !== undefined) {
      problems.add(line, `duplicate id_device "${id_device}" (first on line ${first})`);
      continue;
    }
    firstLine.set(id_device, line);
    // An empty token is a value, not a missing device: kept, so the store answers "" rather than null.
    rows.push({ id_device, token });
  }
  problems.flushInto(errors);
  return rows;
}

/**
 * Parses and validates the import files; either may be omitted. All problems in both files are
 * collected before throwing, so one run shows the user everything to fix.
 */
export function parseImport(students?: ImportFile, devices?: ImportFile): ParsedImport {
  const errors: string[] = [];
  const result: ParsedImport = {
    students: students === undefined ? [] : parseStudents(students, errors),
    devices: devices === undefined ? [] : parseDevices(devices, errors),
  };
  if (errors.length > 0) throw new ImportError(errors);
  return result;
}
