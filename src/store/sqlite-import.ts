import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { isBusy, unlockedStatements, whenUnlocked } from './busy';
import { ImportStoppedError } from './import';
import { ABSENT_STUDENTS, type ImportConnection, quoteIdent, SqlImportSession, STAGING, type StagingTable } from './sql';
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
}

export const MERGE_PACING: MergePacing = { firstBatch: 500, minBatch: 16, maxBatch: 100_000, targetMs: 20, pauseMs: 10 };

/**
 * A SQLite import on a connection of its own (its staging tables are private to it and go when it
 * closes), or on the store's own for a database without a file (':memory:').
 *
 * The rows are staged and checked without the file's write lock (the staging tables are in the
 * connection's temporary database), then merged in batches, each its own short IMMEDIATE
 * transaction: devices, then students (a student's device is there before the student), then, with
 * --replace, the absent students are deleted last. One transaction for the whole merge would hold
 * the lock for seconds and every writer of the service (AuthCode, the dispatcher) would wait that
 * long. The price: a merge that fails part way leaves the batches before the failure in place;
 * running the same import again finishes it, since every step is an upsert or a delete by key.
 */
export function beginSqliteImport(file: string | null, shared: Database.Database, committed: () => void, pacing: MergePacing): Promise<ImportSession> {
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
    else for (const table of [...Object.keys(STAGING), 'import_removed']) db.exec(`DROP TABLE IF EXISTS temp.${table}`);
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
    merge: (_conn, replace) => mergeInBatches(db, prepared, replace, pacing).catch((err: unknown) => {
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

const STUDENT_UPSERT = (where: string) => `INSERT INTO students (school_base_url, id_student, "fullName", id_device, "ShowActive")
  SELECT school_base_url, id_student, "fullName", id_device, "ShowActive" FROM import_students WHERE ${where}
  ORDER BY school_base_url, id_student
  ON CONFLICT (school_base_url, id_student) DO UPDATE SET
    "fullName" = excluded."fullName", id_device = excluded.id_device, "ShowActive" = excluded."ShowActive"`;
const DEVICE_UPSERT = (where: string) => `INSERT INTO devices (id_device, token) SELECT id_device, token FROM import_devices WHERE ${where}
  ORDER BY id_device
  ON CONFLICT (id_device) DO UPDATE SET token = excluded.token`;
const REMOVE = (where: string) => `DELETE FROM students WHERE (school_base_url, id_student) IN
  (SELECT school_base_url, id_student FROM import_removed WHERE ${where})`;

async function mergeInBatches(db: Database.Database, prepared: Prepare, replace: boolean, pacing: MergePacing): Promise<ImportCounts> {
  const pacer = new Pacer(db, prepared, pacing);
  const devices = await pacer.walk('import_devices', 'id_device', DEVICE_UPSERT);
  const students = await pacer.walk('import_students', 'school_base_url, id_student', STUDENT_UPSERT);
  let removed = 0;
  if (replace) {
    // Found by reading (no lock on the file), then deleted by key in batches; after the upserts, so
    // every student the file lists is in the table and only the absent ones are found.
    await whenUnlocked(() => db.exec(`DROP TABLE IF EXISTS temp.import_removed; CREATE TEMP TABLE import_removed AS SELECT school_base_url, id_student ${ABSENT_STUDENTS}`));
    removed = await pacer.walk('import_removed', 'rowid', REMOVE);
  }
  return { students, devices, removed };
}

/**
 * Walks a staging table in key order, a batch of rows at a time, sizing each batch from how long
 * the last one held the lock.
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

  /** Runs `statement` over consecutive key ranges of `table`; the rows it changed in all. */
  async walk(table: StagingTable | 'import_removed', key: string, statement: (where: string) => string): Promise<number> {
    const params = (values: unknown[]) => values.map(() => '?').join(', ');
    let low: unknown[] | null = null;
    let total = 0;
    for (;;) {
      const after = low === null ? 'true' : `(${key}) > (${params(low)})`;
      // The last key of this batch, read from the staging index (the temporary database: no lock).
      const boundary = this.prepared(`SELECT ${key} FROM ${table} WHERE ${after} ORDER BY ${key} LIMIT 1 OFFSET ?`).raw();
      const high = (await whenUnlocked(() => boundary.get(...(low ?? []), this.size - 1))) as unknown[] | undefined;
      const upTo = high === undefined ? 'true' : `(${key}) <= (${params(high)})`;
      const run = this.prepared(statement(`${after} AND ${upTo}`));
      total += await this.batch(() => run.run(...(low ?? []), ...(high ?? [])).changes);
      if (high === undefined) return total;
      low = high;
    }
  }

  private async batch(work: () => number): Promise<number> {
    const transaction = this.db.transaction(work);
    let took = 0;
    const changed = await whenUnlocked(() => {
      const started = performance.now();
      const n = transaction.immediate();
      took = performance.now() - started;
      return n;
    });
    const { targetMs, minBatch, maxBatch } = this.pacing;
    // At most doubled or halved per batch: one slow batch (a cold cache, a checkpoint) is no trend.
    const factor = Math.min(2, Math.max(0.5, targetMs / Math.max(took, 0.1)));
    this.size = Math.round(Math.min(maxBatch, Math.max(minBatch, this.size * factor)));
    try {
      // Copies what the batch wrote into the file now, while nobody waits: left to the service's
      // connection, the automatic checkpoint would run there after an AuthCode and stall it.
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      if (!isBusy(err)) throw err;
    }
    await sleep(this.pacing.pauseMs);
    return changed;
  }
}
