import type { Answer } from './compare';
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

export const NONE = 0xffffffff;
/** An answer body's length field may instead say: a lasting body the copier holds (its id follows), or one to hold from now on (its id, then length and bytes). */
export const HELD = 0xfffffffe;
export const HOLD = 0xfffffffd;

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
export class HeldBodies<T> {
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
