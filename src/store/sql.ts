import type { Duplicate, ImportCounts, ImportSession, Staged, DeviceRow, StudentRow } from './store';

/**
 * The SQL both stores run, written once (the outbox's is in outbox.ts). `?` marks a parameter (the PostgreSQL store numbers them);
 * the mixed-case column names of the legacy schema are quoted so that PostgreSQL keeps their case.
 */
export const QUERIES = {
  // Columns in StudentInfo wire order: both drivers build row objects in select order.
  studentsOf: `SELECT id_student, "fullName", id_device, "ShowActive" FROM students
    WHERE school_base_url = ? AND "ShowActive" = ? ORDER BY id_student`,
  deviceToken: 'SELECT token FROM devices WHERE id_device = ?',
  counts: 'SELECT (SELECT count(*) FROM students) AS students, (SELECT count(*) FROM devices) AS devices',
  // Readiness's proof of a write (health.ts): one row, counted up and committed. An upsert, so that a
  // row deleted by hand is written again rather than making the store look unable.
  heartbeat: `INSERT INTO store_heartbeat (id, beats, written_at) VALUES (1, 1, CURRENT_TIMESTAMP)
    ON CONFLICT (id) DO UPDATE SET beats = store_heartbeat.beats + 1, written_at = excluded.written_at`,
  // Shadow traffic's totals (one row): each batch of settled comparisons added in one statement, the
  // earliest first comparison kept (a cluster's workers may write out of order).
  shadowTotals: 'SELECT since, compared, real_differences AS real, noise FROM shadow_totals WHERE id = 1',
  addShadowTotals: `INSERT INTO shadow_totals (id, since, compared, real_differences, noise) VALUES (1, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET
      since = CASE WHEN shadow_totals.since IS NULL OR excluded.since < shadow_totals.since THEN excluded.since ELSE shadow_totals.since END,
      compared = shadow_totals.compared + excluded.compared,
      real_differences = shadow_totals.real_differences + excluded.real_differences,
      noise = shadow_totals.noise + excluded.noise`,
} as const;

/** The import's staging tables: temporary, private to the importing connection, gone with it. */
export const STAGING = {
  import_students: {
    line: 'INTEGER',
    school_base_url: 'TEXT',
    id_student: 'TEXT',
    fullName: 'TEXT',
    id_device: 'TEXT',
    ShowActive: 'TEXT',
  },
  import_devices: { line: 'INTEGER', id_device: 'TEXT', token: 'TEXT' },
} as const;

export type StagingTable = keyof typeof STAGING;

export const quoteIdent = (name: string): string => `"${name}"`;

const stagingDdl = (table: StagingTable): string =>
  `CREATE TEMP TABLE ${table} (${Object.entries(STAGING[table])
    .map(([column, type]) => `${quoteIdent(column)} ${type} NOT NULL`)
    .join(', ')})`;

/** What an import needs from one connection inside one open transaction. */
export interface ImportConnection {
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Appends rows (values in STAGING column order) to a staging table in as few round trips as the driver allows. */
  insertMany(table: StagingTable, rows: readonly unknown[][]): Promise<void>;
  /**
   * Moves the checked staging rows into the tables; without it, `mergeAtOnce` inside the one import
   * transaction. SQLite merges in short batches instead (sqlite-import.ts).
   */
  merge?(conn: ImportConnection, replace: boolean): Promise<ImportCounts>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** With `replace`, the students of the file's schools that the file does not list. */
export const ABSENT_STUDENTS = `FROM students WHERE school_base_url IN (SELECT school_base_url FROM import_students)
  AND NOT EXISTS (SELECT 1 FROM import_students i
    WHERE i.school_base_url = students.school_base_url AND i.id_student = students.id_student)`;

/** The whole merge as three statements, for a store whose transaction may hold its locks that long (PostgreSQL). */
async function mergeAtOnce(conn: ImportConnection, replace: boolean): Promise<ImportCounts> {
  const removed = replace ? await conn.run(`DELETE ${ABSENT_STUDENTS}`) : 0;
  // WHERE true: SQLite needs it to tell the upsert clause from a join in INSERT ... SELECT. In key
  // order (read from the staging index) the table's own B-tree grows at its end, not at random.
  const students = await conn.run(
    `INSERT INTO students (school_base_url, id_student, "fullName", id_device, "ShowActive")
     SELECT school_base_url, id_student, "fullName", id_device, "ShowActive" FROM import_students WHERE true
     ORDER BY school_base_url, id_student
     ON CONFLICT (school_base_url, id_student) DO UPDATE SET
       "fullName" = excluded."fullName", id_device = excluded.id_device, "ShowActive" = excluded."ShowActive"`,
  );
  const devices = await conn.run(
    `INSERT INTO devices (id_device, token) SELECT id_device, token FROM import_devices WHERE true
     ON CONFLICT (id_device) DO UPDATE SET token = excluded.token`,
  );
  return { students, devices, removed };
}

const DUPLICATES = (table: StagingTable, key: readonly string[]): { rows: string; count: string } => {
  const cols = key.map(quoteIdent).join(', ');
  return {
    rows: `SELECT line, first, ${cols} FROM (
        SELECT line, ${cols}, min(line) OVER (PARTITION BY ${cols}) AS first FROM ${table}) d
      WHERE line > first ORDER BY line LIMIT ?`,
    count: `SELECT CAST(coalesce(sum(n - 1), 0) AS INTEGER) AS n FROM (SELECT count(*) AS n FROM ${table} GROUP BY ${cols}) g`,
  };
};
const STUDENT_KEY = ['school_base_url', 'id_student'] as const;
const DEVICE_KEY = ['id_device'] as const;

/**
 * An import, the same on both stores: stage, check keys, then merge (INSERT ... SELECT ... ON
 * CONFLICT per table: at once on PostgreSQL, in batches on SQLite). The key indexes are built after
 * staging, which is cheaper than keeping them up to date row by row.
 */
export class SqlImportSession implements ImportSession {
  private indexed = false;

  private constructor(private readonly conn: ImportConnection) {}

  static async begin(conn: ImportConnection): Promise<SqlImportSession> {
    try {
      // Temporary tables are private to the import's connection and go with it (or with a rollback).
      for (const table of Object.keys(STAGING) as StagingTable[]) await conn.run(stagingDdl(table));
    } catch (err) {
      await conn.rollback();
      throw err;
    }
    return new SqlImportSession(conn);
  }

  async stageStudents(rows: readonly Staged<StudentRow>[]): Promise<void> {
    if (rows.length === 0) return;
    await this.conn.insertMany(
      'import_students',
      rows.map((r) => [r.line, r.school_base_url, r.id_student, r.fullName, r.id_device, r.ShowActive]),
    );
  }

  async stageDevices(rows: readonly Staged<DeviceRow>[]): Promise<void> {
    if (rows.length === 0) return;
    await this.conn.insertMany(
      'import_devices',
      rows.map((r) => [r.line, r.id_device, r.token]),
    );
  }

  private async index(): Promise<void> {
    if (this.indexed) return;
    this.indexed = true;
    await this.conn.run(`CREATE INDEX import_students_key ON import_students (${STUDENT_KEY.map(quoteIdent).join(', ')}, line)`);
    await this.conn.run('CREATE INDEX import_devices_key ON import_devices (id_device, line)');
    // Fresh tables have no statistics: without them the planners guess badly for a million rows.
    for (const table of Object.keys(STAGING)) await this.conn.run(`ANALYZE ${table}`);
  }

  async duplicates(limit: number): Promise<{ students: Duplicate[]; devices: Duplicate[]; total: number }> {
    await this.index();
    const find = async (table: StagingTable, key: readonly string[]) => {
      const q = DUPLICATES(table, key);
      const [{ n }] = await this.conn.all<{ n: number }>(q.count);
      const rows = n === 0 ? [] : await this.conn.all<Record<string, string | number>>(q.rows, [limit]);
      return { n: Number(n), list: rows.map((r) => ({ line: Number(r.line), first: Number(r.first), key: key.map((k) => String(r[k])) })) };
    };
    const students = await find('import_students', STUDENT_KEY);
    const devices = await find('import_devices', DEVICE_KEY);
    return { students: students.list, devices: devices.list, total: students.n + devices.n };
  }

  async commit(replace: boolean): Promise<ImportCounts> {
    try {
      await this.index();
      const counts = await (this.conn.merge ?? mergeAtOnce)(this.conn, replace);
      await this.conn.run('DROP TABLE import_students');
      await this.conn.run('DROP TABLE import_devices');
      await this.conn.commit();
      return counts;
    } catch (err) {
      await this.conn.rollback();
      throw err;
    }
  }

  async rollback(): Promise<void> {
    await this.conn.rollback();
  }
}
