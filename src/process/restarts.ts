/**
 * When the cluster primary starts a replacement worker, and when it gives up. A worker that dies is
 * replaced after a delay that doubles with each death, from FIRST_MS to MAX_MS, so a worker that
 * crashes on every request, or cannot start (a setting, the store, the disk), does not make the
 * primary fork in a tight loop; once a worker has served STEADY_MS the delay is short again. A worker
 * that fails to start is retried like any other, the others serving meanwhile; only when
 * GIVE_UP_AFTER starts in a row have failed and no worker is serving does the primary give up.
 */
export const RESTART_POLICY = { firstMs: 100, maxMs: 30_000, steadyMs: 60_000, giveUpAfter: 5 };

export class Restarts {
  private delayMs: number;
  private failedStarts = 0;

  constructor(private readonly policy = RESTART_POLICY) {
    this.delayMs = policy.firstMs;
  }

  /** A worker has started serving: starts are failing no longer. */
  started(): void {
    this.failedStarts = 0;
  }

  /** A worker has served for policy.steadyMs: the next replacement comes quickly again. */
  steady(): void {
    this.delayMs = this.policy.firstMs;
  }

  /**
   * A worker exited (`started`: whether it ever served); `serving`: how many still serve. The delay
   * before its replacement starts, or null to give up.
   */
  exited(started: boolean, serving: number): number | null {
    if (!started && ++this.failedStarts >= this.policy.giveUpAfter && serving === 0) return null;
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.policy.maxMs);
    return delay;
  }

  /** Starts that failed in a row. */
  get failures(): number {
    return this.failedStarts;
  }
}
