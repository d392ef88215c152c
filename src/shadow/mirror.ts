import path from 'node:path';
import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { log } from '../basics/log';
import { lowestPriority } from '../basics/priority';
import type { CopierPriority } from '../config/shadow';
import { ByteBudget, heldBodiesLimit } from './budget';
import { COPIER_ENV, type CopyResult, type CopyTarget, JOBS_FD, type Settled } from './copier';
import { readable } from './sent';
import { FrameWriter } from './frame-writer';
import type { CopyJob } from './frames';
import { countShadow, holders, type Labels, samplers } from './metrics';
import type { Report } from './report';
import { Sampler } from './sampler';
import { type ComparedSink, PendingTotals } from './totals';
import { TargetTrouble } from './trouble';

/**
 * Run from its TypeScript sources (the tests do), the service starts its copier from them too, with
 * the module named here required first to load them (test/helpers/ts-register.js); the build runs
 * copier-process.js as it is.
 */
export const TS_LOADER_ENV = 'ASMX_TS_LOADER';

function copierCommand(): string[] {
  const entry = path.join(__dirname, `copier-process${path.extname(__filename)}`);
  if (!entry.endsWith('.ts')) return [process.execPath, entry];
  const loader = process.env[TS_LOADER_ENV];
  if (loader === undefined)
    throw new Error(`the shadow copier runs from TypeScript sources only with ${TS_LOADER_ENV} naming a loader to require first`);
  return [process.execPath, '-r', loader, entry];
}

/**
 * How long a copy waits for others to go with it, unless they come to HAND_OVER_BYTES first. Each
 * write to the copier wakes it, and on a busy 2-core machine a wake-up of a node process costs
 * about 60 µs of CPU whatever it does (an empty timer's tick measured so): 50 ms rather than 10 took
 * the copier's CPU per copy of a small call from 60 to 37 µs (scratch harness, 800 copies a second).
 * A copy some milliseconds later compares the same; only the counts lag (by no more than this and
 * the copier's RESULTS_MS).
 */
const HAND_OVER_MS = 50;
/** A batch this large goes at once: a burst of 500-student rosters is not held in memory for HAND_OVER_MS. */
const HAND_OVER_BYTES = 1024 * 1024;
/**
 * The longest a stop waits for copies already handed to the copier to settle (or SHADOW_TIMEOUT_MS,
 * when shorter): a copy answered meanwhile is compared and counted, the rest are dropped (reason
 * `stop`). Copies never hold a stop for long; the cluster primary allows for this time too.
 */
export const STOP_SETTLE_MAX_MS = 2000;

/**
 * Copies offered once their client has been answered; the two answers compared (in the copier's
 * process, copier.ts) and the outcome counted and reported here. Bounded, so that a slow or dead
 * target costs clients nothing: at most `concurrency` copies in flight and `queue` waiting, and at
 * most SHADOW_QUEUE_BYTES of them from their offer until the copier has settled them, wherever
 * they are (the batch here, the pipe, the copier); beyond either a copy is dropped and counted,
 * never waited for; each copy has `timeoutMs` to be answered. (Just past 300 lines with what is
 * above it: the copier's life, from its start to its stop, is one object.)
 */
export class Mirror {
  /** Copies handed to the copier (or about to be) and not yet settled: the bound on the queue. */
  private inFlight = 0;
  /** The bytes of those copies (their frames), given back as the copier reports them settled. */
  private readonly budget: ByteBudget;
  /** The copier process, once started, and the pipe its copies go down (frames.ts). */
  private running: { child: ChildProcess; jobs: Socket } | null = null;
  /** The command prefix the copier starts under (SHADOW_COPIER_PRIORITY). */
  private readonly priority: string[];
  /** Copies offered and not yet handed over, as frames: they go together, HAND_OVER_MS after the first (one write, not one each). */
  private readonly batch: FrameWriter;
  private handOverTimer: NodeJS.Timeout | null = null;
  /** Legacy-first: what this service's hooks learnt of each copy in flight (endpoint, operation, binding). */
  private readonly learnt = new Map<string, Labels | null>();
  /** The copies in flight by operation and binding, so that those given up (a stop, the copier gone) are counted by operation too. */
  private readonly pending = new Map<string, { labels: Labels; n: number }>();
  /** Set by a stop: new copies are dropped, and the stop is told when the last one in flight settles. */
  private stopping: { allSettled: () => void } | null = null;
  /** Settled comparisons on their way to be kept (the totals); a stop writes what is pending. */
  private readonly totals: PendingTotals | null;

  /** Beyond what the copier keeps up with, one copy in N of each operation (sampler.ts). */
  private readonly sampler = new Sampler();
  /** Copies failing, in the log: when they start, at most a reminder a minute, when they are answered again. */
  private readonly trouble: TargetTrouble;

  private readonly mode: string;

  /** `keep`: where settled comparisons are kept (the totals), or nowhere; `priority`: SHADOW_COPIER_PRIORITY. */
  constructor(
    private readonly target: CopyTarget,
    private readonly report: Report,
    { mode, keep, priority }: { mode: string; keep: ComparedSink | null; priority: CopierPriority },
  ) {
    this.mode = mode;
    this.priority = priority === 'lowest' ? lowestPriority() : [];
    this.budget = new ByteBudget(target.queueBytes);
    holders.add(this.budget);
    samplers.add(this.sampler);
    this.batch = new FrameWriter(undefined, heldBodiesLimit(target.queueBytes));
    this.totals = keep === null ? null : new PendingTotals(keep);
    this.trouble = new TargetTrouble(`${target.origin}${target.prefix}`, target.primary === 'ours' ? 'the legacy host' : 'this service');
  }

  /** Hands a copy to the copier, or drops it (counted): left out while the copier is behind (sampled), or too many, or too many bytes, in flight or waiting. */
  offer(copy: CopyJob): void {
    if (this.stopping !== null) return countShadow(copy.labels, 'dropped', 1, 'stop');
    if (this.sampler.skip(copy.labels)) return countShadow(copy.labels, 'dropped', 1, 'sampled');
    if (this.inFlight >= this.bound) return countShadow(copy.labels, 'dropped', 1, 'queue');
    // Its size is known before a byte of it is copied: a copy that does not fit costs nothing more.
    if (!this.budget.take(this.batch.sizeOf(copy))) return countShadow(copy.labels, 'dropped', 1, 'bytes');
    this.inFlight++;
    this.track(copy.labels, 1);
    if (this.target.primary === 'legacy') this.learnt.set(copy.requestId, null);
    if (this.batch.empty) this.handOverTimer = setTimeout(() => this.handOver(), HAND_OVER_MS).unref();
    this.batch.job(copy);
    if (this.batch.size >= HAND_OVER_BYTES) this.handOver();
  }

  /** Copies in flight and waiting at most: SHADOW_CONCURRENCY + SHADOW_QUEUE. */
  private get bound(): number {
    return this.target.concurrency + this.target.queue;
  }

  private handOver(): void {
    if (this.handOverTimer !== null) clearTimeout(this.handOverTimer);
    this.handOverTimer = null;
    if (this.batch.empty) return;
    const frames = this.batch.take();
    this.copier().jobs.write(frames, () => this.batch.release(frames));
  }

  /** Legacy-first: this service's hooks say what a copy was. */
  learn(requestId: string, labels: Labels): void {
    if (this.learnt.has(requestId))
      this.learnt.set(requestId, { endpoint: labels.endpoint, operation: labels.operation, binding: labels.binding });
  }

  /**
   * A stop: copies not yet handed over go to the copier at once, and those in flight get
   * min(SHADOW_TIMEOUT_MS, STOP_SETTLE_MAX_MS) to settle; the rest are dropped (reason `stop`), the
   * copier ends, and the comparisons settled are written (the sink) before this resolves. Timers held
   * here keep the process alive meanwhile: the copier's process, pipe and channel do not (unref'd).
   */
  async close(): Promise<void> {
    if (this.stopping !== null) return;
    const running = this.running;
    let allSettled = (): void => undefined;
    const settled = new Promise<void>((resolve) => (allSettled = resolve));
    this.stopping = { allSettled };
    if (running !== null) this.handOver();
    else this.giveUp('stop');
    if (this.inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        settled,
        new Promise((resolve) => (timer = setTimeout(resolve, Math.min(this.target.timeoutMs, STOP_SETTLE_MAX_MS)))),
      ]);
      clearTimeout(timer);
    }
    this.running = null;
    if (this.inFlight > 0)
      log.warn('shadow copies given up at the stop, counted dropped (reason stop)', {
        dropped: this.inFlight,
        settleMs: Math.min(this.target.timeoutMs, STOP_SETTLE_MAX_MS),
      });
    this.giveUp('stop');
    holders.delete(this.budget);
    samplers.delete(this.sampler);
    await this.totals?.close();
    if (running === null || running.child.exitCode !== null || running.child.signalCode !== null) return;
    // Referenced again, so that its exit is waited for rather than the process running out of work.
    // SIGKILL: its copies are given up already, and a copier that gets no processor time (the
    // lowest priority on a machine busy with other work, or stopped) would keep a SIGTERM pending.
    running.child.ref();
    const gone = new Promise((resolve) => running.child.once('exit', resolve));
    running.child.kill('SIGKILL');
    await gone;
  }

  /** The copies in flight and those not yet handed over, given up and counted dropped for `reason`, by operation. */
  private giveUp(reason: 'stop' | 'copier_exit'): void {
    if (this.handOverTimer !== null) clearTimeout(this.handOverTimer);
    this.handOverTimer = null;
    this.batch.clear();
    for (const { labels, n } of this.pending.values()) countShadow(labels, 'dropped', n, reason);
    this.pending.clear();
    this.inFlight = 0;
    this.budget.clear();
    this.learnt.clear();
  }

  /** `n` more (or, negative, fewer) copies in flight with these labels. */
  private track(labels: Labels, n: number): void {
    const key = `${labels.operation ?? ''}\n${labels.binding ?? ''}`;
    const known = this.pending.get(key);
    if (known === undefined) {
      if (n > 0) this.pending.set(key, { labels: { operation: labels.operation, binding: labels.binding }, n });
      return;
    }
    known.n += n;
    if (known.n <= 0) this.pending.delete(key);
  }

  /**
   * The copier: a process of its own (copier.ts), started at the first copy, so that sending and
   * comparing run at the lowest priority, garbage collection included, and cost the client's thread
   * one write per batch. Copies go to it on a pipe of their own (frames.ts), results come back as
   * messages on its channel. It ends with this process (its pipe and channel close).
   */
  private copier(): { child: ChildProcess; jobs: Socket } {
    if (this.running !== null) return this.running;
    const [command, ...args] = [...this.priority, ...copierCommand()];
    const child = spawn(command, args, {
      env: { ...process.env, [COPIER_ENV]: JSON.stringify(this.target) },
      // Results carry a difference's bodies as bytes: the channel's advanced serialisation keeps them so.
      stdio: ['ignore', 'ignore', 'inherit', 'ipc', 'pipe'],
      serialization: 'advanced',
    });
    const jobs = child.stdio[JOBS_FD] as Socket;
    // A copier that died takes its copies with it (counted on its exit); a write after that fails here.
    jobs.on('error', () => undefined);
    // Copies never keep the process alive.
    child.unref();
    child.channel?.unref();
    jobs.unref();
    const running = { child, jobs };
    child.on('message', ({ tallies, each, bytes, first: settledAt }: Settled) => {
      if (this.running !== running) return;
      const first = new Date(settledAt).toISOString();
      const kept = { compared: 0, real: 0, noise: 0 };
      let failed = { n: 0, reason: '' };
      this.budget.give(bytes);
      for (const tally of tallies) {
        this.inFlight -= tally.count;
        this.track(tally.labels, -tally.count);
        if (tally.outcome === 'dropped') countShadow(tally.labels, 'dropped', tally.count, tally.reason);
        else this.count(tally.labels, tally.outcome, tally.count);
        if (tally.outcome === 'error') failed = { n: failed.n + tally.count, reason: tally.reason };
        if (tally.outcome === 'match') kept.compared += tally.count;
      }
      for (const result of each) {
        const outcome = this.settle(result);
        if (result.outcome === 'error') failed = { n: failed.n + 1, reason: result.reason };
        if (outcome === 'match' || outcome === 'difference' || outcome === 'noise') kept.compared++;
        if (outcome === 'difference') kept.real++;
        if (outcome === 'noise') kept.noise++;
      }
      if (kept.compared > 0) this.totals?.add({ ...kept, first });
      this.trouble.settled(failed.n, failed.reason, kept.compared);
      this.sampler.adjust(this.inFlight / this.bound);
      if (this.inFlight <= 0) this.stopping?.allSettled();
    });
    child.on('error', (error) => log.error('shadow copier failed', { error }));
    child.on('exit', () => {
      if (this.running !== running) return;
      // Its copies are lost (counted); the next offer starts another. So are those not yet handed
      // to it: they were counted in flight, and another copier would settle them twice.
      this.running = null;
      this.giveUp('copier_exit');
      this.stopping?.allSettled();
    });
    this.running = running;
    return running;
  }

  /** A copy that failed is the copy's target's error: the legacy host's, or this service's in legacy-first. */
  private count(labels: Labels, outcome: 'match' | 'error', n: number): void {
    countShadow(labels, outcome === 'match' ? 'match' : this.target.primary === 'ours' ? 'legacy_error' : 'service_error', n);
  }

  /** One copy's result, counted (and a difference reported): what it came to. */
  private settle(result: CopyResult): 'match' | 'difference' | 'noise' | 'other' {
    this.inFlight--;
    this.track(result.labels, -1);
    const labels = this.learnt.get(result.requestId) ?? result.labels;
    this.learnt.delete(result.requestId);
    if (result.outcome === 'dropped') {
      countShadow(labels, 'dropped', 1, result.reason);
      return 'other';
    }
    if (result.outcome !== 'difference') {
      this.count(labels, result.outcome, 1);
      return result.outcome === 'match' ? 'match' : 'other';
    }
    countShadow(labels, result.noise ? 'noise' : 'difference');
    const { job } = result;
    const header = (name: string): Array<[string, string]> => {
      const i = job.headers.findIndex((h, n) => n % 2 === 0 && h.toLowerCase() === name);
      return i === -1 ? [] : [[name, job.headers[i + 1]]];
    };
    const encoding = header('content-encoding');
    this.report.write({
      time: new Date().toISOString(),
      requestId: job.requestId,
      mode: this.mode,
      endpoint: labels.endpoint ?? '',
      operation: labels.operation ?? '',
      binding: labels.binding ?? '',
      request: {
        method: job.method,
        url: job.url,
        headers: Object.fromEntries([...header('content-type'), ...header('soapaction'), ...encoding]),
        body: job.body === null ? '' : readable(job.body, encoding[0]?.[1]),
      },
      legacy: result.legacy,
      ours: result.ours,
      differences: result.differences,
      noise: result.noise,
    });
    return result.noise ? 'noise' : 'difference';
  }
}
