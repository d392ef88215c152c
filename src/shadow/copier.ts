import { answerCap, ByteBudget } from './budget';
import { type Answer, compareLive, type Difference } from './compare';
import type { CopyJob } from './frames';
import type { DropReason, Labels } from './metrics';
import { ANSWER_TOO_LARGE } from './answer';
import { asText, compareSent, ReadAgainst, sentOf } from './sent';
import { Wire } from './wire';

/**
 * The copies' own process: it puts each copy to the target (on SHADOW_CONCURRENCY connections,
 * SHADOW_PIPELINE copies on each at once) and compares the answer with the client's. Sending and
 * comparing cost CPU on the machine that answers clients, so they run here, at the lowest priority
 * (mirror.ts starts it), on an HTTP client of their own (wire.ts), and the event loop that answers
 * clients only hands copies over and counts.
 */

/** Where the copies go, as plain data (it crosses to the copier process). */
export interface CopyTarget {
  /** The target's origin, e.g. http://legacy-host:80 */
  origin: string;
  /** The copy's path is `prefix` + the client's path without its first `strip` characters (a virtual directory moved). */
  prefix: string;
  strip: number;
  /** Whether the copy keeps the client's Host header (else the target's own). */
  keepHost: boolean;
  /** Which answer is the legacy one: the client's (legacy-first) or the copy's (service-first). */
  primary: 'ours' | 'legacy';
  concurrency: number;
  /** SHADOW_QUEUE: copies waiting beyond those in flight; the service drops (or samples) beyond. */
  queue: number;
  /** SHADOW_PIPELINE: copies on each connection at once (wire.ts); above 1 only when no operation with effects is copied (config/shadow.ts). */
  pipeline: number;
  timeoutMs: number;
  /** SHADOW_QUEUE_BYTES: the copier's own budget for the copies it holds, and (shared by the copies in flight) the cap on each answer it reads. */
  queueBytes: number;
  /** A second legacy site (its own Host always), asked only when the answers differ: see Copier.noise. */
  secondary: Pick<CopyTarget, 'origin' | 'prefix' | 'strip'> | null;
}

/** Where one copy is sent: a connection pool and how the client's path moves onto the site. */
interface Site {
  wire: Wire;
  prefix: string;
  strip: number;
  hostLine: string;
}

function siteOf(
  target: Pick<CopyTarget, 'origin' | 'prefix' | 'strip'>,
  keepHost: boolean,
  cap: number,
  connections: number,
  depth: number,
): Site {
  const origin = new URL(target.origin);
  return {
    wire: new Wire(origin, cap, connections, depth),
    prefix: target.prefix,
    strip: target.strip,
    hostLine: keepHost ? '' : `Host: ${origin.host}\r\n`,
  };
}

/**
 * A copy's outcome: its answer matched, differed (then with the copy and both answers as text), never
 * came, or the copy was dropped (not compared, for `reason`). `bytes`: what the copy's frame took,
 * given back to the budgets once the service hears of it.
 */
export type CopyResult = { requestId: string; labels: Labels; bytes: number } & (
  | { outcome: 'match' }
  | { outcome: 'error'; reason: string }
  | { outcome: 'dropped'; reason: DropReason }
  | { outcome: 'difference'; job: CopyJob; legacy: Answer; ours: Answer; differences: Difference[]; noise: boolean }
);

export class Copier {
  private readonly waiting: Array<{ job: CopyJob; bytes: number }> = [];
  private active = 0;
  private readonly site: Site;
  private readonly secondary: Site | null;
  /** What the copies here hold, bounded as the service bounds them: a frame that does not fit is dropped. */
  private readonly budget: ByteBudget;

  constructor(
    private readonly target: CopyTarget,
    private readonly done: (result: CopyResult) => void,
  ) {
    const cap = answerCap(target.queueBytes, target.concurrency);
    this.site = siteOf(target, target.keepHost, cap, target.concurrency, target.pipeline);
    // The second legacy site is asked only about differences: one at a time on each connection.
    this.secondary = target.secondary === null ? null : siteOf(target.secondary, false, cap, target.concurrency, 1);
    this.budget = new ByteBudget(target.queueBytes);
  }

  /** Bytes of the copies here (waiting, in flight, being compared). */
  get held(): number {
    return this.budget.held;
  }

  /** A copy as it arrives, `bytes` the frame it came in: held within the budget, or dropped at once. */
  take(job: CopyJob, bytes: number): void {
    if (!this.budget.take(bytes))
      return this.done({ outcome: 'dropped', reason: 'bytes', requestId: job.requestId, labels: job.labels, bytes });
    this.start(job, bytes);
  }

  private start(job: CopyJob, bytes: number): void {
    if (this.active >= this.target.concurrency * this.target.pipeline) return void this.waiting.push({ job, bytes });
    this.active++;
    void this.put(job, bytes).then((result) => {
      this.budget.give(bytes);
      this.done(result);
      this.active--;
      const next = this.waiting.shift();
      if (next !== undefined) this.start(next.job, next.bytes);
    });
  }

  /** One copy put to the target and its answer compared as it is read; never rejects. */
  private async put(job: CopyJob, bytes: number): Promise<CopyResult> {
    const ids = { requestId: job.requestId, labels: job.labels, bytes };
    const read = new ReadAgainst(job.primary);
    const why = await this.site.wire.exchange(job.method, this.request(job, this.site), this.target.timeoutMs, read);
    if (why === ANSWER_TOO_LARGE) return { ...ids, outcome: 'dropped', reason: 'answer_bytes' };
    if (why !== null) return { ...ids, outcome: 'error', reason: why };
    if (read.equal) return { ...ids, outcome: 'match' };
    const [legacy, ours] = this.target.primary === 'ours' ? [read.answer, job.primary] : [job.primary, read.answer];
    const differ = compareSent(job.method, job.url, legacy, ours);
    if (differ === null) return { ...ids, outcome: 'match' };
    return {
      ...ids,
      outcome: 'difference',
      job,
      legacy: differ.legacy,
      ours: differ.ours,
      differences: differ.found,
      noise: await this.noise(job, differ.legacy, differ.found),
    };
  }

  /**
   * Diffy's rule: the request put to the second legacy site too, and the difference is noise when
   * every kind of it also shows between the two legacy answers (a time, a generated id: what the old
   * code itself does not repeat). Asked only for a request that differs, so that the copies cost
   * the legacy sites, and this machine's CPU, no more for the matches (nearly all of them). No
   * answer from the second site: real, since nothing shows it is noise.
   */
  private async noise(job: CopyJob, legacy: Answer, differences: readonly Difference[]): Promise<boolean> {
    if (this.secondary === null) return false;
    const other = await this.secondary.wire.ask(job.method, this.request(job, this.secondary), this.target.timeoutMs);
    if (typeof other === 'string') return false;
    const between = new Set(compareLive(job.method, job.url, legacy, asText(sentOf(other))).map((d) => d.kind));
    return differences.every((d) => between.has(d.kind));
  }

  /** A copy's request as it goes to `site`: its head, then its body as it came in its frame (not copied after the head: the budget counted it once). */
  private request(job: CopyJob, site: Site): Buffer | Buffer[] {
    // Header names and values as node's parser gave them: one byte per character (latin1), sent back so.
    let head = `${job.method} ${site.prefix + job.url.slice(site.strip)} HTTP/1.1\r\n`;
    for (let i = 0; i < job.headers.length; i += 2) head += `${job.headers[i]}: ${job.headers[i + 1]}\r\n`;
    head += `X-Request-Id: ${job.requestId}\r\n`;
    // Framed by length always: a POST or PUT without a body says so (Content-Length: 0).
    if (job.body !== null || (job.method !== 'GET' && job.method !== 'HEAD')) head += `Content-Length: ${job.body?.length ?? 0}\r\n`;
    const bytes = Buffer.from(`${head}${site.hostLine}\r\n`, 'latin1');
    return job.body === null ? bytes : [bytes, Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength)];
  }
}

/**
 * What goes back to the service, at most every RESULTS_MS (copier-process.ts): copies whose labels the copier knows
 * (service-first) as counts by outcome and labels, so that the client's thread handles a handful of
 * numbers whatever the traffic; the rest one by one (legacy-first, where the service learns what each
 * copy was, and every difference, with what its report needs). `bytes`: what the copies settled
 * since the last message took (their frames), for the service to give back to its budget.
 */
export interface Settled {
  tallies: Tally[];
  each: CopyResult[];
  bytes: number;
  /** When the first of these copies settled (ms since the epoch): the verdict's "since" is a comparison's own time. */
  first: number;
}

/** Copies that came out the same way, counted; failed ones with the last one's reason (for the log: trouble.ts). */
export type Tally = { labels: Labels; count: number } & (
  | { outcome: 'match' }
  | { outcome: 'error'; reason: string }
  | { outcome: 'dropped'; reason: DropReason }
);

/** The environment variable that carries the target to the copier process (and marks it as one). */
export const COPIER_ENV = 'ASMX_SHADOW_COPIER';

/** The copier's descriptor for the jobs' pipe (mirror.ts gives it as its fifth stdio). */
export const JOBS_FD = 4;
