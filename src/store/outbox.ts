import type { ClaimedSms, OutboxRecord, SmsOutbox, SmsStatus } from './store';

/** What the outbox needs from a store: `?` parameters, rows as objects, the number of rows changed. */
export interface OutboxConnection {
  run(sql: string, params: readonly unknown[]): Promise<number>;
  all<T>(sql: string, params: readonly unknown[]): Promise<T[]>;
}

const RELEASE = 'lease_owner = NULL, lease_until = NULL';

/**
 * The outbox SQL, once for both stores. Times are parameters from the caller, so the same text
 * works on SQLite's ISO strings and PostgreSQL's timestamptz. The claim is one statement: on SQLite
 * one write transaction; on PostgreSQL `lock` is `FOR UPDATE SKIP LOCKED`, so concurrent claimers
 * take disjoint rows without waiting for each other.
 */
export const outboxSql = (lock: string) =>
  ({
    claim: `UPDATE auth_code_outbox SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
      WHERE id IN (SELECT id FROM auth_code_outbox
        WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)
        ORDER BY next_attempt_at, id LIMIT ? ${lock})
      RETURNING id, code, phone, attempts`,
    delivered: `UPDATE auth_code_outbox SET status = 'delivered', delivered_at = ?, code = NULL, last_error = NULL, ${RELEASE}
      WHERE id = ? AND lease_owner = ?`,
    // A claim counted an attempt; a row released unsent gives it back.
    release: `UPDATE auth_code_outbox SET attempts = attempts - 1, ${RELEASE} WHERE id = ? AND lease_owner = ? AND status = 'pending'`,
    retryLater: `UPDATE auth_code_outbox SET next_attempt_at = ?, last_error = ?, ${RELEASE} WHERE id = ? AND lease_owner = ?`,
    failed: `UPDATE auth_code_outbox SET status = 'failed', failed_at = ?, last_error = ?,
        code = CASE WHEN ? = 1 THEN NULL ELSE code END, ${RELEASE}
      WHERE id = ? AND lease_owner = ?`,
    list: `SELECT id, phone, status, attempts, created_at, next_attempt_at, delivered_at, failed_at, last_error,
        CASE WHEN code IS NULL THEN 0 ELSE 1 END AS has_code
      FROM auth_code_outbox WHERE (? = 0 OR status = 'failed') ORDER BY id DESC LIMIT ?`,
    retryOne: `UPDATE auth_code_outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, failed_at = NULL, last_error = NULL
      WHERE id = ? AND status <> 'delivered' AND code IS NOT NULL`,
    retryFailed: `UPDATE auth_code_outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, failed_at = NULL, last_error = NULL
      WHERE status = 'failed' AND code IS NOT NULL`,
    purge: `DELETE FROM auth_code_outbox WHERE status = 'delivered' AND delivered_at < ?`,
    erase: `UPDATE auth_code_outbox SET code = NULL WHERE status = 'failed' AND code IS NOT NULL AND failed_at < ?`,
    counts: 'SELECT status, count(*) AS n FROM auth_code_outbox GROUP BY status',
  }) as const;

type Row = Record<string, unknown>;
const iso = (v: unknown): string | null => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v));

export class SqlOutbox implements SmsOutbox {
  private readonly sql: ReturnType<typeof outboxSql>;

  constructor(
    private readonly conn: OutboxConnection,
    lock: string,
  ) {
    this.sql = outboxSql(lock);
  }

  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedSms[]> {
    const t = now.toISOString();
    const rows = await this.conn.all<Row>(this.sql.claim, [owner, leaseUntil.toISOString(), t, t, limit]);
    return rows
      .map((r) => ({ id: Number(r.id), code: String(r.code), phone: String(r.phone), attempts: Number(r.attempts) }))
      .sort((a, b) => a.id - b.id);
  }

  async markDelivered(id: number, owner: string, at: Date): Promise<boolean> {
    return (await this.conn.run(this.sql.delivered, [at.toISOString(), id, owner])) === 1;
  }

  async release(id: number, owner: string): Promise<boolean> {
    return (await this.conn.run(this.sql.release, [id, owner])) === 1;
  }

  async scheduleRetry(id: number, owner: string, at: Date, error: string): Promise<boolean> {
    return (await this.conn.run(this.sql.retryLater, [at.toISOString(), error, id, owner])) === 1;
  }

  async markFailed(id: number, owner: string, at: Date, error: string, eraseCode: boolean): Promise<boolean> {
    return (await this.conn.run(this.sql.failed, [at.toISOString(), error, eraseCode ? 1 : 0, id, owner])) === 1;
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

  retry(id: number | null, at: Date): Promise<number> {
    return id === null ? this.conn.run(this.sql.retryFailed, [at.toISOString()]) : this.conn.run(this.sql.retryOne, [at.toISOString(), id]);
  }

  async tidy(deliveredBefore: Date, failedBefore: Date): Promise<{ purged: number; erased: number }> {
    const purged = await this.conn.run(this.sql.purge, [deliveredBefore.toISOString()]);
    const erased = await this.conn.run(this.sql.erase, [failedBefore.toISOString()]);
    return { purged, erased };
  }

  async counts(): Promise<Record<SmsStatus, number>> {
    const counts: Record<SmsStatus, number> = { pending: 0, delivered: 0, failed: 0 };
    for (const r of await this.conn.all<Row>(this.sql.counts, [])) counts[r.status as SmsStatus] = Number(r.n);
    return counts;
  }
}
