import { Redis } from 'ioredis';
import { log } from '../basics/log';
import { smsMetrics } from './metrics';

/**
 * Rate counters. A window starts at a key's first hit and lasts `windowMs` (so a burst cannot
 * straddle a clock boundary and get twice the limit). Keys are hashes, never phones or codes.
 */
export interface Limiter {
  /** Counts one hit; true while the window's hits are within `limit`. */
  hit(key: string, limit: number, windowMs: number): Promise<boolean>;
  /** True the first time `key` is seen within `ttlMs`. */
  first(key: string, ttlMs: number): Promise<boolean>;
  /** Takes back one hit of a window still open (the request it counted was not queued after all). */
  unhit(key: string): Promise<void>;
  /** Forgets a `first` key: the next call with it is first again. */
  forget(key: string): Promise<void>;
  close(): Promise<void>;
}

/** Beyond this many live keys the oldest windows are forgotten: a flood of new phones cannot exhaust memory. */
const MAX_KEYS = 100_000;

/** One process's counters. */
export class MemoryLimiter implements Limiter {
  private readonly windows = new Map<string, { count: number; until: number }>();

  async hit(key: string, limit: number, windowMs: number): Promise<boolean> {
    return this.count(key, windowMs) <= limit;
  }

  async first(key: string, ttlMs: number): Promise<boolean> {
    return this.count(key, ttlMs) === 1;
  }

  async unhit(key: string): Promise<void> {
    const w = this.windows.get(key);
    if (w !== undefined && w.until > Date.now() && w.count > 0) w.count -= 1;
  }

  async forget(key: string): Promise<void> {
    this.windows.delete(key);
  }

  private count(key: string, windowMs: number): number {
    const now = Date.now();
    let w = this.windows.get(key);
    if (w === undefined || w.until <= now) {
      if (w !== undefined) this.windows.delete(key);
      if (this.windows.size >= MAX_KEYS) this.evict(now);
      w = { count: 0, until: now + windowMs };
      this.windows.set(key, w);
    }
    w.count += 1;
    return w.count;
  }

  /** Drops ended windows, then the oldest (a Map iterates in insertion order) down to 90%. */
  private evict(now: number): void {
    for (const [key, w] of this.windows) if (w.until <= now) this.windows.delete(key);
    for (const key of this.windows.keys()) {
      if (this.windows.size < MAX_KEYS * 0.9) break;
      this.windows.delete(key);
    }
  }

  async close(): Promise<void> {
    this.windows.clear();
  }
}

const UNHIT = "if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then return redis.call('DECR', KEYS[1]) end return 0";

/**
 * Counters in Redis, shared by every process and instance; per-process counters while Redis cannot
 * be reached, so that sign-in goes on. Commands are never queued while disconnected and time out
 * quickly: a Redis outage costs a request at most one short time-out, then none until it is back.
 */
export class SharedLimiter implements Limiter {
  private readonly redis: Redis;
  private readonly local = new MemoryLimiter();
  private degraded = false;

  constructor(url: string, private readonly prefix: string) {
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.on('error', (err: Error) => this.fallBack(err));
    this.redis.on('ready', () => {
      if (!this.degraded) return;
      this.degraded = false;
      smsMetrics.fallback.set(0);
      log.info('Redis is reachable again: SMS limits are shared across processes');
    });
  }

  /** True while the counters are Redis's. */
  get shared(): boolean {
    return this.redis.status === 'ready' && !this.degraded;
  }

  private fallBack(err: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    smsMetrics.fallback.set(1);
    // Said once per outage; the URL is not logged (it may carry a password).
    log.warn('Redis unreachable: SMS limits are per process until it is back', { error: err.message });
  }

  private async use<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.redis.status !== 'ready') return local();
    try {
      return await shared();
    } catch (err) {
      this.fallBack(err as Error);
      return local();
    }
  }

  hit(key: string, limit: number, windowMs: number): Promise<boolean> {
    const k = this.prefix + key;
    return this.use(
      async () => {
        // SET NX starts the window with its expiry; INCR keeps the expiry. Atomic as one MULTI.
        const replies = await this.redis.multi().set(k, '0', 'PX', windowMs, 'NX').incr(k).exec();
        const [err, n] = replies?.[1] ?? [new Error('transaction discarded'), 0];
        if (err) throw err;
        return Number(n) <= limit;
      },
      () => this.local.hit(key, limit, windowMs),
    );
  }

  first(key: string, ttlMs: number): Promise<boolean> {
    return this.use(
      async () => (await this.redis.set(this.prefix + key, '1', 'PX', ttlMs, 'NX')) === 'OK',
      () => this.local.first(key, ttlMs),
    );
  }

  unhit(key: string): Promise<void> {
    return this.use(
      // Only a window that still exists: a DECR after it ended would start one at -1 with no expiry.
      async () => void (await this.redis.eval(UNHIT, 1, this.prefix + key)),
      () => this.local.unhit(key),
    );
  }

  forget(key: string): Promise<void> {
    return this.use(
      async () => void (await this.redis.del(this.prefix + key)),
      () => this.local.forget(key),
    );
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.local.close();
  }
}
