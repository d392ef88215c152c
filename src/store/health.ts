/**
 * Whether the store can take a write, as readiness reports it (Store.ping). Ready means able: the
 * only proof that a store takes writes is a write committed, so a probe writes the heartbeat row
 * (migrations: store_heartbeat) and commits it. A probe costs a commit (an fsync), so it runs on
 * demand, at most once per PROBE_INTERVAL_MS, and its result is kept until then; callers meanwhile
 * share the last result. Real traffic counts too: an outbox statement that fails for a reason of the
 * store (disk full, read-only, a lock held past its limit, the connection lost) makes the store not
 * ready at once, until a probe begun after that failure commits.
 */

/** The shortest time between two probes: a readiness answer is at most this old, plus one probe. */
export const PROBE_INTERVAL_MS = 1000;
/**
 * How long a readiness answer waits for a probe under way before answering with the previous
 * result: a probe waiting for another connection's lock (up to its limit, as a request would) must
 * not hold /readyz past a balancer's time-out (Kubernetes' default is 1 s). The first probe is
 * always waited for.
 */
export const ANSWER_WAIT_MS = 500;

interface Result {
  /** When the probe began, or the failure was seen (the clock's reading). */
  at: number;
  /** Why the store cannot write, or null when it could. */
  problem: string | null;
}

export class WriteHealth {
  private last: Result | null = null;
  private running: Promise<void> | null = null;

  /**
   * `probe` writes and commits, rejecting with why not; `isStoreFault` says whether a failed
   * statement of real traffic was the store's (not a constraint or a bug in a statement).
   */
  constructor(
    private readonly probe: () => Promise<void>,
    private readonly isStoreFault: (err: unknown) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** Resolves when the store took a write lately; rejects with "cannot write: <why>" otherwise. */
  async check(): Promise<void> {
    const last = this.last;
    if (last === null || this.now() - last.at >= PROBE_INTERVAL_MS) {
      const probe = this.start();
      if (last === null) await probe;
      else await within(probe, ANSWER_WAIT_MS);
    }
    const problem = this.last?.problem ?? null;
    if (problem !== null) throw new Error(problem);
  }

  /** Runs one statement of real traffic; its failure, when it is the store's, is remembered at once. */
  async observe<T>(statement: () => Promise<T>): Promise<T> {
    try {
      return await statement();
    } catch (err) {
      if (this.isStoreFault(err)) this.last = { at: this.now(), problem: `cannot write: ${(err as Error).message}` };
      throw err;
    }
  }

  private start(): Promise<void> {
    if (this.running !== null) return this.running;
    const began = this.now();
    const settle = (problem: string | null) => {
      this.running = null;
      // A failure of real traffic seen while this probe ran is newer than what the probe proves.
      if (this.last === null || this.last.at <= began) this.last = { at: began, problem };
    };
    this.running = this.probe().then(
      () => settle(null),
      (err: unknown) => settle(`cannot write: ${(err as Error).message}`),
    );
    return this.running;
  }
}

/** Resolves when `p` settles or after `ms`, whichever comes first. */
function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
