/**
 * How the copier reads an HTTP/1.1 answer: by its framing alone (a status line, headers, a body by
 * length, chunks or the connection's end), from the bytes of a connection as they come, into a sink
 * that keeps them or only compares them (copier.ts). wire.ts owns the connections.
 */

export interface WireAnswer {
  status: number;
  /** Names in lower case; a repeated header's values joined with ", " (Content-Type and Content-Length: the first). */
  headers: Record<string, string>;
  body: Buffer;
}

/** An answer larger than this is not read to the end unless the reader is given another cap: a hostile host must not cost more. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * Why an exchange ended without an answer when the answer was larger than the cap (declared or as it
 * came): not read to its end, the connection closed. The copier counts it apart from no answer.
 */
export const ANSWER_TOO_LARGE = 'answer larger than the cap';

/** An answer's head (status line and headers) larger than this is refused; a chunked body may carry as much framing beside its data. */
const MAX_HEAD_BYTES = 64 * 1024;

const EMPTY = Buffer.alloc(0);
const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const SINGLE = new Set(['content-type', 'content-length']);

/**
 * Where a reader hands an answer as it is read: its head, then its body's bytes in order. The bytes
 * are a view of the connection's read buffer, which the next read reuses: a sink that keeps them
 * copies them; one that only compares them (copier.ts) keeps nothing, so that an answer equal to
 * the client's is never held or joined.
 */
export interface AnswerSink {
  /** The status and headers (names in lower case; a repeated header's values joined with ", ", Content-Type and Content-Length: the first). */
  head(status: number, headers: Record<string, string>): void;
  data(bytes: Buffer): void;
}

/** A sink that keeps the whole answer: the second legacy site's (copier.ts noise), and the tests'. */
export class KeptAnswer implements AnswerSink {
  private status = 0;
  private headers: Record<string, string> = {};
  private readonly parts: Buffer[] = [];
  private size = 0;

  head(status: number, headers: Record<string, string>): void {
    this.status = status;
    this.headers = headers;
  }

  data(bytes: Buffer): void {
    this.parts.push(Buffer.from(bytes));
    this.size += bytes.length;
  }

  get answer(): WireAnswer {
    return {
      status: this.status,
      headers: this.headers,
      body: this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size),
    };
  }
}

/**
 * Reads one answer from the bytes of a connection as they come, into a sink. `push` says whether the
 * answer has ended; `end` is the connection's end, which ends an answer framed by it. Nothing of a
 * read is kept beyond the call but the few bytes of framing not yet whole (copied). Malformed
 * framing throws.
 */
export class AnswerReader {
  /** Framing read and not yet taken apart (a copy): the head as it comes, then a chunk's size line. */
  private got: Buffer = EMPTY;
  private status = 0;
  /** Whether the head has been read. */
  private inBody = false;
  private framing: 'none' | 'length' | 'chunked' | 'close' = 'none';
  private length = 0;
  /** The body's bytes read so far (a chunked body's data only). */
  private size = 0;
  /** Chunked: bytes of the current chunk's data still to come. */
  private chunkLeft = 0;
  /** Chunked: the CRLF that ends a chunk's data is still to come. */
  private chunkEnd = false;
  /** Whether the answer has ended. */
  private done = false;
  /** Whether the connection may carry another request once this answer is read. */
  keepAlive = false;
  /** Bytes of the last read after the answer's end: the next answer's, on a connection carrying several requests. */
  beyond = 0;

  /** `cap`: the most of a body read; a larger one throws ANSWER_TOO_LARGE as soon as it shows (its Content-Length or its bytes). */
  constructor(
    private readonly method: string,
    private readonly sink: AnswerSink,
    private readonly cap = MAX_ANSWER_BYTES,
  ) {}

  push(chunk: Buffer): boolean {
    if (this.done) {
      this.beyond = chunk.length;
      return true;
    }
    if (this.inBody) return this.body(chunk);
    let got = this.got.length === 0 ? chunk : Buffer.concat([this.got, chunk]);
    while (!this.inBody) {
      const end = got.indexOf(HEAD_END);
      if (end === -1) {
        if (got.length > MAX_HEAD_BYTES) throw new Error('answer head too large');
        this.got = Buffer.from(got);
        return false;
      }
      this.readHead(got.toString('latin1', 0, end));
      got = got.subarray(end + 4);
      // An interim answer (100 Continue): the real one follows.
      if (this.status >= 100 && this.status < 200 && this.status !== 101) continue;
      this.inBody = true;
    }
    this.got = EMPTY;
    return this.body(got);
  }

  end(): boolean {
    if (this.inBody && this.framing === 'close') this.done = true;
    return this.done;
  }

  private readHead(text: string): void {
    const lines = text.split('\r\n');
    const m = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0]);
    if (m === null) throw new Error('not an HTTP answer');
    this.status = Number(m[2]);
    const headers: Record<string, string> = {};
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i].indexOf(':');
      if (colon <= 0) throw new Error('malformed answer header');
      const name = lines[i].slice(0, colon).trim().toLowerCase();
      const value = lines[i].slice(colon + 1).trim();
      const had = headers[name];
      headers[name] = had === undefined ? value : SINGLE.has(name) ? had : `${had}, ${value}`;
    }
    const connection = (headers.connection ?? '').toLowerCase();
    const chunked = /(^|,)\s*chunked\s*$/i.test(headers['transfer-encoding'] ?? '');
    const noBody = this.method === 'HEAD' || this.status === 204 || this.status === 304 || this.status < 200;
    this.framing = noBody ? 'none' : chunked ? 'chunked' : headers['content-length'] !== undefined ? 'length' : 'close';
    if (this.framing === 'length') {
      this.length = Number(headers['content-length']);
      if (!/^\d+$/.test(headers['content-length'])) throw new Error('bad Content-Length');
      if (this.length > this.cap) throw new Error(ANSWER_TOO_LARGE);
    }
    this.keepAlive = this.framing !== 'close' && (m[1] === '1' ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection));
    if (this.status < 100 || this.status >= 200 || this.status === 101) this.sink.head(this.status, headers);
  }

  private body(chunk: Buffer): boolean {
    if (this.framing === 'chunked') return this.chunked(chunk);
    if (this.framing === 'none' || (this.framing === 'length' && this.length === 0)) return this.finish(chunk.length);
    const take = this.framing === 'length' ? Math.min(chunk.length, this.length - this.size) : chunk.length;
    this.size += take;
    if (this.size > this.cap) throw new Error(ANSWER_TOO_LARGE);
    if (take > 0) this.sink.data(take === chunk.length ? chunk : chunk.subarray(0, take));
    if (this.framing === 'close' || this.size < this.length) return false;
    return this.finish(chunk.length - take);
  }

  /** The answer has ended, `beyond` bytes after it in the last read. */
  private finish(beyond: number): boolean {
    this.beyond = beyond;
    this.done = true;
    return true;
  }

  /**
   * Chunks as they come: each "size CRLF data CRLF", then a last of size 0 and its trailers up to an
   * empty line. A chunk's data goes to the sink as it is read, never joined to what is still to come.
   */
  private chunked(chunk: Buffer): boolean {
    let data = chunk;
    for (;;) {
      if (this.chunkLeft > 0) {
        if (data.length === 0) return false;
        const n = Math.min(this.chunkLeft, data.length);
        this.size += n;
        this.chunkLeft -= n;
        this.chunkEnd = this.chunkLeft === 0;
        this.sink.data(data.subarray(0, n));
        data = data.subarray(n);
        continue;
      }
      // Framing: what is left of it from the last read, then this one.
      let got = this.got.length === 0 ? data : Buffer.concat([this.got, data]);
      this.got = EMPTY;
      data = EMPTY;
      if (this.chunkEnd) {
        if (got.length < 2) return this.keep(got);
        got = got.subarray(2);
        this.chunkEnd = false;
      }
      const lineEnd = got.indexOf(CRLF);
      if (lineEnd === -1) {
        if (got.length > MAX_HEAD_BYTES) throw new Error('chunk size line too long');
        return this.keep(got);
      }
      const size = parseInt(got.toString('latin1', 0, lineEnd).split(';')[0].trim(), 16);
      if (!Number.isFinite(size) || size < 0) throw new Error('bad chunk size');
      // A chunk that would take the body over the cap is refused by its size line, before its data comes.
      if (this.size + size > this.cap) throw new Error(ANSWER_TOO_LARGE);
      if (size === 0) {
        // Trailers (usually none) end with an empty line; until they have come, the framing is read again.
        const trailersEnd = got.indexOf(CRLF, lineEnd + 2) === lineEnd + 2 ? lineEnd + 4 : got.indexOf(HEAD_END, lineEnd) + 4;
        if (trailersEnd >= 4 && trailersEnd <= got.length) return this.finish(got.length - trailersEnd);
        if (got.length > MAX_HEAD_BYTES) throw new Error('answer trailers too large');
        return this.keep(got);
      }
      this.chunkLeft = size;
      data = got.subarray(lineEnd + 2);
    }
  }

  /** Framing not yet whole, copied: the read it came in is reused. */
  private keep(framing: Buffer): false {
    this.got = Buffer.from(framing);
    return false;
  }
}
