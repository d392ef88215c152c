import { lastingBodies } from '../transport/exchange';
import { type CopyJob, frameSize, HELD, HeldBodies, HOLD, NONE } from './frames';

/**
 * The service's side of the copies' pipe (frames.ts says the format): copies written straight into a
 * batch's buffer as they are offered, the batch handed to the copier, its buffer given back.
 */

/** The largest batch buffer kept for the next batch: one copy of a 64 MiB request is not kept in memory for good. */
const KEEP_AT_MOST = 4 * 1024 * 1024;

/** A buffer that is the whole of its memory, never a slice of node's shared pool: it can be given back and written into again. */
const owned = (size: number) => Buffer.allocUnsafeSlow(size);

export class FrameWriter {
  private buf: Buffer;
  private end = 0;
  /**
   * Buffers written out and given back, to be written into again. A fresh 64 KiB for every batch
   * (100 a second), memory outside the heap that the collector must account for and free, cost
   * clients about 15% on the p99 by itself (measured).
   */
  private readonly spare: Buffer[] = [];
  /** Lasting bodies by the id the copier holds them as; `ids` never keeps a body alive. */
  private held: HeldBodies<true>;
  private ids = new WeakMap<Uint8Array, number>();
  private nextId = 0;

  /** `holdLimit`: the bytes of lasting bodies the copier holds (budget.ts heldBodiesLimit); 0, none. */
  constructor(
    private readonly initial = 64 * 1024,
    holdLimit = 0,
  ) {
    this.buf = owned(initial);
    this.held = new HeldBodies(holdLimit);
  }

  /** The bytes `job`'s frame takes if written now: frameSize, or less for a body the copier holds. */
  sizeOf(job: CopyJob): number {
    const body = job.primary.body;
    if (typeof body === 'string' || !this.holds(body)) return frameSize(job);
    const id = this.ids.get(body);
    // By reference: a marker and an id for the body; whole and held: the id beside its length too.
    return id !== undefined && this.held.has(id) ? frameSize(job) - body.length + 4 : frameSize(job) + 8;
  }

  /** Whether a body is one to hold rather than send whole: lasting, and within the limit. */
  private holds(body: Uint8Array): boolean {
    return body.length <= this.held.limit && lastingBodies.has(body);
  }

  get empty(): boolean {
    return this.end === 0;
  }

  /** Bytes written since the last take. */
  get size(): number {
    return this.end;
  }

  job(job: CopyJob): void {
    const start = this.end;
    this.u32(0);
    this.str(job.requestId);
    this.str(job.method);
    this.str(job.url);
    this.u32(job.headers.length);
    for (const h of job.headers) this.str(h);
    this.bytes(job.body);
    const { primary, labels } = job;
    this.u32(primary.status);
    const names = Object.keys(primary.headers);
    this.u32(names.length);
    for (const name of names) {
      this.str(name);
      this.str(primary.headers[name]);
    }
    // A string as node sent it (UTF-8), bytes as they are: either way the bytes the client got.
    if (typeof primary.body === 'string') this.str(primary.body);
    else if (this.holds(primary.body)) this.lasting(primary.body);
    else this.bytes(primary.body);
    this.str(primary.encoding);
    this.str(labels.endpoint);
    this.str(labels.operation);
    this.str(labels.binding);
    this.buf.writeUInt32LE(this.end - start - 4, start);
  }

  /**
   * The frames written since the last take, handed over to be written out; `release` them once they
   * are. The next batch starts as large as this one grew (up to KEEP_AT_MOST): 500-student rosters
   * fill most of a megabyte in a batch, and growing a fresh 64 KiB to that, copy after copy, took the
   * client's thread 78 ms in a 10 s profile at 800 requests a second (2 ms since).
   */
  take(): Buffer {
    const out = this.buf.subarray(0, this.end);
    this.buf = this.spare.pop() ?? owned(Math.max(this.initial, Math.min(this.buf.length, KEEP_AT_MOST)));
    this.end = 0;
    return out;
  }

  /** Frames from `take`, written out: their buffer is used again (a few are kept, the rest left to the collector). */
  release(frames: Buffer): void {
    if (this.spare.length < 2 && frames.buffer.byteLength <= KEEP_AT_MOST) this.spare.push(Buffer.from(frames.buffer));
  }

  /** A lasting body: by reference if the copier holds it, else whole, to be held from now on. */
  private lasting(body: Uint8Array): void {
    const id = this.ids.get(body);
    if (id !== undefined && this.held.use(id) === true) {
      this.u32(HELD);
      return this.u32(id);
    }
    const fresh = this.nextId++;
    this.ids.set(body, fresh);
    this.held.hold(fresh, body.length, true);
    this.u32(HOLD);
    this.u32(fresh);
    this.bytes(body);
  }

  /** Drops the frames not yet taken, and what the copier held: they go to none, or to a new copier. */
  clear(): void {
    this.end = 0;
    this.held = new HeldBodies(this.held.limit);
    this.ids = new WeakMap();
  }

  private room(n: number): void {
    if (this.end + n <= this.buf.length) return;
    const bigger = owned(Math.max(2 * this.buf.length, this.end + n));
    this.buf.copy(bigger, 0, 0, this.end);
    this.buf = bigger;
  }

  private u32(n: number): void {
    this.room(4);
    this.buf.writeUInt32LE(n, this.end);
    this.end += 4;
  }

  private str(s: string | undefined): void {
    if (s === undefined) return this.u32(NONE);
    // At most three bytes per UTF-16 unit: written in one pass, its length filled in after.
    this.room(4 + 3 * s.length);
    const n = this.buf.write(s, this.end + 4, 'utf8');
    this.buf.writeUInt32LE(n, this.end);
    this.end += 4 + n;
  }

  private bytes(b: Uint8Array | null): void {
    if (b === null) return this.u32(NONE);
    this.room(4 + b.length);
    this.buf.writeUInt32LE(b.length, this.end);
    this.buf.set(b, this.end + 4);
    this.end += 4 + b.length;
  }
}
