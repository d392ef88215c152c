import type { Redis } from 'ioredis';
import { log } from '../basics/log';
import type { FullWindow, LimitCheck } from '../store/store';
import { smsMetrics } from './metrics';

/**
 * What the intake remembers of the store's limits: windows the store reported at their limit
 * (FullWindow). The store is the authority (every AuthCode is decided in its transaction, outbox.ts);
 * this only spares it the requests it would refuse anyway. Nothing takes a hit back, so a window
 * known to hold `hits` until `until` holds at least that many until then: a remembered window can
 * only refuse what the store would refuse, and forgetting one (eviction, a restart, Redis away)
 * costs a store round trip, never a limit. Keys are hashes, never phones, codes or addresses.
 */
export interface Limiter {
  /** The first of `checks` whose window is known to be at its limit now, or null: ask the store. */
  knownFull(checks: readonly LimitCheck[]): Promise<LimitCheck | null>;
  /** Remembers windows the store reported at their limit. */
  remember(windows: readonly FullWindow[]): Promise<void>;
  close(): Promise<void>;
}

/** Windows remembered at most: a flood cannot grow memory (the store keeps the limits, not this). */
const MAX_KEYS = 10_000;

/** One process's memory of full windows. */
export class MemoryLimiter implements Limiter {
  private readonly windows = new Map<string, { hits: number; until: number }>();

  constructor(private readonly maxKeys = MAX_KEYS) {}

  async knownFull(checks: readonly LimitCheck[]): Promise<LimitCheck | null> {
    const now = Date.now();
    for (const c of checks) {
      const w = this.windows.get(c.key);
      if (w !== undefined && w.until > now && w.hits >= c.limit) return c;
    }
    return null;
  }

  async remember(windows: readonly FullWindow[]): Promise<void> {
    const now = Date.now();
    for (const { key, hits, until } of windows) {
      if (until <= now) continue;
      this.windows.delete(key); // set again last: the Map's order is the eviction order
      if (this.windows.size >= this.maxKeys) this.evict(now);
      this.windows.set(key, { hits, until });
    }
  }

  /** How many windows are remembered. */
  get size(): number {
    return this.windows.size;
  }

  /** Drops ended windows, then the oldest remembered down to 90%: only speed is lost. */
  private evict(now: number): void {
    for (const [key, w] of this.windows) if (w.until <= now) this.windows.delete(key);
    for (const key of this.windows.keys()) {
      if (this.windows.size < this.maxKeys * 0.9) break;
      this.windows.delete(key);
    }
  }

  async close(): Promise<void> {
    this.windows.clear();
  }
}

/**
 * Full windows remembered in Redis, shared by every process and instance (one process's refusal
 * spares the others the store); this process's memory while Redis cannot be reached. Either way the
 * store decides, so the limits never depend on Redis. Commands are never queued while disconnected
 * and time out quickly: a Redis outage costs a request at most one short time-out, then none until
 * it is back.
 */
export class SharedLimiter implements Limiter {
  private readonly redis: Redis;
  private readonly local = new MemoryLimiter();
  private degraded = false;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    // Loaded only where a Redis is configured: ioredis is some tens of milliseconds of every start otherwise.
    const { Redis } = require('ioredis') as typeof import('ioredis');
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
      log.info('Redis is reachable again: full SMS limit windows are remembered across processes');
    });
  }

  /** True while the memory is Redis's. */
  get shared(): boolean {
    return this.redis.status === 'ready' && !this.degraded;
  }

  private fallBack(err: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    smsMetrics.fallback.set(1);
    // Said once per outage; the URL is not logged (it may carry a password).
    log.warn(
      'Redis unreachable: the SMS limits still hold (the store keeps them); full windows are remembered per process until it is back',
      {
        error: err.message,
      },
    );
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

  knownFull(checks: readonly LimitCheck[]): Promise<LimitCheck | null> {
    if (checks.length === 0) return Promise.resolve(null);
    return this.use(
      async () => {
        // Each value is the window's hits; Redis drops the key when the window ends (PXAT).
        const hits = await this.redis.mget(checks.map((c) => this.prefix + c.key));
        return checks.find((c, i) => hits[i] !== null && Number(hits[i]) >= c.limit) ?? null;
      },
      () => this.local.knownFull(checks),
    );
  }

  remember(windows: readonly FullWindow[]): Promise<void> {
    const now = Date.now();
    const live = windows.filter((w) => w.until > now);
    if (live.length === 0) return Promise.resolve();
    return this.use(
      async () => {
        const pipeline = this.redis.pipeline();
        for (const w of live) pipeline.set(this.prefix + w.key, String(w.hits), 'PXAT', w.until);
        for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
      },
      () => this.local.remember(live),
    );
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.local.close();
  }
}
