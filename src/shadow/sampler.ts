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
 * of its reports (copier.ts, at most RESULTS_MS apart while it settles copies): doubled at each report
 * while the oldest copy waiting in it has waited BEHIND_MS or the copies in flight fill three
 * quarters of the queue; halved for each RELAX_MS without such a report, whether reports come or not
 * (once traffic stops there are none), so that a few seconds after an overload every copy is compared
 * again. On a machine the copies keep up with, it stays at 1.
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

  /** The copier's report: how long its oldest waiting copy has waited, and how full the queue is (0 to 1). */
  adjust(waitedMs: number, fill: number): void {
    if (waitedMs < BEHIND_MS && fill < 0.75) return;
    this.n = Math.min(MAX_EVERY, this.every * 2);
    this.movedAt = this.now();
  }
}

/** A copy waiting this long in the copier means it is falling behind: copies are otherwise sent within a few tens of ms. */
export const BEHIND_MS = 500;
/** From 1,024 back to every copy in about 2.5 s without a report that the copier is behind. */
const RELAX_MS = 250;
/** At most one in this many copies is left out: every operation keeps some comparisons whatever the load. */
const MAX_EVERY = 1024;
