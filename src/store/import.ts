import { createReadStream } from 'node:fs';
import { type CsvProblem, type CsvRecord, readCsv } from './csv';
import type { DeviceRow, Duplicate, ImportCounts, ImportSession, Staged, StudentRow } from './store';

export const STUDENT_COLUMNS = ['school_base_url', 'id_student', 'fullName', 'id_device', 'ShowActive'] as const;
export const DEVICE_COLUMNS = ['id_device', 'token'] as const;

/** At most this many errors (and warnings) are listed; the total is always given. */
export const MAX_LISTED = 20;
/** Rows sent to the store per round trip. */
const STAGE_BATCH = 5000;

/** One import file: `name` is used only in messages (normally the path as the user typed it). */
export interface ImportSource {
  name: string;
  read(): AsyncIterable<Uint8Array>;
}

export interface ImportOptions {
  /** The field separator: ',' as RFC 4180, or ';' for what European Excel saves as "CSV". */
  delimiter: string;
  /** The students file is the whole truth for the schools it names. */
  replace: boolean;
}

export interface ImportReport extends ImportCounts {
  warnings: string[];
  warningCount: number;
}

/** What was wrong, as `file:line: reason` lines: the first MAX_LISTED in line order, and how many in all. */
export class ImportError extends Error {
  override name = 'ImportError';

  constructor(
    readonly errors: readonly string[],
    readonly total: number,
  ) {
    super(`${total} error${total === 1 ? '' : 's'} in import:\n${errors.join('\n')}`);
  }
}

/**
 * The store failed while merging: part of the files may be in the tables (SQLite merges in
 * batches of whole schools, so some schools are switched and the others not). Every step of a
 * merge is an upsert or a delete by key, so running the same import again completes it.
 */
export class ImportStoppedError extends Error {
  override name = 'ImportStoppedError';

  constructor(readonly reason: string) {
    super(`the import stopped part way (${reason}); run the same import again: it is safe to repeat and completes it`);
  }
}

interface Found {
  file: number;
  line: number;
  text: string;
}

/** The first few of many messages, with the count of all. */
class Listing {
  private readonly kept: Found[] = [];
  total = 0;

  add(file: number, line: number, text: string): void {
    this.total += 1;
    if (this.kept.length < MAX_LISTED) this.kept.push({ file, line, text });
  }

  /** Messages found by another pass (the first few of `total`), to be listed in line order with the rest. */
  merge(found: Found[], total: number): void {
    this.kept.push(...found);
    this.total += total;
  }

  /** The first MAX_LISTED of everything kept, in file then line order (sort is stable). */
  first(): string[] {
    return [...this.kept]
      .sort((a, b) => a.file - b.file || a.line - b.line)
      .slice(0, MAX_LISTED)
      .map((f) => f.text);
  }
}

interface Table<Row> {
  columns: readonly string[];
  /** Keys compared with request values: leading or trailing spaces there can never match. */
  matched: readonly string[];
  /** The row, or null after adding its problems. */
  check(fields: string[], problem: (reason: string) => void): Row | null;
  stage(session: ImportSession, rows: Staged<Row>[]): Promise<void>;
}

const STUDENTS: Table<StudentRow> = {
  columns: STUDENT_COLUMNS,
  matched: ['school_base_url', 'id_student', 'id_device'],
  check([school_base_url, id_student, fullName, id_device, ShowActive], problem) {
    let ok = true;
    const bad = (reason: string) => {
      ok = false;
      problem(reason);
    };
    if (school_base_url === '') bad('school_base_url is empty');
    if (id_student === '') bad('id_student is empty');
    // ShowActive is a System.Char in the service: exactly one UTF-16 code unit, so `length` is right.
    if (ShowActive!.length !== 1) bad(`ShowActive must be exactly one character, found ${JSON.stringify(ShowActive)}`);
    return ok
      ? { school_base_url: school_base_url!, id_student: id_student!, fullName: fullName!, id_device: id_device!, ShowActive: ShowActive! }
      : null;
  },
  stage: (session, rows) => session.stageStudents(rows),
};

const DEVICES: Table<DeviceRow> = {
  columns: DEVICE_COLUMNS,
  matched: ['id_device'],
  check([id_device, token], problem) {
    if (id_device === '') {
      problem('id_device is empty');
      return null;
    }
    // An empty token is a value, not a missing device: kept, so the store answers "" rather than null.
    return { id_device: id_device!, token: token! };
  },
  stage: (session, rows) => session.stageDevices(rows),
};

/**
 * Imports the files (either may be omitted); bad input writes nothing (merging: see ImportSession). The files are
 * streamed, each row checked on its own and staged in the database, and the keys checked there
 * for duplicates, so memory does not grow with the files. The session is begun only when there
 * is a row to stage, so a file rejected as a whole does not even open the database.
 */
export async function importFiles(
  files: { students?: ImportSource; devices?: ImportSource },
  options: ImportOptions,
  begin: () => Promise<ImportSession>,
): Promise<ImportReport> {
  const errors = new Listing();
  const warnings = new Listing();
  let session: ImportSession | undefined;
  const open = async () => (session ??= await begin());

  try {
    const names: string[] = [];
    const read = async <Row>(index: number, source: ImportSource, table: Table<Row>): Promise<void> => {
      names[index] = source.name;
      let fileErrors = 0;
      const error = (line: number, reason: string) => {
        fileErrors += 1;
        errors.add(index, line, `${source.name}:${line}: ${reason}`);
      };
      let header: HeaderState = 'missing';
      let buffer: Staged<Row>[] = [];
      // One batch is written while the next is parsed: the database and the parser work at once,
      // and memory still holds at most two batches.
      let writing: Promise<void> = Promise.resolve();
      const flush = async () => {
        await writing;
        if (buffer.length === 0) return;
        const rows = buffer;
        buffer = [];
        const session = await open();
        writing = table.stage(session, rows);
        // Observed at the next flush; until then a failure must not count as unhandled.
        writing.catch(() => undefined);
      };

      const onRecords = async (records: CsvRecord[]): Promise<void> => {
        for (const { line, fields } of records) {
          if (header === 'missing') {
            header = checkHeader(line, fields, table.columns, options.delimiter, (reason) => error(1, reason));
            continue;
          }
          if (header !== 'ok') continue;
          if (fields.length !== table.columns.length) {
            error(line, `expected ${table.columns.length} fields, found ${fields.length}`);
            continue;
          }
          const nul = fields.findIndex((f) => f.includes('\0'));
          if (nul !== -1) {
            error(line, `${table.columns[nul]} contains a NUL character`);
            continue;
          }
          const row = table.check(fields, (reason) => error(line, reason));
          if (row === null) continue;
          for (const column of table.matched) {
            const value = (row as Record<string, string>)[column]!;
            if (value !== value.trim()) {
              warnings.add(
                index,
                line,
                `${source.name}:${line}: warning: ${column} ${JSON.stringify(value)} has leading or trailing spaces; it is kept as is and will never match a request without them`,
              );
            }
          }
          buffer.push({ ...row, line });
          if (buffer.length >= STAGE_BATCH) await flush();
        }
      };
      // In a file read with the wrong separator every quoted value looks malformed: noise, not news.
      const onProblem = (p: CsvProblem) => header === 'foreign' || error(p.line, p.reason);
      await readCsv(source.read(), options.delimiter, onRecords, onProblem);
      await flush();
      await writing;
      if (header === 'missing') {
        error(1, fileErrors === 0 ? 'file is empty; a header row is required' : 'a header row is required on line 1');
      }
    };

    if (files.students !== undefined) await read(0, files.students, STUDENTS);
    if (files.devices !== undefined) await read(1, files.devices, DEVICES);

    if (session !== undefined) {
      const dups = await session.duplicates(MAX_LISTED);
      const found = (index: number, list: Duplicate[], what: (key: string[]) => string): Found[] =>
        list.map((d) => ({ file: index, line: d.line, text: `${names[index]}:${d.line}: ${what(d.key)} (first on line ${d.first})` }));
      errors.merge(
        [
          ...found(0, dups.students, ([school, id]) => `duplicate id_student ${JSON.stringify(id)} for school ${JSON.stringify(school)}`),
          ...found(1, dups.devices, ([id]) => `duplicate id_device ${JSON.stringify(id)}`),
        ],
        dups.total,
      );
    }
    if (errors.total > 0) throw new ImportError(errors.first(), errors.total);

    const counts = session === undefined ? { students: 0, devices: 0, removed: 0 } : await session.commit(options.replace);
    session = undefined;
    return { ...counts, warnings: warnings.first(), warningCount: warnings.total };
  } finally {
    await session?.rollback();
  }
}

/** 'foreign': separated by another delimiter than the one given. */
type HeaderState = 'missing' | 'ok' | 'bad' | 'foreign';

/**
 * Reads the header record: order and spelling are both checked, since the columns map by position
 * and a renamed or reordered column would otherwise load into the wrong field unnoticed.
 */
function checkHeader(
  line: number,
  found: string[],
  columns: readonly string[],
  delimiter: string,
  problem: (reason: string) => void,
): HeaderState {
  if (line !== 1) {
    problem('a header row is required on line 1');
    return 'bad';
  }
  if (found.length === columns.length && found.every((name, i) => name === columns[i])) return 'ok';
  const other = delimiter === ',' ? ';' : ',';
  if (found.length === 1 && found[0]!.split(other).join() === columns.join()) {
    problem(
      `the columns are separated by "${other}", not "${delimiter}" (European Excel saves CSV so): run the import with --delimiter "${other}"`,
    );
    return 'foreign';
  } else {
    problem(`header must be "${columns.join(delimiter)}", found "${found.join(delimiter)}"`);
  }
  return 'bad';
}

/** A file on disk as an import source, read in 64 KiB chunks; `onBytes` hears how far it got. */
export function fileSource(name: string, path: string, onBytes?: (bytesRead: number) => void): ImportSource {
  return {
    name,
    async *read() {
      let bytes = 0;
      for await (const chunk of createReadStream(path, { highWaterMark: 1 << 16 }) as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        onBytes?.(bytes);
        yield chunk;
      }
    },
  };
}
