import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { makeDirectory } from '../basics/directory';
import type { StudentInfo } from '../contract/types';
import { isBusy, LOCK_WAIT_LIMIT_MS, unlockedStatements, whenUnlocked } from './busy';
import { WriteHealth } from './health';
import { MIGRATIONS, migrate, type OpenOptions, schemaProblem, schemaState } from './migrations';
import { CACHED_STUDENTS, RosterCache } from './roster-cache';
import { QUERIES } from './sql';
import { beginSqliteImport, MERGE_PACING, type MergePacing } from './sqlite-import';
import type { Statement } from './admission';
import { SqlOutbox } from './outbox';
import { type ImportSession, NO_TOTALS, type RowCounts, type ShadowBatch, type ShadowTotals, type SmsOutbox, type Store } from './store';
import { sqliteNoRoom, sqliteNotWritable } from './writable';

/**
 * How long opening the file may wait for another process's lock (another worker migrating): at
 * start nothing is served yet, so waiting inside SQLite blocks nobody. Then the timeout is 0 and
 * every statement waits for locks asynchronously (busy.ts).
 */
const OPEN_BUSY_TIMEOUT_MS = 5000;

/**
 * The embedded backend. better-sqlite3 is synchronous; the methods are async to share the Store
 * interface with PostgreSQL, and a thrown error becomes a rejection. Several processes may open
 * the same file: WAL lets readers run beside the one writer, and a statement that meets another
 * connection's lock is tried again from a timer (whenUnlocked), never waited for in the event loop.
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  readonly outbox: SmsOutbox;
  private readonly selectStudents: Database.Statement<[string, string], StudentInfo>;
  private readonly selectToken: Database.Statement<[string], { token: string }>;
  /** Changes when another connection (an import, another worker) has committed to the file. */
  private readonly dataVersion: Database.Statement<[], number>;
  private readonly rosters = new RosterCache(CACHED_STUDENTS);
  /** The file opened (device and inode), or null for a database without one. */
  private readonly file: string | null;
  private readonly health: WriteHealth;
  private readonly heartbeat: Database.Statement<[]>;

  constructor(
    readonly location: string,
    options: OpenOptions = {},
  ) {
    // ':memory:' and '' (a private temporary database) have no directory to create.
    if (location !== ':memory:' && location !== '') makeDirectory(dirname(location));
    this.db = new Database(location, { timeout: OPEN_BUSY_TIMEOUT_MS });
    this.file = location === ':memory:' || location === '' ? null : fileIdentity(location);
    try {
      this.db.pragma('journal_mode = WAL');
      // FULL, not the usual NORMAL for WAL: an accepted AuthCode must survive a power cut, since the
      // caller was already told it succeeded. The other writes are rare imports, so the cost is small.
      this.db.pragma('synchronous = FULL');
      migrate(this.db, options.migrate ?? true);
      this.db.pragma('busy_timeout = 0');
      this.selectStudents = this.db.prepare(QUERIES.studentsOf);
      this.selectToken = this.db.prepare(QUERIES.deviceToken);
      this.heartbeat = this.db.prepare(QUERIES.heartbeat);
      this.health = new WriteHealth(() => this.probeWrite(), sqliteStoreFault);
      const health = this.health;
      const { run, all, prepared } = unlockedStatements(this.db);
      // BEGIN IMMEDIATE takes the file's write lock before the read: the admissions of every
      // connection to the file are one at a time, and each reads what the one before committed.
      const admit = this.db.transaction(
        (read: Statement | null, plan: (rows: Record<string, unknown>[]) => { writes: Statement[]; result: unknown }) => {
          const rows = read === null ? [] : (prepared(read.sql).all(...read.params) as Record<string, unknown>[]);
          const { writes, result } = plan(rows);
          for (const w of writes) prepared(w.sql).run(...w.params);
          return result;
        },
      );
      // Each statement is its own write transaction: a claim's UPDATE ... RETURNING is atomic. A
      // statement failing for the store's reason makes readiness false at once (health.ts).
      this.outbox = new SqlOutbox(
        {
          run: (sql, params) => health.observe(() => run(sql, params)),
          all: <T>(sql: string, params: readonly unknown[]) => health.observe(() => all<T>(sql, params)),
          exclusive: <T>(read: Statement | null, plan: (rows: Record<string, unknown>[]) => { writes: Statement[]; result: T }) =>
            health.observe(() => whenUnlocked(() => admit.immediate(read, plan) as T)),
        },
        '',
      );
      this.dataVersion = this.db.prepare<[], number>('PRAGMA data_version').pluck();
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  async studentsOf(schoolBaseUrl: string | null, showActive: string): Promise<StudentInfo[]> {
    // The legacy compared with SQL semantics: an absent school matches nothing.
    if (schoolBaseUrl === null) return [];
    return whenUnlocked(() =>
      this.rosters.get(this.dataVersion.get()!, schoolBaseUrl, showActive, () => this.selectStudents.all(schoolBaseUrl, showActive)),
    );
  }

  async deviceToken(idDevice: string | null): Promise<string | null> {
    if (idDevice === null) return null;
    return whenUnlocked(() => this.selectToken.get(idDevice)?.token ?? null);
  }

  /** See sqlite-import.ts: staged beside the file, merged in short batches. `pacing` is for tests. */
  async beginImport(pacing: MergePacing = MERGE_PACING): Promise<ImportSession> {
    // data_version does not move for this connection's own commits (a database without a file).
    return beginSqliteImport(this.file === null ? null : this.location, this.db, () => this.rosters.clear(), pacing);
  }

  async ping(): Promise<void> {
    if (!this.db.open) throw new Error('the database is closed');
    // An open handle keeps answering from a file that was deleted or replaced; the next start would
    // not find it, so the store at this path is not the one being served.
    if (this.file !== null && fileIdentity(this.location) !== this.file)
      throw new Error(`${this.location} is no longer the file opened at start`);
    // Ready means able to take an AuthCode: a write committed lately (rate-limited, health.ts).
    await this.health.check();
    const notWritable = sqliteNotWritable(this.location);
    if (notWritable !== null) throw new Error(notWritable);
    // A newer schema whose migrations since this program's are all additive keeps it ready (a rolling deploy).
    const { version, oldest } = await whenUnlocked(() => schemaState(this.db));
    const problem = schemaProblem(version, oldest, MIGRATIONS.length);
    if (problem !== null) throw new Error(problem);
  }

  /**
   * Readiness's write: the file system has room (a write that succeeds on a full disk proves little:
   * writable.ts), then the heartbeat row is written and committed on the connection that writes the
   * codes. A lock another connection holds is waited for off the event loop, up to the limit a
   * request would wait.
   */
  private async probeWrite(): Promise<void> {
    const noRoom = this.file === null ? null : await sqliteNoRoom(this.location);
    if (noRoom !== null) throw new Error(noRoom);
    // A transaction open on this connection (an import's batch) is a write under way: joining it
    // would commit the heartbeat with the batch, or roll it back with it.
    if (this.db.inTransaction) return;
    try {
      await whenUnlocked(() => this.heartbeat.run());
    } catch (e) {
      if (!isBusy(e)) throw e;
      throw new Error(`the database is locked: another connection has held its write lock past the ${LOCK_WAIT_LIMIT_MS / 1000} s limit`);
    }
  }

  async counts(): Promise<RowCounts> {
    return whenUnlocked(() => this.db.prepare(QUERIES.counts).get() as RowCounts);
  }

  async shadowTotals(): Promise<ShadowTotals> {
    const row = await whenUnlocked(() => this.db.prepare(QUERIES.shadowTotals).get() as ShadowTotals | undefined);
    return row ?? NO_TOTALS;
  }

  async addShadowTotals({ first, compared, real, noise }: ShadowBatch): Promise<void> {
    await whenUnlocked(() => this.db.prepare(QUERIES.addShadowTotals).run(first, compared, real, noise));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/**
 * SQLite's result codes that say the store, not the statement, failed: a full disk, a read-only file,
 * an I/O error, a lock held past the limit (busy.ts throws it only then), a file gone or damaged.
 * A constraint or a mistyped value is the statement's, and says nothing about readiness.
 */
const STORE_FAULTS = /^SQLITE_(FULL|READONLY|IOERR|BUSY|LOCKED|CANTOPEN|CORRUPT|NOTADB|PERM|NOLFS|NOMEM|PROTOCOL)/;

function sqliteStoreFault(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && STORE_FAULTS.test(code);
}

function fileIdentity(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/** Opens (creating if needed) the database at `path` and brings its schema up to date (see OpenOptions). */
export function openSqliteStore(path: string, options: OpenOptions = {}): SqliteStore {
  return new SqliteStore(path, options);
}
