import { log } from '../basics/log';

/** Comparisons settled together: what the verdict's totals add. */
export interface Compared {
  compared: number;
  real: number;
  noise: number;
  /** When the first of them was settled, in the copier (ISO). */
  first: string;
}

/** Where settled comparisons go to be kept (the store, wired by process/server.ts). */
export type ComparedSink = (batch: Compared) => Promise<void>;

/**
 * How often the comparisons settled meanwhile are written, added up: one statement a second rather
 * than one for each of the copier's reports (up to dozens a second), each a transaction on the
 * client's thread. A kill loses at most this much of the counts (docs/shadow.md).
 */
export const TOTALS_MS = 1000;

/**
 * Settled comparisons on their way to the sink: added up here and written at most every TOTALS_MS,
 * and at once by `close`, which a stop awaits. A failed write is logged, never thrown at the
 * client's thread.
 */
export class PendingTotals {
  private pending: Compared | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly writing = new Set<Promise<void>>();

  constructor(private readonly sink: ComparedSink) {}

  add(batch: Compared): void {
    const p = this.pending;
    // `first` is an ISO time: the earlier of two is the lesser string.
    const first = p === null || batch.first < p.first ? batch.first : p.first;
    this.pending =
      p === null ? { ...batch } : { compared: p.compared + batch.compared, real: p.real + batch.real, noise: p.noise + batch.noise, first };
    this.timer ??= setTimeout(() => this.flush(), TOTALS_MS).unref();
  }

  /** What is pending written now, and every write under way finished. */
  async close(): Promise<void> {
    this.flush();
    await Promise.all(this.writing);
  }

  private flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = null;
    if (batch === null) return;
    const done: Promise<void> = this.sink(batch)
      .catch((error: unknown) => log.error('shadow totals not written: these comparisons are not counted', { ...batch, error }))
      .finally(() => this.writing.delete(done));
    this.writing.add(done);
  }
}
