/**
 * The Store on PostgreSQL (store.ts says what a Store is): the pool, its named statements, the
 * imports by COPY, the roster cache kept fresh by NOTIFY (pg-changes.ts) and the outbox (outbox.ts,
 * shared with SQLite). Past 300 lines: every method of the Store, each a statement and how it is
 * retried when the connection, not the statement, failed; the SQL itself is in sql.ts.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client, type ClientConfig, Pool, type QueryConfig, type QueryResult } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { redactUrl } from './redact';
import { log } from '../basics/log';
import type { StudentInfo } from '../contract/types';
import { migratePostgres, type OpenOptions, PG_MIGRATIONS, pgSchemaState, schemaProblem } from './migrations';
import { type ImportConnection, QUERIES, quoteIdent, SqlImportSession, STAGING } from './sql';
import type { Statement } from './admission';
import { SqlOutbox } from './outbox';
import { StudentChanges, WATCH_TIMING, type WatchTiming } from './pg-changes';
import { CACHED_STUDENTS, RosterCache } from './roster-cache';
import { WriteHealth } from './health';
import {
  type ImportSession,
  NO_TOTALS,
  type PoolUsage,
  type RowCounts,
  type ShadowBatch,
  type ShadowTotals,
  type SmsOutbox,
  type Store,
} from './store';

export interface PostgresOptions {
  url: string;
  poolSize: number;
  statementTimeoutMs: number;
  /** The roster cache's watch (pg-changes.ts); tests shorten it. */
  watch?: WatchTiming;
}

/** The shared SQL with PostgreSQL's numbered parameters. */
export function numberParams(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${(n += 1)}`);
}

/** Named statements: each pooled connection prepares them once and reuses the plan. */
const NAMED = Object.fromEntries(Object.entries(QUERIES).map(([name, sql]) => [name, { name, text: numberParams(sql) }])) as Record<
  keyof typeof QUERIES,
  { name: string; text: string }
>;

/**
 * The connection was gone rather than the statement wrong: the server ended it (57P01 admin
 * shutdown, 57P02 crash shutdown, 57P03 cannot connect now) or the socket closed under it.
 */
function connectionLost(e: unknown): boolean {
  const { code, message } = e as { code?: string; message?: string };
  return ['57P01', '57P02', '57P03', 'ECONNRESET', 'EPIPE'].includes(code ?? '') || /Connection terminated/i.test(message ?? '');
}

/** PostgreSQL text cannot hold U+0000, so a value with one can match no stored row. */
const hasNul = (s: string): boolean => s.includes('\0');

/**
 * The PostgreSQL backend: one pool per process. A lost server is not fatal: a query fails (the
 * request gets the ASMX server fault), the pool drops the broken connection and opens new ones
 * once the server is back. Every statement, and the wait for a connection, is bounded by the
 * statement time-out.
 */
export class PostgresStore implements Store {
  readonly location: string;
  readonly outbox: SmsOutbox;
  private readonly rosters = new RosterCache(CACHED_STUDENTS);
  private readonly health = new WriteHealth(() => this.probeWrite(), pgStoreFault);

  private constructor(
    private readonly pool: Pool,
    private readonly options: PostgresOptions,
    private readonly changes: StudentChanges,
  ) {
    this.location = redactUrl(options.url);
    const health = this.health;
    // A statement failing for the store's reason makes readiness false at once (health.ts).
    this.outbox = new SqlOutbox(
      {
        run: (sql, params) => health.observe(async () => (await pool.query(numberParams(sql), [...params])).rowCount ?? 0),
        all: <T>(sql: string, params: readonly unknown[]) =>
          health.observe(async () => (await pool.query(numberParams(sql), [...params])).rows as T[]),
        exclusive: (read, plan) => health.observe(() => exclusive(pool, read, plan)),
      },
      'FOR UPDATE SKIP LOCKED',
      'postgres',
    );
  }

  static async open(options: PostgresOptions, openOptions: OpenOptions = {}): Promise<PostgresStore> {
    const timeout = options.statementTimeoutMs;
    const pool = new Pool({
      ...connection(options.url),
      max: options.poolSize,
      statement_timeout: timeout,
      // A backstop on the client side for a server that stops answering without closing the socket.
      query_timeout: timeout + 1000,
      connectionTimeoutMillis: timeout,
      idleTimeoutMillis: 30_000,
    });
    // An idle connection whose server went away: the pool discards it; without a listener it would end the process.
    pool.on('error', (err) => log.warn('database connection lost', { error: err.message }));
    try {
      const client = await pool.connect();
      try {
        await migratePostgres(client, openOptions.migrate ?? true);
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    // Not a reason to refuse to start: until it listens, every roster is read from the database.
    const changes = new StudentChanges(connection(options.url, 'student-info changes'), options.watch ?? WATCH_TIMING);
    await changes.start();
    return new PostgresStore(pool, options, changes);
  }

  private async query<T>(statement: keyof typeof QUERIES, values: unknown[]): Promise<T[]> {
    const config: QueryConfig = { ...NAMED[statement], values };
    return (await this.pool.query(config)).rows as T[];
  }

  /**
   * A read, tried once more on a fresh connection when the one it got had been closed by the server
   * (a restart, pg_terminate_backend, a proxy's idle time-out): the pool learns of such losses only
   * as they happen, so one stale idle connection would otherwise cost a client its answer. Writes
   * are not retried: the first attempt may have committed.
   */
  private async read<T>(statement: keyof typeof QUERIES, values: unknown[]): Promise<T[]> {
    try {
      return await this.query<T>(statement, values);
    } catch (e) {
      if (!connectionLost(e)) throw e;
      return this.query<T>(statement, values);
    }
  }

  async studentsOf(schoolBaseUrl: string | null, showActive: string): Promise<StudentInfo[]> {
    if (schoolBaseUrl === null || hasNul(schoolBaseUrl) || hasNul(showActive)) return [];
    return this.rosters.getAsync(
      () => this.changes.version(),
      schoolBaseUrl,
      showActive,
      () => this.read<StudentInfo>('studentsOf', [schoolBaseUrl, showActive]),
    );
  }

  async deviceToken(idDevice: string | null): Promise<string | null> {
    if (idDevice === null || hasNul(idDevice)) return null;
    const [row] = await this.read<{ token: string }>('deviceToken', [idDevice]);
    return row?.token ?? null;
  }

  /**
   * A connection of its own, outside the pool and without the statement time-out: an import is an
   * administrator's command whose final merge may take longer than any request should.
   */
  async beginImport(): Promise<ImportSession> {
    const client = new Client(connection(this.options.url));
    client.on('error', (err) => log.warn('import connection lost', { error: err.message }));
    await client.connect();
    let open = true;
    const finish = async (sql: 'COMMIT' | 'ROLLBACK'): Promise<void> => {
      if (!open) return;
      open = false;
      try {
        await client.query(sql);
      } finally {
        await client.end().catch(() => undefined);
      }
    };
    const conn: ImportConnection = {
      run: async (sql, params = []) => (await client.query(numberParams(sql), [...params])).rowCount ?? 0,
      all: async <T>(sql: string, params: readonly unknown[] = []) => (await client.query(numberParams(sql), [...params])).rows as T[],
      // COPY: the batch travels as one block of text that the server parses without planning.
      insertMany: async (table, rows) => {
        const columns = Object.keys(STAGING[table]).map(quoteIdent).join(', ');
        const text = `${rows.map((row) => row.map(copyValue).join('\t')).join('\n')}\n`;
        await pipeline(Readable.from([text]), client.query(copyFrom(`COPY ${table} (${columns}) FROM STDIN`)));
      },
      commit: () => finish('COMMIT'),
      rollback: () => finish('ROLLBACK').catch(() => undefined),
    };
    try {
      await client.query('BEGIN');
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return SqlImportSession.begin(conn);
  }

  async ping(): Promise<void> {
    // Ready means able to take an AuthCode: a standby (after a fail-over the URL may point at one) or a
    // read-only session answers reads and refuses every write.
    const { rows } = await this.pool.query<{ standby: boolean; readonly: string }>(
      "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') AS readonly",
    );
    if (rows[0]?.standby === true) throw new Error('cannot write: PostgreSQL is a standby (in recovery)');
    if (rows[0]?.readonly === 'on') throw new Error('cannot write: the PostgreSQL session is read-only (default_transaction_read_only)');
    // Ready means able to take an AuthCode: a write committed lately (rate-limited, health.ts).
    await this.health.check();
    const { version, oldest } = await pgSchemaState(this.pool);
    const problem = schemaProblem(version, oldest, PG_MIGRATIONS.length);
    if (problem !== null) throw new Error(problem);
  }

  /**
   * Readiness's write, in one round trip and one transaction (a simple query's statements share
   * one): the heartbeat row written; the lock an AuthCode's INSERT takes on the outbox, so that a
   * lock held on it (a migration, a VACUUM FULL) past the statement time-out is seen; and this
   * role's privileges on the outbox, which a write to another table would not prove. Committed.
   */
  private async probeWrite(): Promise<void> {
    const results = (await this.pool.query(WRITE_PROBE)) as unknown as QueryResult<{ writable: boolean }>[];
    if (results[2]?.rows[0]?.writable !== true)
      throw new Error('this role may not insert, update and delete rows of auth_code_outbox (privileges revoked)');
  }

  async counts(): Promise<RowCounts> {
    // count(*) is a bigint, which pg hands over as a string.
    const [row] = await this.query<{ students: string; devices: string }>('counts', []);
    return { students: Number(row.students), devices: Number(row.devices) };
  }

  async shadowTotals(): Promise<ShadowTotals> {
    // bigint as a string, timestamptz as a Date.
    const [row] = await this.read<{ since: Date | null; compared: string; real: string; noise: string }>('shadowTotals', []);
    if (row === undefined) return NO_TOTALS;
    return { since: row.since?.toISOString() ?? null, compared: Number(row.compared), real: Number(row.real), noise: Number(row.noise) };
  }

  async addShadowTotals({ first, compared, real, noise }: ShadowBatch): Promise<void> {
    await this.query('addShadowTotals', [first, compared, real, noise]);
  }

  poolUsage(): PoolUsage {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async close(): Promise<void> {
    await this.changes.close();
    if (!this.pool.ended && !this.pool.ending) await this.pool.end();
  }
}

/**
 * One admission at a time per schema, on every instance: a transaction-scoped advisory lock taken
 * before the read (READ COMMITTED: the read then sees every admission committed before the lock was
 * granted), so no two admissions count from the same values and no update is lost. The wait for it
 * is bounded by the statement time-out.
 */
const ADMISSION_LOCK = "SELECT pg_advisory_xact_lock(hashtext('student-info:sms-admission:' || current_schema()))";

async function exclusive<T>(
  pool: Pool,
  read: Statement | null,
  plan: (rows: Record<string, unknown>[]) => { writes: Statement[]; result: T },
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // One round trip: both statements without parameters, as one simple query.
    await client.query(`BEGIN; ${ADMISSION_LOCK}`);
    const rows = read === null ? [] : (await client.query(numberParams(read.sql), read.params)).rows;
    const { writes, result } = plan(rows);
    for (const w of writes) await client.query(numberParams(w.sql), w.params);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    // A connection that cannot even roll back is discarded rather than handed to the next query.
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    client.release(broken);
  }
}

const WRITE_PROBE = `${QUERIES.heartbeat};
  LOCK TABLE auth_code_outbox IN ROW EXCLUSIVE MODE;
  SELECT has_table_privilege('auth_code_outbox', 'INSERT')
    AND has_table_privilege('auth_code_outbox', 'UPDATE')
    AND has_table_privilege('auth_code_outbox', 'DELETE') AS writable`;

/**
 * PostgreSQL's errors that say the store, not the statement, failed: the connection (08, a socket
 * error, the pool's time-outs), resources (53: disk full, out of memory, too many connections), an
 * operator's intervention or a statement time-out (57), the system (58, XX), a read-only
 * transaction (25006), a revoked privilege (42501), a lock not granted (55P03).
 */
function pgStoreFault(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== 'string') return /Connection terminated|timeout/i.test(String(message));
  return /^(08|53|57|58|XX|E[A-Z])/.test(code) || ['25006', '42501', '55P03'].includes(code);
}

/** A value in COPY's text format: backslash, tab and line breaks escaped, \N for null. */
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const copyValue = (value: unknown): string =>
  value === null || value === undefined ? '\\N' : String(value).replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!);

function connection(url: string, name = 'student-info'): ClientConfig {
  return { connectionString: url, application_name: name, keepAlive: true };
}
