import type { Answer } from './compare';
import { lastingBodies } from '../transport/exchange';
import type { Labels } from './metrics';

/**
 * How copies cross from the service to its copier: as bytes on a pipe of their own, each copy one
 * frame (its length, then its fields), written straight into the batch's buffer as it is offered.
 *
 * Why not node's IPC messages: a message is an object graph that node serialises on the client's
 * thread, in JavaScript, batch by batch; the copies waiting in it, and the serialiser's own objects,
 * are young objects alive when the collector runs, and measured at a quarter of the maximum load they
 * doubled the time its scavenges took (their pauses are what a client's slowest answers wait for).
 * A frame leaves nothing behind on the client's thread: its fields are copied into a buffer outside
 * the JavaScript heap, and the copy object is garbage as soon as it is written.
 *
 * Fields: a string is its UTF-8 length then its bytes; bytes are their length then themselves; an
 * absent value is the length NONE.
 */

/**
 * An answer as it went out: the body as written (a string, or bytes with their content coding), so
 * that the client's thread hands it on without decoding or copying it into text. The copier reads
 * every body back as bytes (a string as its UTF-8, the bytes node sent), compares bytes, and turns
 * them into text only when they differ from the other answer's.
 */
export interface SentAnswer {
  status: number;
  headers: Answer['headers'];
  body: string | Uint8Array;
  /** The answer's Content-Encoding, when its body is compressed. */
  encoding?: string;
}

/**
 * The copy of a request, offered to the mirror once the client has been answered; all of it goes to
 * the copier, so the client's thread keeps nothing.
 */
export interface CopyJob {
  requestId: string;
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  /** The request's headers as sent (raw name/value pairs), those not to be copied left out. */
  headers: string[];
  body: Uint8Array | null;
  /** The answer the client got, as it went out. */
  primary: SentAnswer;
  /** The request as this service saw it (service-first), for the metrics and the report; in legacy-first learnt from the copy's own exchange. */
  labels: Labels;
}

const NONE = 0xffffffff;
/** An answer body's length field may instead say: a lasting body the copier holds (its id follows), or one to hold from now on (its id, then length and bytes). */
const HELD = 0xfffffffe;
const HOLD = 0xfffffffd;

/**
 * Lasting bodies (transport/exchange.ts lastingBodies: a cached roster's bytes) as the copier holds
 * them, kept alike on both sides of the pipe: the writer decides what goes once (HOLD) and what by
 * reference (HELD); the reader meets the same frames in the same order and does the same, so both
 * hold the same ids without a word between them. Beyond `limit` bytes the least recently used is
 * forgotten (a body larger than the limit is never held: it goes whole each time).
 *
 * A 500-student roster is 78 KB: sent whole with every copy it was written into the batch, through
 * the pipe and read out of it again, about half of what shadowing cost a roster. Sent once, each
 * copy after that carries 8 bytes for it.
 */
class HeldBodies<T> {
  private readonly held = new Map<number, { size: number; value: T }>();
  private bytes = 0;

  constructor(readonly limit: number) {}

  /** The body held as `id`, marked as the most recently used; undefined if not held. */
  use(id: number): T | undefined {
    const h = this.held.get(id);
    if (h === undefined) return undefined;
    this.held.delete(id);
    this.held.set(id, h);
    return h.value;
  }

  has(id: number): boolean {
    return this.held.has(id);
  }

  hold(id: number, size: number, value: T): void {
    this.held.set(id, { size, value });
    this.bytes += size;
    for (const [oldest, h] of this.held) {
      if (this.bytes <= this.limit || oldest === id) break;
      this.held.delete(oldest);
      this.bytes -= h.size;
    }
  }
}

/** The largest batch buffer kept for the next batch: one copy of a 64 MiB request is not kept in memory for good. */
const KEEP_AT_MOST = 4 * 1024 * 1024;

/** A buffer that is the whole of its memory, never a slice of node's shared pool: it can be given back and written into again. */
const owned = (size: number) => Buffer.allocUnsafeSlow(size);

/**
 * The bytes a job's frame takes (its length field included), known before it is written: what the
 * service's budget takes for it when it is offered (budget.ts), and what the copier reads as it.
 */
export function frameSize(job: CopyJob): number {
  const str = (s: string | undefined) => 4 + (s === undefined ? 0 : Buffer.byteLength(s, 'utf8'));
  const bytes = (b: Uint8Array | null) => 4 + (b === null ? 0 : b.length);
  let n = 4 + str(job.requestId) + str(job.method) + str(job.url) + 4;
  for (const h of job.headers) n += str(h);
  n += bytes(job.body) + 4 + 4;
  for (const [name, value] of Object.entries(job.primary.headers)) n += str(name) + str(value);
  n += typeof job.primary.body === 'string' ? str(job.primary.body) : bytes(job.primary.body);
  return n + str(job.primary.encoding) + str(job.labels.endpoint) + str(job.labels.operation) + str(job.labels.binding);
}

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

/** A job as the copier reads it, with the bytes its frame took (frameSize). */
export interface Frame {
  job: CopyJob;
  bytes: number;
}

/**
 * The copier's side: bytes as they arrive, each whole frame a job. A frame's fields are views of the
 * bytes it arrived in, not copies (a job lives until its copy is answered, and its batch's chunk with
 * it); a frame split across reads is joined once, when its last byte has come.
 */
export class FrameReader {
  private readonly held: HeldBodies<Buffer>;

  /** `holdLimit`: the writer's. */
  constructor(holdLimit = 0) {
    this.held = new HeldBodies(holdLimit);
  }

  /** Chunks not yet read as whole frames, `have` bytes in all; nothing is read before `wanted` bytes have come. */
  private parts: Buffer[] = [];
  private have = 0;
  private wanted = 4;
  /** The chunk being read and where the field being read starts. */
  private buf: Buffer = Buffer.alloc(0);
  private at = 0;

  /** The jobs completed by this chunk (a frame may span chunks). */
  read(chunk: Buffer): Frame[] {
    this.parts.push(chunk);
    this.have += chunk.length;
    if (this.have < this.wanted) return [];
    this.buf = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.have);
    const jobs: Frame[] = [];
    let start = 0;
    while (this.buf.length - start >= 4) {
      const size = this.buf.readUInt32LE(start);
      if (this.buf.length - start - 4 < size) break;
      this.at = start + 4;
      jobs.push({ job: this.job(), bytes: 4 + size });
      start += 4 + size;
    }
    const rest = this.buf.subarray(start);
    this.parts = rest.length === 0 ? [] : [rest];
    this.have = rest.length;
    this.wanted = rest.length >= 4 ? 4 + rest.readUInt32LE(0) : 4;
    this.buf = Buffer.alloc(0);
    return jobs;
  }

  private job(): CopyJob {
    const requestId = this.text();
    const method = this.text();
    const url = this.text();
    const headers: string[] = [];
    for (let n = this.u32(); n > 0; n--) headers.push(this.text());
    const body = this.bytes();
    const status = this.u32();
    const answerHeaders: Record<string, string | undefined> = {};
    for (let n = this.u32(); n > 0; n--) answerHeaders[this.text()] = this.str();
    const answerBody = this.body();
    const encoding = this.str();
    const labels = { endpoint: this.str(), operation: this.str(), binding: this.str() };
    return { requestId, method, url, headers, body, primary: { status, headers: answerHeaders, body: answerBody, encoding }, labels };
  }

  /** An answer's body: whole (a view), held before, or whole and held from now on (a copy: the chunk it came in is not kept for it). */
  private body(): Buffer {
    const n = this.buf.readUInt32LE(this.at);
    if (n !== HELD && n !== HOLD) return this.bytes() ?? Buffer.alloc(0);
    this.at += 4;
    const id = this.u32();
    if (n === HELD) {
      const held = this.held.use(id);
      if (held === undefined) throw new Error(`shadow frames: body ${id} is not held`);
      return held;
    }
    const bytes = this.bytes() ?? Buffer.alloc(0);
    const copy = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(copy);
    this.held.hold(id, copy.length, copy);
    return copy;
  }

  private u32(): number {
    const n = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return n;
  }

  private str(): string | undefined {
    const n = this.u32();
    if (n === NONE) return undefined;
    const s = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }

  private text(): string {
    return this.str() ?? '';
  }

  private bytes(): Buffer | null {
    const n = this.u32();
    if (n === NONE) return null;
    const b = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return b;
  }
}
