import net from 'node:net';
import tls from 'node:tls';

/**
 * The copier's HTTP/1.1 client: a request goes out as one write of bytes made ready beforehand, and
 * its answer is read by framing alone (a status line, headers, a body by length, chunks or the
 * connection's end), on keep-alive connections. node's http client costs twice as much CPU per
 * copy (measured: 700 against 350 ms of the copier's CPU for 12,000 copies), most of it in request
 * objects, header validation and stream events a copy needs none of; and on a machine that answers
 * clients, the copies' CPU is what slows them.
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
 * Reads one answer from the bytes of a connection as they come. `push` returns the answer once it
 * is whole (null until then); `end` is the connection's end, which completes an answer framed by it.
 * Malformed framing throws.
 */
export class AnswerReader {
  /** Bytes read and not yet taken apart: the head as it comes, then the chunks' framing. */
  private got: Buffer = EMPTY;
  private status = 0;
  private headers: Record<string, string> = {};
  /** Whether the head has been read. */
  private inBody = false;
  private framing: 'none' | 'length' | 'chunked' | 'close' = 'none';
  private length = 0;
  /** The body's bytes as they came (a chunked body's data only), joined once at the end. */
  private parts: Buffer[] = [];
  private size = 0;
  /** Chunked: bytes of the current chunk's data still to come (taken as they come, never joined to the framing). */
  private chunkLeft = 0;
  /** Chunked: the CRLF that ends a chunk's data is still to come. */
  private chunkEnd = false;
  /** Whether the connection may carry another request once this answer is read. */
  keepAlive = false;

  /** `cap`: the most of a body read; a larger one throws ANSWER_TOO_LARGE as soon as it shows (its Content-Length or its bytes). */
  constructor(
    private readonly method: string,
    private readonly cap = MAX_ANSWER_BYTES,
  ) {}

  push(chunk: Buffer): WireAnswer | null {
    if (this.inBody) return this.body(chunk);
    this.got = this.got.length === 0 ? chunk : Buffer.concat([this.got, chunk]);
    while (!this.inBody) {
      const end = this.got.indexOf(HEAD_END);
      if (end === -1) {
        if (this.got.length > MAX_HEAD_BYTES) throw new Error('answer head too large');
        return null;
      }
      this.readHead(this.got.toString('latin1', 0, end));
      this.got = this.got.subarray(end + 4);
      // An interim answer (100 Continue): the real one follows.
      if (this.status >= 100 && this.status < 200 && this.status !== 101) continue;
      this.inBody = true;
    }
    const rest = this.got;
    this.got = EMPTY;
    return this.body(rest);
  }

  end(): WireAnswer | null {
    return this.inBody && this.framing === 'close' ? this.answer(Buffer.concat(this.parts, this.size)) : null;
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
    this.headers = headers;
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
  }

  private body(chunk: Buffer): WireAnswer | null {
    if (this.framing === 'none') return this.answer(EMPTY);
    if (this.framing === 'chunked') return this.chunked(chunk);
    this.parts.push(chunk);
    this.size += chunk.length;
    if (this.size > this.cap) throw new Error(ANSWER_TOO_LARGE);
    if (this.framing === 'close' || this.size < this.length) return null;
    // Bytes beyond the answer: the connection's framing is lost, it is not used again.
    if (this.size > this.length) this.keepAlive = false;
    return this.answer(Buffer.concat(this.parts, this.size).subarray(0, this.length));
  }

  /**
   * Chunks as they come: each "size CRLF data CRLF", then a last of size 0 and its trailers up to an
   * empty line. A chunk's data goes to the body as views of the reads it came in, never joined to
   * what is still to be read: a single chunk as large as the cap, read 64 KiB at a time, is not
   * copied again at every read.
   */
  private chunked(chunk: Buffer): WireAnswer | null {
    let data = chunk;
    for (;;) {
      if (this.chunkLeft > 0) {
        if (data.length === 0) return null;
        const n = Math.min(this.chunkLeft, data.length);
        this.parts.push(data.subarray(0, n));
        this.size += n;
        this.chunkLeft -= n;
        this.chunkEnd = this.chunkLeft === 0;
        data = data.subarray(n);
        continue;
      }
      // Framing: what is left of it from the last read, then this one.
      this.got = this.got.length === 0 ? data : Buffer.concat([this.got, data]);
      data = EMPTY;
      if (this.chunkEnd) {
        if (this.got.length < 2) return null;
        this.got = this.got.subarray(2);
        this.chunkEnd = false;
      }
      const lineEnd = this.got.indexOf(CRLF);
      if (lineEnd === -1) {
        if (this.got.length > MAX_HEAD_BYTES) throw new Error('chunk size line too long');
        return null;
      }
      const size = parseInt(this.got.toString('latin1', 0, lineEnd).split(';')[0].trim(), 16);
      if (!Number.isFinite(size) || size < 0) throw new Error('bad chunk size');
      // A chunk that would take the body over the cap is refused by its size line, before its data comes.
      if (this.size + size > this.cap) throw new Error(ANSWER_TOO_LARGE);
      if (size === 0) {
        // Trailers (usually none) end with an empty line; until they have come, the framing is read again.
        const trailersEnd = this.got.indexOf(CRLF, lineEnd + 2) === lineEnd + 2 ? lineEnd + 4 : this.got.indexOf(HEAD_END, lineEnd) + 4;
        if (trailersEnd >= 4 && trailersEnd <= this.got.length) return this.answer(Buffer.concat(this.parts, this.size));
        if (this.got.length > MAX_HEAD_BYTES) throw new Error('answer trailers too large');
        return null;
      }
      this.chunkLeft = size;
      data = this.got.subarray(lineEnd + 2);
      this.got = EMPTY;
    }
  }

  private answer(body: Buffer): WireAnswer {
    return { status: this.status, headers: this.headers, body };
  }
}

/** Keep-alive connections to one origin, each carrying one request at a time; the caller bounds how many at once. */
export class Wire {
  private readonly idle: net.Socket[] = [];
  private readonly port: number;

  /** `answerCap`: the most of an answer's body read (AnswerReader). */
  constructor(
    private readonly origin: URL,
    private readonly answerCap = MAX_ANSWER_BYTES,
  ) {
    this.port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
  }

  /**
   * Sends `request` (the head and body as they go out, in one buffer or in parts written together)
   * and reads its answer within `timeoutMs`: the answer, or why there was none (ANSWER_TOO_LARGE
   * for one over the cap). Never rejects.
   */
  exchange(method: string, request: Buffer | readonly Buffer[], timeoutMs: number): Promise<WireAnswer | string> {
    const socket = this.idle.pop() ?? this.connect();
    const reader = new AnswerReader(method, this.answerCap);
    return new Promise((resolve) => {
      const finish = (result: WireAnswer | string, reuse: boolean) => {
        clearTimeout(timer);
        socket.off('data', onData).off('end', onEnd).off('close', onEnd).off('error', onError);
        if (reuse) this.idle.push(socket);
        else socket.destroy();
        resolve(result);
      };
      const onData = (chunk: Buffer) => {
        let answer: WireAnswer | null;
        try {
          answer = reader.push(chunk);
        } catch (e) {
          return finish((e as Error).message, false);
        }
        if (answer !== null) finish(answer, reader.keepAlive);
      };
      const onEnd = () => finish(reader.end() ?? 'the connection closed before the answer ended', false);
      const onError = (e: Error) => finish(e.message, false);
      const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`, false), timeoutMs);
      socket.on('data', onData).on('end', onEnd).on('close', onEnd).on('error', onError);
      // Parts (a head, then a body not joined to it: a copy of a large body is not made again) go out in one write.
      socket.cork();
      for (const part of Buffer.isBuffer(request) ? [request] : request) socket.write(part);
      socket.uncork();
    });
  }

  private connect(): net.Socket {
    const host = this.origin.hostname.replace(/^\[|\]$/g, '');
    const socket = this.origin.protocol === 'https:' ? tls.connect({ host, port: this.port, servername: net.isIP(host) === 0 ? host : undefined }) : net.connect(this.port, host);
    socket.setNoDelay(true);
    // An idle connection the host closes is dropped from the idle list; its errors are not a copy's.
    const onIdleGone = () => {
      const i = this.idle.indexOf(socket);
      if (i !== -1) this.idle.splice(i, 1);
    };
    socket.on('close', onIdleGone).on('error', () => undefined);
    return socket;
  }
}
