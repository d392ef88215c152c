import type { Labels } from './metrics';

/**
 * What shadowing does when copies come faster than its copier settles them: it compares one in
 * `every` copies of each operation and binding, deliberately, and counts the rest (dropped, reason
 * `sampled`), rather than letting a full queue drop whatever arrives while it is full (a burst of one
 * operation, none of another). Per operation and binding, so that each keeps its share of the
 * comparisons whatever the others' traffic; one in N rather than at random, so that the share is
 * exact over any stretch of traffic.
 *
 * `every` starts at 1 (every copy compared) and moves with how full the queue is, read at each of the
 * copier's reports (copier.ts, at most RESULTS_MS apart while it settles copies): doubled at each
 * report while the copies in flight fill three quarters of SHADOW_CONCURRENCY + SHADOW_QUEUE (the
 * copier behind, copies about to be dropped); halved for each RELAX_MS without such a report, whether
 * reports come or not (once traffic stops there are none), so that a few seconds after an overload
 * every copy is compared again. A burst the queue holds is all compared, however long it waits; on a
 * machine the copies keep up with, N stays at 1.
 */
export class Sampler {
  private n = 1;
  private readonly seen = new Map<string, number>();
  /** When `n` last doubled or halved. */
  private movedAt = 0;

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** One in `every` copies of each operation and binding is compared. */
  get every(): number {
    // Relaxed lazily: halved for each RELAX_MS since it last moved.
    while (this.n > 1 && this.now() - this.movedAt >= RELAX_MS) {
      this.n /= 2;
      this.movedAt += RELAX_MS;
    }
    return this.n;
  }

  /** Whether this copy is left out (one of the `every - 1` in each `every`, per operation and binding). */
  skip(labels: Labels): boolean {
    if (this.every === 1) return false;
    const key = `${labels.operation ?? ''}\n${labels.binding ?? ''}`;
    const n = this.seen.get(key) ?? 0;
    this.seen.set(key, n + 1);
    return n % this.n !== 0;
  }

  /** At the copier's report: how full the queue is (0 to 1). */
  adjust(fill: number): void {
    if (fill < BEHIND) return;
    this.n = Math.min(MAX_EVERY, this.every * 2);
    this.movedAt = this.now();
  }
}

/** The copier is behind once the copies in flight fill this share of the queue. */
export const BEHIND = 0.75;
/** From 1,024 back to every copy in about 2.5 s without a report that the copier is behind. */
const RELAX_MS = 250;
/** At most one in this many copies is left out: every operation keeps some comparisons whatever the load. */
const MAX_EVERY = 1024;
