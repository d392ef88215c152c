import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { STUDENT_COLUMNS } from '../../src/store/import';
import { buildRoot } from './processes';
import { benchDevices, benchStudents } from './workloads';

/** The store each service variant reads: SQLite in a scratch file, PostgreSQL in a scratch schema dropped at the end. */
export interface BenchStore {
  name: 'SQLite' | 'PostgreSQL';
  env: Record<string, string>;
  /**
   * The same data for a process that must not share the first one's locks. The shadow comparison
   * pauses one twin while the other runs; a twin paused inside a write (the SMS dispatcher's claim,
   * every second) holds SQLite's write lock, and its twin's next claim then waits SQLite's busy
   * timeout with its event loop (better-sqlite3 is synchronous): answers stalled 5 s (a round's p99
   * 5,000 ms, three rounds in some six hundred). Another connection holding the lock did the same (4,977 ms).
   */
  separate(): Record<string, string>;
  drop(): Promise<void>;
}

const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** The data set as the import command's CSV files. */
export function writeCsv(dir: string): { students: string; devices: string } {
  const students = path.join(dir, 'students.csv');
  const devices = path.join(dir, 'devices.csv');
  const rows = benchStudents().map((s) => [s.school, s.id, s.fullName, s.device, s.showActive].map(csvField).join(','));
  fs.writeFileSync(students, `${STUDENT_COLUMNS.join(',')}\n${rows.join('\n')}\n`);
  fs.writeFileSync(
    devices,
    `id_device,token\n${benchDevices()
      .map((d) => `${d.id},${d.token}`)
      .join('\n')}\n`,
  );
  return { students, devices };
}

/** Loads the data set with the import command of the build `root`, into the store `env` names. */
async function importInto(env: Record<string, string>, files: { students: string; devices: string }, root: string): Promise<void> {
  await promisify(execFile)(
    process.execPath,
    [path.join(root, 'scripts/import.js'), '--students', files.students, '--devices', files.devices],
    {
      env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    },
  );
}

/**
 * `root`: the build whose import command loads the data (and whose migrations make the schema): each
 * build compared (compare.ts) has a store of its own, `name` telling them apart.
 */
export async function sqliteStore(
  dir: string,
  files: { students: string; devices: string },
  root = buildRoot,
  name = 'bench',
): Promise<BenchStore> {
  // DATABASE_URL empty, not inherited: it would take precedence over the file.
  const env = { SQLITE_PATH: path.join(dir, `${name}.db`), DATABASE_URL: '' };
  await importInto(env, files, root);
  // Copied now, while no process has the file open: the import closed it, its log checkpointed into it.
  const copy = { ...env, SQLITE_PATH: path.join(dir, `${name}-separate.db`) };
  fs.copyFileSync(env.SQLITE_PATH, copy.SQLITE_PATH);
  return { name: 'SQLite', env, separate: () => copy, drop: async () => undefined };
}

export async function postgresStore(
  databaseUrl: string,
  files: { students: string; devices: string },
  root = buildRoot,
  name = 'bench',
): Promise<BenchStore> {
  const schema = `${name}_${process.pid}_${Date.now()}`;
  const admin = async (sql: string) => {
    const c = new Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE SCHEMA ${schema}`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const env = { DATABASE_URL: url.toString() };
  try {
    await importInto(env, files, root);
  } catch (e) {
    await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    throw e;
  }
  // The server's row locks are taken with SKIP LOCKED: a paused claimer holds up no one.
  return { name: 'PostgreSQL', env, separate: () => env, drop: () => admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}
