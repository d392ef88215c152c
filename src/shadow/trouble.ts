import { log } from '../basics/log';

/** The most often a trouble line is logged: the first failure's, then a reminder at most this often. */
export const TROUBLE_LINE_MS = 60_000;

/**
 * The copies' target in trouble, in the log: the metrics count each failed copy
 * (`outcome="legacy_error"`), but someone reading the logs would learn nothing of a legacy host
 * that stopped answering. So the first failed copy is a warning naming the target and why (the
 * connection refused, no answer in time), a reminder with the count follows at most once a minute
 * while copies still fail, and the first copy answered again is a line saying so, with how many
 * failed and for how long.
 *
 * A target that fails one copy in a few (flapping) must not write a line for each change: a new
 * trouble within TROUBLE_LINE_MS of the last warning is not logged at once, its failures are counted
 * and said by the next warning (`intermittent`), so there are at most two lines a minute (a warning
 * and a recovery).
 * No timer: the lines are written as copies settle, so a target nobody copies to says nothing.
 */
export class TargetTrouble {
  /** Since when copies fail, how many have (troubles not yet logged folded in), and whether answers came between. */
  private failing: { since: number; failed: number; reason: string; logged: boolean; intermittent: boolean } | null = null;
  /** Troubles that ended before they were logged (within a minute of a warning): said by the next warning. */
  private unsaid: { since: number; failed: number } | null = null;
  private lastWarning = -Infinity;

  /** `target`: the copies' destination as logged (its origin and path); `what`: the legacy host, or this service (legacy-first). */
  constructor(
    private readonly target: string,
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Copies settled together (a message from the copier, RESULTS_MS apart at most): `failed` of them
   * failed, the last for `reason`, and `answered` were answered. Answers beside failures do not end
   * a trouble: which came last is not known, and a target that answers only some copies is in trouble.
   */
  settled(failed: number, reason: string, answered: number): void {
    if (failed > 0) this.failed(failed, reason);
    else if (answered > 0) this.answered();
  }

  private failed(n: number, reason: string): void {
    const now = this.now();
    this.failing ??= { since: now, failed: 0, reason, logged: false, intermittent: false };
    const f = this.failing;
    f.failed += n;
    f.reason = reason;
    if (now - this.lastWarning < TROUBLE_LINE_MS) return;
    if (!f.logged && this.unsaid !== null) {
      // Copies failed and were answered in turns since the last line: one trouble, said as one.
      f.since = this.unsaid.since;
      f.failed += this.unsaid.failed;
      f.intermittent = true;
      this.unsaid = null;
    }
    const fields = {
      target: this.target,
      reason,
      failed: f.failed,
      since: new Date(f.since).toISOString(),
      ...(f.intermittent ? { intermittent: true } : {}),
    };
    log.warn(`shadow copies to ${this.what} ${f.logged ? 'still fail' : 'fail'}`, fields);
    f.logged = true;
    this.lastWarning = now;
  }

  private answered(): void {
    const f = this.failing;
    if (f === null) return;
    this.failing = null;
    if (f.logged) {
      log.info(`shadow copies to ${this.what} answered again`, {
        target: this.target,
        failed: f.failed,
        forMs: this.now() - f.since,
        lastReason: f.reason,
      });
      return;
    }
    this.unsaid = { since: this.unsaid?.since ?? f.since, failed: (this.unsaid?.failed ?? 0) + f.failed };
  }
}
