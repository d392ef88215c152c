import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { isBusy, LOCK_WAIT_LIMIT_MS } from './busy';

/**
 * Below this many bytes free on the file system holding the SQLite file, the store counts as full:
 * a write needs new pages in the -wal file and, at the checkpoint, in the file itself, and a write
 * that happens to fit in space the -wal already has would make a full disk look writable.
 */
export const MIN_FREE_BYTES = 1024 * 1024;
/** A probe's answer is reused this long: /readyz, the console and a cluster's workers may all ask. */
const PROBE_EVERY_MS = 1000;

/**
 * Readiness's question "can this store take an AuthCode now?", answered by writing: rolling back an
 * empty transaction writes nothing, so a full disk passed it while every AuthCode failed. The probe
 * commits one real write (the header's application_id rewritten with its own value: one -wal frame,
 * no row changed), checks the free space the next writes need, and tells a lock held past the limit
 * that AuthCodes wait for (LOCK_WAIT_LIMIT_MS) from one that is merely busy: it never waits for the
 * lock itself, so a probe answers at once. Ready again as soon as a write succeeds.
 */
export class WriteProbe {
  private checkedAt = -Infinity;
  private problem: string | null = null;
  /** Since when every try met another connection's lock, or null. */
  private busySince: number | null = null;

  constructor(
    private readonly db: Database.Database,
    private readonly location: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Null when a write succeeded (or the lock is only briefly held), else why the store cannot take one. */
  check(): string | null {
    const now = this.now();
    if (now - this.checkedAt < PROBE_EVERY_MS) return this.problem;
    this.checkedAt = now;
    this.problem = this.freeSpaceProblem() ?? this.writeProblem(now);
    return this.problem;
  }

  private freeSpaceProblem(): string | null {
    if (this.location === ':memory:' || this.location === '') return null;
    let free: number;
    try {
      const fs = statfsSync(dirname(this.location));
      // root may use the blocks a file system keeps back for it; any other user may not.
      free = (process.getuid?.() === 0 ? fs.bfree : fs.bavail) * fs.bsize;
    } catch {
      return null; // no statfs here: the write below still answers
    }
    if (free >= MIN_FREE_BYTES) return null;
    return `cannot write: the file system holding ${this.location} has ${free} bytes free (the store needs at least ${MIN_FREE_BYTES})`;
  }

  private writeProblem(now: number): string | null {
    if (this.db.inTransaction) return null; // this connection is writing right now: it can
    try {
      const id = this.db.pragma('application_id', { simple: true }) as number;
      this.db.pragma(`application_id = ${id}`);
      this.busySince = null;
      return null;
    } catch (e) {
      if (!isBusy(e)) {
        this.busySince = null;
        return `cannot write: ${(e as Error).message}`;
      }
      this.busySince ??= now;
      const held = now - this.busySince;
      if (held <= LOCK_WAIT_LIMIT_MS) return null;
      return `cannot write: another connection has held the write lock for ${Math.round(held / 1000)} s (AuthCodes give up after ${LOCK_WAIT_LIMIT_MS / 1000} s)`;
    }
  }
}
