import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { isBusy, unlockedStatements, whenUnlocked } from './busy';
import { ImportStoppedError } from './import';
import { type ImportConnection, quoteIdent, SqlImportSession, STAGING, type StagingTable } from './sql';
import type { ImportCounts, ImportSession } from './store';

/** How a SQLite import's merge is cut up; tests make the batches tiny to cross many boundaries. */
export interface MergePacing {
  /** Rows in the first batch; later batches are sized from how long the last one held the lock. */
  firstBatch: number;
  minBatch: number;
  maxBatch: number;
  /** How long one batch should hold the write lock. */
  targetMs: number;
  /** The lock is left free this long between batches, so the service's writers get it. */
  pauseMs: number;
  /**
   * Tests and measurements only: runs after each batch has committed (to look at the tables, to fail
   * there, or to record how many rows it wrote and how long it held the write lock).
   */
  afterBatch?: (batch: { rows: number; lockMs: number }) => void | Promise<void>;
}

export const MERGE_PACING: MergePacing = { firstBatch: 500, minBatch: 16, maxBatch: 100_000, targetMs: 20, pauseMs: 10 };

/**
 * A SQLite import on a connection of its own (its staging tables are private to it and go when it
 * closes), or on the store's own for a database without a file (':memory:').
 *
 * The rows are staged and checked without the file's write lock (the staging tables are in the
 * connection's temporary database), then merged in batches, each its own short IMMEDIATE
 * transaction: devices, then students (a student's device is there before the student). A students
 * batch is whole schools, each school's upserts and (--replace) removals together, so every reader
 * and every failure sees a school all as it was or all as the file has it. One transaction for the
 * whole merge would hold the lock for seconds and every writer of the service (AuthCode, the
 * dispatcher) would wait that long. The price: a merge that fails part way leaves the schools
 * before the failure switched and the rest not; running the same import again finishes it, since
 * every step is an upsert or a delete by key.
 */
export function beginSqliteImport(
  file: string | null,
  shared: Database.Database,
  committed: () => void,
  pacing: MergePacing,
): Promise<ImportSession> {
  const own = file !== null;
  const db = own ? new Database(file, { timeout: 0 }) : shared;
  if (own) {
    // The import can be run again, so a power cut may lose its last batches: NORMAL spares one
    // fsync per batch. The service's own connection keeps FULL for the codes it accepts.
    db.pragma('synchronous = NORMAL');
  }
  const { prepared, run, all } = unlockedStatements(db);
  let open = true;
  const finish = () => {
    if (!open) return;
    open = false;
    if (own) db.close();
    else for (const table of Object.keys(STAGING)) db.exec(`DROP TABLE IF EXISTS temp.${table}`);
  };
  const conn: ImportConnection = {
    run,
    all,
    insertMany: (table, rows) => {
      const columns = Object.keys(STAGING[table]);
      const insert = prepared(`INSERT INTO ${table} (${columns.map(quoteIdent).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
      // Only the temporary database is written: no lock on the file is taken.
      const stage = db.transaction(() => {
        for (const row of rows) insert.run(...row);
      });
      return whenUnlocked(() => stage());
    },
    merge: (_conn, replace) =>
      mergeInBatches(db, prepared, replace, pacing).catch((err: unknown) => {
        throw new ImportStoppedError((err as Error).message);
      }),
    commit: async () => {
      finish();
      committed();
    },
    rollback: async () => {
      finish();
      // Batches merged before a failure are visible to the service already.
      committed();
    },
  };
  return SqlImportSession.begin(conn);
}

type Prepare = (sql: string) => Database.Statement;

const DEVICE_UPSERT = (where: string) => `INSERT INTO devices (id_device, token) SELECT id_device, token FROM import_devices WHERE ${where}
  ORDER BY id_device
  ON CONFLICT (id_device) DO UPDATE SET token = excluded.token`;
/** The file's students of the schools in `where` (a range of school_base_url), in key order. */
const STUDENT_UPSERT = (where: string) => `INSERT INTO students (school_base_url, id_student, "fullName", id_device, "ShowActive")
  SELECT school_base_url, id_student, "fullName", id_device, "ShowActive" FROM import_students WHERE ${where}
  ORDER BY school_base_url, id_student
  ON CONFLICT (school_base_url, id_student) DO UPDATE SET
    "fullName" = excluded."fullName", id_device = excluded.id_device, "ShowActive" = excluded."ShowActive"`;
/** With --replace: the students of the schools in `where` that the file does not list. */
const REMOVE_ABSENT = (where: string) => `DELETE FROM students
  WHERE school_base_url IN (SELECT school_base_url FROM import_students WHERE ${where})
  AND NOT EXISTS (SELECT 1 FROM import_students i
    WHERE i.school_base_url = students.school_base_url AND i.id_student = students.id_student)`;

async function mergeInBatches(db: Database.Database, prepared: Prepare, replace: boolean, pacing: MergePacing): Promise<ImportCounts> {
  const pacer = new Pacer(db, prepared, pacing);
  const devices = await pacer.walk('import_devices', 'id_device', [DEVICE_UPSERT]);
  // A school is a roster's unit: each batch holds whole schools, its removals with its upserts, so a
  // reader (or a kill) sees every school all as it was or all as the file has it (issue 30, rule 7).
  const [students, removed] = await pacer.walk(
    'import_students',
    'school_base_url',
    replace ? [STUDENT_UPSERT, REMOVE_ABSENT] : [STUDENT_UPSERT],
  );
  return { students: students!, devices: devices[0]!, removed: removed ?? 0 };
}

/**
 * Walks a staging table in key order, a batch at a time, sizing each batch from how long the last
 * one held the lock.
 */
class Pacer {
  private size: number;

  constructor(
    private readonly db: Database.Database,
    private readonly prepared: Prepare,
    private readonly pacing: MergePacing,
  ) {
    this.size = pacing.firstBatch;
  }

  /**
   * Runs `statements` together, one transaction per batch, over consecutive ranges of `key`: about
   * `size` rows from the last batch's end up to the key of the size-th row, and every row sharing that
   * key (so no value of `key` is ever split between two batches: for students, no school). Returns
   * the rows each statement changed in all.
   */
  async walk(table: StagingTable, key: string, statements: ((where: string) => string)[]): Promise<number[]> {
    const totals = statements.map(() => 0);
    let low: unknown;
    for (;;) {
      const after = low === undefined ? 'true' : `${key} > ?`;
      const params = low === undefined ? [] : [low];
      // The staging index (the temporary database: no lock) says whether rows remain (none: no empty
      // transaction to commit), then where this batch ends.
      const left = this.prepared(`SELECT 1 FROM ${table} WHERE ${after} LIMIT 1`);
      if ((await whenUnlocked(() => left.get(...params))) === undefined) return totals;
      const boundary = this.prepared(`SELECT ${key} FROM ${table} WHERE ${after} ORDER BY ${key} LIMIT 1 OFFSET ?`).pluck();
      const high = await whenUnlocked(() => boundary.get(...params, this.size - 1));
      const where = `${after} AND ${high === undefined ? 'true' : `${key} <= ?`}`;
      const range = high === undefined ? params : [...params, high];
      const runs = statements.map((statement) => this.prepared(statement(where)));
      const { changed, lockMs } = await this.batch(() => runs.map((run) => run.run(...range).changes));
      for (const [i, n] of changed.entries()) totals[i]! += n;
      await this.pacing.afterBatch?.({ rows: changed.reduce((a, b) => a + b, 0), lockMs });
      if (high === undefined) return totals;
      low = high;
    }
  }

  private async batch(work: () => number[]): Promise<{ changed: number[]; lockMs: number }> {
    const transaction = this.db.transaction(work);
    let took = 0;
    const changed = await whenUnlocked(() => {
      const started = performance.now();
      const n = transaction.immediate();
      took = performance.now() - started;
      return n;
    });
    const { targetMs, minBatch, maxBatch } = this.pacing;
    // From the rows this batch really wrote (a large school makes it larger than asked), at most
    // doubled or halved per batch: one slow batch (a cold cache, a checkpoint) is no trend.
    const rows = Math.max(changed[0]!, 1);
    const factor = Math.min(2, Math.max(0.5, targetMs / Math.max(took, 0.1)));
    this.size = Math.round(Math.min(maxBatch, Math.max(minBatch, Math.min(rows, this.size) * factor)));
    try {
      // Copies what the batch wrote into the file now, while nobody waits: left to the service's
      // connection, the automatic checkpoint would run there after an AuthCode and stall it.
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      if (!isBusy(err)) throw err;
    }
    await sleep(this.pacing.pauseMs);
    return { changed, lockMs: took };
  }
}
