import type { SmsConfig } from '../config';
import { log } from '../basics/log';
import type { SmsOutbox } from '../store/store';
import { setOldestPending, smsMetrics } from './metrics';

type RetentionOptions = Pick<SmsConfig, 'retentionDays' | 'failedHoldMinutes' | 'codeTtlSeconds'>;

const EVERY_MS = 60_000;
const DAY = 86_400_000;
/** Rows changed by one statement: a short write, whatever the backlog (SQLite's lock is the file's). */
const BATCH = 500;
/** Between batches, other writers (AuthCode's inserts, claims) get the lock. */
const PAUSE_MS = 20;

/**
 * The outbox's housekeeping, on a timer of its own, off the request path: pending codes past their
 * lifetime expire (counted; a code sent late is useless and may confuse), failed codes are erased
 * after their hold, and delivered, failed and expired rows are purged SMS_RETENTION_DAYS after they
 * were queued; the limits' windows that have ended are deleted (they count nothing, and what is
 * stored stays bounded by what the budgets let through). Every step works in bounded batches with a
 * pause between them.
 */
export class Retention {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    private readonly outbox: SmsOutbox,
    private readonly options: RetentionOptions,
    private readonly batch = BATCH,
  ) {}

  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), EVERY_MS).unref();
  }

  /** No new pass; resolves once the one under way has ended (between two batches at most). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.pass;
  }

  private tick(): void {
    this.pass ??= this.runOnce()
      .catch((err: Error) => log.warn('SMS outbox housekeeping failed; trying again later', { error: err.message }))
      .finally(() => (this.pass = null));
  }

  /** One pass: what it expired, erased and purged, and how many ended limit windows it deleted. */
  async runOnce(): Promise<{ expired: number; erased: number; purged: number; windows: number }> {
    const now = Date.now();
    const validSince = new Date(now - this.options.codeTtlSeconds * 1000);
    const reason = `code expired after ${this.options.codeTtlSeconds} s; not sent`;
    const expired = await this.batches((limit) => this.outbox.expire(validSince, new Date(), reason, limit));
    smsMetrics.expired.inc(expired);
    const erased = await this.outbox.eraseFailedCodes(new Date(now - this.options.failedHoldMinutes * 60_000), validSince);
    const purged = await this.batches((limit) => this.outbox.purge(new Date(now - this.options.retentionDays * DAY), limit));
    smsMetrics.purged.inc(purged);
    const windows = await this.batches((limit) => this.outbox.purgeWindows(new Date(now), limit));
    if (expired > 0)
      log.warn('SMS codes expired before they could be sent; not sent', { expired, ttlSeconds: this.options.codeTtlSeconds });
    if (erased + purged + windows > 0) log.info('SMS outbox tidied', { purged, codesErased: erased, limitWindows: windows });
    for (const [status, n] of Object.entries(await this.outbox.counts())) smsMetrics.outbox.set({ status }, n);
    setOldestPending(await this.outbox.oldestPending());
    return { expired, erased, purged, windows };
  }

  private async batches(step: (limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await step(this.batch);
      total += n;
      if (n < this.batch || this.stopped) return total;
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
  }
}
