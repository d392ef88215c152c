import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { StudentInfo } from '../services/types';
import { MIGRATIONS, migrate, SchemaVersionError } from './migrations';
import type { DeviceRow, ImportCounts, OutboxEntry, Store, StudentRow } from './store';

/** How long a writer waits for another process's lock (the import CLI vs the service) before failing. */
const BUSY_TIMEOUT_MS = 5000;

interface OutboxRow {
  id: number;
  code: string | null;
  phone: string | null;
  created_at: string;
}

/**
 * The SQLite backend. better-sqlite3 is synchronous; the methods are async only to share the Store
 * interface with a future networked backend, and a thrown error becomes a rejection.
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly selectStudents: Database.Statement<[string, string], StudentInfo>;
  private readonly selectToken: Database.Statement<[string], { token: string }>;
  private readonly insertOutbox: Database.Statement<[string | null, string | null, string]>;
  private readonly selectPending: Database.Statement<[number], OutboxRow>;
  private readonly upsertStudent: Database.Statement<[string, string, string, string, string]>;
  private readonly upsertDevice: Database.Statement<[string, string]>;
  private readonly upsertAll: (students: readonly StudentRow[], devices: readonly DeviceRow[]) => ImportCounts;
  /** The file opened (device and inode), or null for a database without one. */
  private readonly file: string | null;

  constructor(readonly path: string) {
    // ':memory:' and '' (a private temporary database) have no directory to create.
    if (path !== ':memory:' && path !== '') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.file = path === ':memory:' || path === '' ? null : fileIdentity(path);
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // FULL, not the usual NORMAL for WAL: an accepted AuthCode must survive a power cut, since the
      // caller was already told it succeeded. The other writes are rare imports, so the cost is small.
      this.db.pragma('synchronous = FULL');
      migrate(this.db);

      // Columns are selected in StudentInfo wire order; better-sqlite3 builds the objects in that order.
      this.selectStudents = this.db.prepare(
        `SELECT id_student, fullName, id_device, ShowActive FROM students
         WHERE school_base_url = ? AND ShowActive = ? ORDER BY id_student`,
      );
      this.selectToken = this.db.prepare('SELECT token FROM devices WHERE id_device = ?');
      this.insertOutbox = this.db.prepare('INSERT INTO auth_code_outbox (code, phone, created_at) VALUES (?, ?, ?)');
      this.selectPending = this.db.prepare(
        'SELECT id, code, phone, created_at FROM auth_code_outbox WHERE delivered_at IS NULL ORDER BY id LIMIT ?',
      );
      this.upsertStudent = this.db.prepare(
        `INSERT INTO students (school_base_url, id_student, fullName, id_device, ShowActive) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (school_base_url, id_student) DO UPDATE SET
           fullName = excluded.fullName, id_device = excluded.id_device, ShowActive = excluded.ShowActive`,
      );
      this.upsertDevice = this.db.prepare(
        `INSERT INTO devices (id_device, token) VALUES (?, ?)
         ON CONFLICT (id_device) DO UPDATE SET token = excluded.token`,
      );
      this.upsertAll = this.db.transaction((students: readonly StudentRow[], devices: readonly DeviceRow[]) => {
        for (const s of students) {
          this.upsertStudent.run(s.school_base_url, s.id_student, s.fullName, s.id_device, s.ShowActive);
        }
        for (const d of devices) this.upsertDevice.run(d.id_device, d.token);
        return { students: students.length, devices: devices.length };
      });
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  async studentsOf(schoolBaseUrl: string | null, showActive: string): Promise<StudentInfo[]> {
    // The legacy compared with SQL semantics: an absent school matches nothing.
    if (schoolBaseUrl === null) return [];
    return this.selectStudents.all(schoolBaseUrl, showActive);
  }

  async deviceToken(idDevice: string | null): Promise<string | null> {
    if (idDevice === null) return null;
    return this.selectToken.get(idDevice)?.token ?? null;
  }

  async enqueueAuthCode(code: string | null, phone: string | null): Promise<void> {
    // An autocommit INSERT under synchronous=FULL is on disk when run() returns.
    this.insertOutbox.run(code, phone, new Date().toISOString());
  }

  async pendingAuthCodes(limit: number): Promise<OutboxEntry[]> {
    return this.selectPending
      .all(limit)
      .map((r) => ({ id: r.id, code: r.code, phone: r.phone, createdAt: r.created_at }));
  }

  async upsert(students: readonly StudentRow[], devices: readonly DeviceRow[]): Promise<ImportCounts> {
    return this.upsertAll(students, devices);
  }

  async ping(): Promise<void> {
    if (!this.db.open) throw new Error('the database is closed');
    // An open handle keeps answering from a file that was deleted or replaced; the next start would
    // not find it, so the store at this path is not the one being served.
    if (this.file !== null && fileIdentity(this.path) !== this.file) throw new Error(`${this.path} is no longer the file opened at start`);
    const version = this.db.pragma('user_version', { simple: true });
    if (version !== MIGRATIONS.length) throw new SchemaVersionError(`schema version ${String(version)}, expected ${MIGRATIONS.length}`);
  }

  async counts(): Promise<ImportCounts> {
    const count = (table: string) => (this.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { students: count('students'), devices: count('devices') };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function fileIdentity(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/** Opens (creating if needed) the database at `path` and brings its schema up to date. */
export function openSqliteStore(path: string): SqliteStore {
  return new SqliteStore(path);
}
