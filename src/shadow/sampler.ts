import type { Labels } from './metrics';

/**
 * What shadowing does when copies come faster than its copier settles them: it compares one in
 * `every` copies of each operation and binding, deliberately, and counts the rest (dropped, reason
 * `sampled`), rather than letting a full queue drop whatever arrives while it is full (a burst of one
 * operation, none of another). Per operation and binding, so that each keeps its share of the
 * comparisons whatever the others' traffic; one in N rather than at random, so that the share is
 * exact over any stretch of traffic.
 *
 * `every` starts at 1 (every copy compared) and moves with how far behind the copier is, read at each
 * of its reports (copier.ts, at most RESULTS_MS apart while it settles copies): doubled while the
 * oldest copy waiting in it has waited BEHIND_MS or the copies in flight fill three quarters of the
 * queue; halved, at most once a RELAX_MS, once it has caught up (the oldest waiting CAUGHT_UP_MS at
 * most, the queue under a quarter full). On a machine the copies keep up with, it stays at 1.
 */
export class Sampler {
  /** One in `every` copies of each operation and binding is compared. */
  every = 1;
  private readonly seen = new Map<string, number>();
  private relaxedAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether this copy is left out (one of the `every - 1` in each `every`, per operation and binding). */
  skip(labels: Labels): boolean {
    if (this.every === 1) return false;
    const key = `${labels.operation ?? ''}\n${labels.binding ?? ''}`;
    const n = this.seen.get(key) ?? 0;
    this.seen.set(key, n + 1);
    return n % this.every !== 0;
  }

  /** The copier's report: how long its oldest waiting copy has waited, and how full the queue is (0 to 1). */
  adjust(waitedMs: number, fill: number): void {
    if (waitedMs >= BEHIND_MS || fill >= 0.75) {
      this.every = Math.min(MAX_EVERY, this.every * 2);
      this.relaxedAt = this.now();
    } else if (this.every > 1 && waitedMs <= CAUGHT_UP_MS && fill <= 0.25 && this.now() - this.relaxedAt >= RELAX_MS) {
      this.every /= 2;
      this.relaxedAt = this.now();
    }
  }
}

/** A copy waiting this long in the copier means it is falling behind: copies are otherwise sent within a few tens of ms. */
export const BEHIND_MS = 500;
const CAUGHT_UP_MS = 100;
const RELAX_MS = 1000;
/** At most one in this many copies is left out: every operation keeps some comparisons whatever the load. */
const MAX_EVERY = 1024;
