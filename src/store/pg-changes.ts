import { Client, type ClientConfig } from 'pg';
import { log } from '../basics/log';

/** Where PostgreSQL migration 4's trigger announces a change to students; the payload is the table's schema. */
const CHANNEL = 'student_info_changed';

/**
 * The trigger's state and the schema the students table is in, read on the listening connection:
 * how the watch knows that the trigger still fires for every writer (ENABLE ALWAYS: 'A') and that
 * its connection still answers. xmin changes with any ALTER of the trigger, even one undone in the
 * same transaction as writes it let through (DISABLE, write, ENABLE): a change of it forgets everything.
 */
const TRIGGER_STATE = `SELECT n.nspname AS schema, t.tgenabled AS enabled, t.xmin::text AS altered
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_trigger t ON t.tgrelid = c.oid AND t.tgname = 'students_changed'
  WHERE c.oid = to_regclass('students')`;

export interface WatchTiming {
  /** How often the listening connection is asked the trigger's state (its heartbeat). */
  heartbeatMs: number;
  /** How long that question, or connecting, may take before the connection counts as lost. */
  timeoutMs: number;
  /** Waits before each new connection after a loss, the last repeated. */
  reconnectMs: readonly number[];
}

/**
 * The bound on a stale roster when the listening connection stops answering without closing:
 * notice within heartbeat + time-out (docs/storage.md states it).
 */
export const WATCH_TIMING: WatchTiming = { heartbeatMs: 1000, timeoutMs: 2000, reconnectMs: [100, 500, 1000, 2000, 5000] };

/**
 * Whether the students table may have changed since a roster was read, for PostgreSQL, where several
 * instances and other systems write one database. One connection per process LISTENs for migration
 * 4's trigger; `version()` moves on every notification for this schema, and is null (nothing may be
 * kept) whenever the watch cannot vouch for having heard every change: before it listens, while its
 * connection is lost or does not answer its heartbeat, while the trigger is missing or not ENABLE
 * ALWAYS. Coming back moves the version too, so nothing read before the gap survives it.
 *
 * A commit on another instance reaches this one when its notification arrives (PostgreSQL sends it
 * at the commit; on one host about a millisecond). Until then this process may answer the roster as
 * it was just before that commit, the same as a request that reached it a moment earlier.
 */
export class StudentChanges {
  private epoch = 0;
  private live = false;
  private client: Client | null = null;
  private schema: string | null = null;
  /** The trigger's last seen state ("schema:xmin"), or null when it was not usable. */
  private trigger: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private warnedTrigger = false;
  private closed = false;

  constructor(
    private readonly config: ClientConfig,
    private readonly timing: WatchTiming = WATCH_TIMING,
  ) {}

  /** The version to keep rosters under, or null: read from the database every time. */
  version(): number | null {
    return this.live ? this.epoch : null;
  }

  /** Resolves once the first connection has been tried, listening or not (a failure is retried later). */
  start(): Promise<void> {
    return this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    if (this.timer !== null) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    if (client !== null) await client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ ...this.config, connectionTimeoutMillis: this.timing.timeoutMs, query_timeout: this.timing.timeoutMs });
    this.client = client;
    client.on('notification', (n) => {
      if (n.channel === CHANNEL && n.payload === this.schema) this.epoch += 1;
    });
    client.on('error', (err) => this.lost(client, err.message));
    client.on('end', () => this.lost(client, 'connection ended'));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      // Listening before the first check: a change committed after it is heard, one before it is forgotten by the check's move.
      await this.check(client);
      if (this.failures > 0) log.info('roster cache: listening for changes again');
      this.failures = 0;
      this.beat(client);
    } catch (e) {
      this.lost(client, (e as Error).message);
    }
  }

  private beat(client: Client): void {
    // Closed, or lost and replaced, while the last check was under way: this connection beats no more.
    if (client !== this.client) return;
    this.timer = setTimeout(() => {
      this.check(client).then(
        () => this.beat(client),
        (e: unknown) => this.lost(client, (e as Error).message),
      );
    }, this.timing.heartbeatMs);
    this.timer.unref();
  }

  private async check(client: Client): Promise<void> {
    const { rows } = await client.query<{ schema: string; enabled: string | null; altered: string | null }>(TRIGGER_STATE);
    if (client !== this.client) return;
    const row = rows[0];
    const usable = row !== undefined && row.enabled === 'A';
    const state = usable ? `${row.schema}:${row.altered}` : null;
    if (state !== this.trigger || !this.live) this.epoch += 1;
    if (!usable && !this.warnedTrigger) {
      log.warn('roster cache off: the students_changed trigger is missing or not ENABLE ALWAYS; every roster is read from the database', {
        fix: 'ALTER TABLE students ENABLE ALWAYS TRIGGER students_changed',
      });
    }
    this.warnedTrigger = !usable;
    this.schema = row?.schema ?? null;
    this.trigger = state;
    this.live = usable;
  }

  private lost(client: Client, why: string): void {
    if (client !== this.client) return;
    this.client = null;
    this.live = false;
    this.trigger = null;
    this.epoch += 1;
    if (this.timer !== null) clearTimeout(this.timer);
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.closed) return;
    if (this.failures === 0)
      log.warn('roster cache off: lost the connection listening for changes; reading every roster from the database until it is back', {
        error: why,
      });
    const wait = this.timing.reconnectMs[Math.min(this.failures, this.timing.reconnectMs.length - 1)]!;
    this.failures += 1;
    this.timer = setTimeout(() => void this.connect(), wait);
    this.timer.unref();
  }
}
