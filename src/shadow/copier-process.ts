// First: this file is its own process's entry (mirror.ts starts it); an unsupported Node stops here.
import '../basics/supported-node';
import net from 'node:net';
import { heldBodiesLimit } from './budget';
import { COPIER_ENV, Copier, type CopyResult, type CopyTarget, JOBS_FD, type Settled, type Tally } from './copier';
import { FrameReader } from './frames';

/**
 * The copier's process (mirror.ts starts this file with the target in COPIER_ENV): the copies come on
 * the jobs' pipe (frames.ts), each is put to the target and compared (copier.ts), and the results go
 * back on the channel, counted where they can be. It ends with the service (its pipe or channel
 * closed). Importing copier.ts starts nothing; this file is the one that runs.
 */

/**
 * How long results wait for others to go back with them: counts and reports lag by no more. Each
 * message wakes the client's thread and is deserialised there; five a second cost it next to nothing.
 */
const RESULTS_MS = 200;
/** Differences (each with both answers as text) holding this much go back at once, not after RESULTS_MS: what waits to go back stays small. */
const RESULTS_BYTES = 1024 * 1024;

function serve(copyTarget: CopyTarget): void {
  const tallies = new Map<string, Tally>();
  let each: CopyResult[] = [];
  let bytes = 0;
  let first = 0;
  /** What the differences waiting in `each` hold (their copies and both answers). */
  let eachBytes = 0;
  /** Copies settled since the last message. */
  let settled = 0;
  /**
   * Copies settled that go back at once, not after RESULTS_MS: until the service hears of them they
   * count against its queue, and at thousands a second RESULTS_MS alone would fill it.
   */
  const settledAtMost = Math.max(1, Math.floor((copyTarget.concurrency + copyTarget.queue) / 8));
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    process.send?.({ tallies: [...tallies.values()], each, bytes, first } satisfies Settled);
    tallies.clear();
    each = [];
    bytes = 0;
    eachBytes = 0;
    settled = 0;
  };
  const copier = new Copier(copyTarget, (result) => {
    // The first result since the last flush sets the next one.
    if (timer === null) {
      timer = setTimeout(flush, RESULTS_MS);
      first = Date.now();
    }
    bytes += result.bytes;
    settled++;
    if (copyTarget.primary === 'legacy' || result.outcome === 'difference') {
      each.push(result);
      if (result.outcome === 'difference') eachBytes += result.bytes + result.legacy.body.length + result.ours.body.length;
      if (eachBytes >= RESULTS_BYTES || settled >= settledAtMost) flush();
      return;
    }
    const { labels } = result;
    const tally: Tally =
      result.outcome === 'match'
        ? { labels, outcome: 'match', count: 1 }
        : result.outcome === 'error'
          ? { labels, outcome: 'error', reason: result.reason, count: 1 }
          : { labels, outcome: 'dropped', reason: result.reason, count: 1 };
    // What the counters are labelled by (metrics.ts); the endpoint is for reports only.
    const key = `${labels.operation}\n${labels.binding}\n${tally.outcome}\n${tally.outcome === 'dropped' ? tally.reason : ''}`;
    const known = tallies.get(key);
    if (known === undefined) tallies.set(key, tally);
    else {
      known.count++;
      if (known.outcome === 'error' && tally.outcome === 'error') known.reason = tally.reason;
    }
    if (settled >= settledAtMost) flush();
  });
  const frames = new FrameReader(heldBodiesLimit(copyTarget.queueBytes));
  const jobs = new net.Socket({ fd: JOBS_FD, readable: true, writable: false });
  jobs.on('data', (chunk: Buffer) => {
    for (const frame of frames.read(chunk)) copier.take(frame.job, frame.bytes);
  });
  // The service gone (its end of the pipe or the channel closed): so are its copies.
  jobs.on('end', () => process.exit(0));
  jobs.on('error', () => process.exit(0));
  process.on('disconnect', () => process.exit(0));
}

const target = process.env[COPIER_ENV];
if (target !== undefined && process.send !== undefined) serve(JSON.parse(target) as CopyTarget);
