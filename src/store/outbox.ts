import { maskText } from '../basics/mask';
import { decide, type Statement, windowSql } from './admission';
import type { ClaimedSms, EnqueueOutcome, LimitCheck, OutboxRecord, SmsOutbox, SmsStatus } from './store';

/** What the outbox needs from a store: `?` parameters, rows as objects, the number of rows changed. */
export interface OutboxConnection {
  run(sql: string, params: readonly unknown[]): Promise<number>;
  all<T>(sql: string, params: readonly unknown[]): Promise<T[]>;
  /**
   * One write transaction that no other `exclusive` transaction on the database runs beside (any
   * process, any instance): `read`'s rows are current, `plan` (synchronous, pure: it may be called
   * again if the transaction is retried) turns them into the statements to write, and the result is
   * returned once they are committed. Nothing is written if anything throws.
   */
  exclusive<T>(read: Statement | null, plan: (rows: Record<string, unknown>[]) => { writes: Statement[]; result: T }): Promise<T>;
}

const RELEASE = 'lease_owner = NULL, lease_until = NULL';
const OWNED = 'WHERE id = ? AND lease_owner = ?';
/** Rows whose story is over: what retention purges. */
const ENDED = "status IN ('delivered', 'failed', 'expired')";

/**
 * The outbox SQL, once for both stores. Times are parameters from the caller, so the same text
 * works on SQLite's ISO strings and PostgreSQL's timestamptz. The claim is one statement: on SQLite
 * one write transaction; on PostgreSQL `lock` is `FOR UPDATE SKIP LOCKED`, so concurrent claimers
 * take disjoint rows without waiting for each other. A claim returns send_started_at as it was: set,
 * it says an earlier attempt reached the provider and its answer never came back.
 */
export const outboxSql = (lock: string) =>
  ({
    // created_at, then next_attempt_at: the same time, due at once.
    enqueue: 'INSERT INTO auth_code_outbox (code, phone, created_at, next_attempt_at) VALUES (?, ?, ?, ?)',
    claim: `UPDATE auth_code_outbox SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
      WHERE id IN (SELECT id FROM auth_code_outbox
        WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?) AND created_at > ?
        ORDER BY next_attempt_at, id LIMIT ? ${lock})
      RETURNING id, code, phone, attempts, created_at, send_started_at`,
    // For a batch: `ids` is one placeholder per id.
    started: (ids: string) => `UPDATE auth_code_outbox SET send_started_at = ? WHERE lease_owner = ? AND id IN (${ids}) RETURNING id`,
    delivered: `UPDATE auth_code_outbox SET status = 'delivered', delivered_at = ?, code = NULL, last_error = NULL, ${RELEASE} ${OWNED}`,
    // A claim counted an attempt; a row released unsent gives it back.
    release: `UPDATE auth_code_outbox SET attempts = attempts - 1, ${RELEASE} ${OWNED} AND status = 'pending'`,
    unstart: `UPDATE auth_code_outbox SET attempts = attempts - 1, send_started_at = ?, ${RELEASE} ${OWNED} AND status = 'pending'`,
    // The provider's answer: the send is settled (send_started_at cleared), unless the answer was lost.
    retryLater: `UPDATE auth_code_outbox SET next_attempt_at = ?, last_error = ?,
        send_started_at = CASE WHEN ? = 1 THEN send_started_at ELSE NULL END, ${RELEASE} ${OWNED}`,
    failed: `UPDATE auth_code_outbox SET status = 'failed', failed_at = ?, last_error = ?, send_started_at = NULL,
        code = CASE WHEN ? = 1 THEN NULL ELSE code END, ${RELEASE} ${OWNED}`,
    expireOne: `UPDATE auth_code_outbox SET status = 'expired', failed_at = ?, last_error = ?, code = NULL, ${RELEASE} ${OWNED}`,
    // Pending rows past expiry that nobody holds (a holder expires its own at send time). The outer
    // test again: on PostgreSQL a row claimed meanwhile is re-read after the claim's lock and left.
    expire: `UPDATE auth_code_outbox SET status = 'expired', failed_at = ?, last_error = ?, code = NULL
      WHERE id IN (SELECT id FROM auth_code_outbox
        WHERE status = 'pending' AND created_at <= ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY id LIMIT ?)
      AND status = 'pending' AND (lease_until IS NULL OR lease_until < ?)`,
    list: `SELECT id, phone, status, attempts, created_at, next_attempt_at, delivered_at, failed_at, last_error,
        CASE WHEN code IS NULL THEN 0 ELSE 1 END AS has_code
      FROM auth_code_outbox WHERE (? = 0 OR status = 'failed') ORDER BY id DESC LIMIT ?`,
    retryOne: `UPDATE auth_code_outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, failed_at = NULL, last_error = NULL
      WHERE id = ? AND status IN ('pending', 'failed') AND code IS NOT NULL AND created_at > ?`,
    retryFailed: `UPDATE auth_code_outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, failed_at = NULL, last_error = NULL
      WHERE status = 'failed' AND code IS NOT NULL AND created_at > ?`,
    // Oldest first, in id order: the scan stops after `limit` rows, whatever the table's size.
    purge: `DELETE FROM auth_code_outbox WHERE id IN (SELECT id FROM auth_code_outbox
        WHERE ${ENDED} AND created_at < ? ORDER BY id LIMIT ?)`,
    erase: `UPDATE auth_code_outbox SET code = NULL
      WHERE status = 'failed' AND code IS NOT NULL AND (failed_at < ? OR created_at <= ?)`,
    counts: 'SELECT status, count(*) AS n FROM auth_code_outbox GROUP BY status',
    oldestPending: "SELECT min(created_at) AS t FROM auth_code_outbox WHERE status = 'pending'",
  }) as const;

/** Rows in one INSERT at most: it bounds the statements prepared, one per row count. */
const MAX_ROWS = 32;
const ROWS = Array.from({ length: MAX_ROWS + 1 }, (_, n) => Array(n).fill('(?, ?, ?, ?)').join(', '));
const enqueueRows = (n: number) => `INSERT INTO auth_code_outbox (code, phone, created_at, next_attempt_at) VALUES ${ROWS[n]}`;

/** An AuthCode waiting for the next group commit. */
interface Waiting {
  params: [code: string, phone: string, createdAt: string, due: string];
  checks: readonly LimitCheck[];
  resolve(outcome: EnqueueOutcome): void;
  reject(err: unknown): void;
}

type Row = Record<string, unknown>;
/**
 * An error as last_error keeps it: masked by the logger's rule (basics/mask.ts), whoever wrote it
 * (a provider's answer may echo the phone in any spelling), and bounded. The row's own phone column
 * is what a send needs; its error is read by people, on the console and by `npm run outbox`.
 */
const MAX_ERROR_CHARS = 500;
const stored = (error: string): string => maskText(error.slice(0, MAX_ERROR_CHARS + 64)).slice(0, MAX_ERROR_CHARS);
const iso = (v: unknown): string | null => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v));

export class SqlOutbox implements SmsOutbox {
  private readonly sql: ReturnType<typeof outboxSql>;
  private readonly windows: ReturnType<typeof windowSql>;
  private waiting: Waiting[] = [];
  private scheduled = false;
  private committing = false;

  constructor(
    private readonly conn: OutboxConnection,
    lock: string,
    dialect: 'sqlite' | 'postgres' = 'sqlite',
  ) {
    this.sql = outboxSql(lock);
    this.windows = windowSql(dialect);
  }

  /**
   * Durable when this resolves: the row's INSERT, and the limit windows it counted in, have
   * committed (SQLite with synchronous=FULL, PostgreSQL's commit), or the request was refused and
   * nothing was written. The AuthCodes that reach the outbox in one turn of the event loop are
   * decided and committed together: one transaction, one INSERT of the queued rows, one fsync (on
   * SQLite the fsync cost a request more CPU than everything else it does, and held the event loop
   * for milliseconds). One such commit at a time per process: those arriving meanwhile make the
   * next batch. Each request is still answered only once its own outcome is committed; a batch the
   * store refuses is tried again request by request, so a row it refuses fails only its own request.
   */
  enqueue(code: string, phone: string, checks: readonly LimitCheck[] = []): Promise<EnqueueOutcome> {
    const now = new Date().toISOString();
    return new Promise<EnqueueOutcome>((resolve, reject) => {
      this.waiting.push({ params: [code, phone, now, now], checks, resolve, reject });
      this.schedule();
    });
  }

  /** After the turn's other requests have been read, unless a commit is under way (it schedules the next). */
  private schedule(): void {
    if (this.scheduled || this.committing || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.committing = true;
      void this.commitWaiting().finally(() => {
        this.committing = false;
        this.schedule();
      });
    });
  }

  private async commitWaiting(): Promise<void> {
    const all = this.waiting;
    this.waiting = [];
    for (let i = 0; i < all.length; i += MAX_ROWS) {
      const batch = all.slice(i, i + MAX_ROWS);
      try {
        const outcomes = await this.commit(batch);
        for (const [j, w] of batch.entries()) w.resolve(outcomes[j]!);
      } catch (err) {
        if (batch.length === 1) batch[0]!.reject(err);
        else for (const w of batch) await this.commit([w]).then(([o]) => w.resolve(o!), w.reject);
      }
    }
  }

  /** One transaction: the batch decided against its windows as they are now, the queued ones inserted. */
  private commit(batch: readonly Waiting[]): Promise<EnqueueOutcome[]> {
    const keys = [...new Set(batch.flatMap((w) => w.checks.map((c) => c.key)))];
    return this.conn.exclusive(keys.length === 0 ? null : this.windows.read(keys), (rows) => {
      const { admissions, changed } = decide(
        batch.map((w) => w.checks),
        rows,
        Date.now(),
      );
      const queued = batch.filter((_, j) => admissions[j]!.refusedBy === null);
      const writes = this.windows.write(changed);
      if (queued.length > 0)
        writes.push({ sql: queued.length === 1 ? this.sql.enqueue : enqueueRows(queued.length), params: queued.flatMap((w) => w.params) });
      return { writes, result: admissions };
    });
  }

  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number, createdAfter: Date): Promise<ClaimedSms[]> {
    const t = now.toISOString();
    const rows = await this.conn.all<Row>(this.sql.claim, [owner, leaseUntil.toISOString(), t, t, createdAfter.toISOString(), limit]);
    return rows
      .map((r) => ({
        id: Number(r.id),
        code: String(r.code),
        phone: String(r.phone),
        attempts: Number(r.attempts),
        createdAt: iso(r.created_at)!,
        sendStartedAt: iso(r.send_started_at),
      }))
      .sort((a, b) => a.id - b.id);
  }

  private async owned(sql: string, params: readonly unknown[]): Promise<boolean> {
    return (await this.conn.run(sql, params)) === 1;
  }

  async markStarted(ids: readonly number[], owner: string, at: Date): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.conn.all<Row>(this.sql.started(ids.map(() => '?').join(', ')), [at.toISOString(), owner, ...ids]);
    return rows.map((r) => Number(r.id));
  }

  unstart(id: number, owner: string, earlierStart: string | null): Promise<boolean> {
    return this.owned(this.sql.unstart, [earlierStart, id, owner]);
  }

  markDelivered(id: number, owner: string, at: Date): Promise<boolean> {
    return this.owned(this.sql.delivered, [at.toISOString(), id, owner]);
  }

  release(id: number, owner: string): Promise<boolean> {
    return this.owned(this.sql.release, [id, owner]);
  }

  scheduleRetry(id: number, owner: string, at: Date, error: string, answerLost: boolean): Promise<boolean> {
    return this.owned(this.sql.retryLater, [at.toISOString(), stored(error), answerLost ? 1 : 0, id, owner]);
  }

  markFailed(id: number, owner: string, at: Date, error: string, eraseCode: boolean): Promise<boolean> {
    return this.owned(this.sql.failed, [at.toISOString(), stored(error), eraseCode ? 1 : 0, id, owner]);
  }

  markExpired(id: number, owner: string, at: Date, reason: string): Promise<boolean> {
    return this.owned(this.sql.expireOne, [at.toISOString(), stored(reason), id, owner]);
  }

  expire(createdBefore: Date, now: Date, reason: string, limit: number): Promise<number> {
    const t = now.toISOString();
    return this.conn.run(this.sql.expire, [t, stored(reason), createdBefore.toISOString(), t, limit, t]);
  }

  async list(onlyFailed: boolean, limit: number): Promise<OutboxRecord[]> {
    const rows = await this.conn.all<Row>(this.sql.list, [onlyFailed ? 1 : 0, limit]);
    return rows.map((r) => ({
      id: Number(r.id),
      phone: r.phone === null ? null : String(r.phone),
      status: r.status as SmsStatus,
      attempts: Number(r.attempts),
      createdAt: iso(r.created_at)!,
      nextAttemptAt: iso(r.next_attempt_at),
      deliveredAt: iso(r.delivered_at),
      failedAt: iso(r.failed_at),
      lastError: r.last_error === null ? null : String(r.last_error),
      hasCode: Number(r.has_code) === 1,
    }));
  }

  retry(id: number | null, at: Date, createdAfter: Date): Promise<number> {
    const after = createdAfter.toISOString();
    return id === null
      ? this.conn.run(this.sql.retryFailed, [at.toISOString(), after])
      : this.conn.run(this.sql.retryOne, [at.toISOString(), id, after]);
  }

  purge(createdBefore: Date, limit: number): Promise<number> {
    return this.conn.run(this.sql.purge, [createdBefore.toISOString(), limit]);
  }

  purgeWindows(now: Date, limit: number): Promise<number> {
    return this.conn.run(this.windows.purge, [now.toISOString(), limit]);
  }

  eraseFailedCodes(failedBefore: Date, createdBefore: Date): Promise<number> {
    return this.conn.run(this.sql.erase, [failedBefore.toISOString(), createdBefore.toISOString()]);
  }

  async counts(): Promise<Record<SmsStatus, number>> {
    const counts: Record<SmsStatus, number> = { pending: 0, delivered: 0, failed: 0, expired: 0 };
    for (const r of await this.conn.all<Row>(this.sql.counts, [])) counts[r.status as SmsStatus] = Number(r.n);
    return counts;
  }

  async oldestPending(): Promise<string | null> {
    const [row] = await this.conn.all<Row>(this.sql.oldestPending, []);
    return iso(row?.t);
  }
}
