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
    return { status: this.status, headers: this.headers, body: this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size) };
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

/**
 * Where every plain connection's bytes are read (node's `onread`): one buffer for all, reused by
 * each read, since a read is handed on (AnswerReader, then its sink) before the next one. A fresh
 * 64 KiB for each read, node's default, was most of what the copier allocated for a roster's copy.
 */
const READS = Buffer.allocUnsafeSlow(64 * 1024);

/** An exchange under way: its request, where its answer is read, and how it ends. */
interface Exchange {
  method: string;
  request: Buffer | readonly Buffer[];
  reader: AnswerReader;
  finish: (why: string | null) => void;
  /** Whether it was sent again already, its connection lost before its answer: never twice. */
  retried: boolean;
  /** Whether any of its answer has been read (its sink has had some of it): then it is never sent again. */
  begun: boolean;
}

/** A keep-alive connection and the exchanges sent on it, oldest first: answers come back in the order their requests went. */
interface Connection {
  socket: net.Socket;
  sent: Exchange[];
  /** Whether requests may follow one another on it before their answers: once it has carried an answer kept alive. */
  proven: boolean;
}

/**
 * Keep-alive connections to one origin, at most `connections` of them. With `depth` above 1 (copies of
 * operations without effects: mirror.ts), a connection that has kept one answer alive carries up to
 * `depth` requests at once, pipelined: the host still works on one at a time per connection (HTTP/1.1
 * answers in order), so it sees no more copies at once than SHADOW_CONCURRENCY, while the copier writes
 * a batch of requests in one go and reads their answers as they pile up, rather than waking once for
 * each answer and writing each next request (on this 2-core machine, most of a small call's copy: the
 * wake-ups, counted on the copier, and on the service whose core they share). A connection lost with
 * requests unanswered sends them again on another, once: they have no effects. Without pipelining
 * (`depth` 1) nothing is ever sent again.
 */
export class Wire {
  private readonly open: Connection[] = [];
  /** Exchanges waiting for a connection that can take them. */
  private readonly backlog: Exchange[] = [];
  private readonly port: number;

  /** `answerCap`: the most of an answer's body read (AnswerReader). */
  constructor(
    private readonly origin: URL,
    private readonly answerCap = MAX_ANSWER_BYTES,
    private readonly connections = Infinity,
    private readonly depth = 1,
  ) {
    this.port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
  }

  /**
   * Sends `request` (the head and body as they go out, in one buffer or in parts written together)
   * and reads its answer into `sink` within `timeoutMs`: null once it has all been read, or why there
   * was none (ANSWER_TOO_LARGE for one over the cap). Never rejects.
   */
  exchange(method: string, request: Buffer | readonly Buffer[], timeoutMs: number, sink: AnswerSink): Promise<string | null> {
    return new Promise((resolve) => {
      const ex: Exchange = {
        method,
        request,
        reader: new AnswerReader(method, sink, this.answerCap),
        retried: false,
        begun: false,
        finish: (why) => {
          clearTimeout(timer);
          ex.finish = () => undefined;
          resolve(why);
        },
      };
      const timer = setTimeout(() => this.timedOut(ex, timeoutMs), timeoutMs);
      this.backlog.push(ex);
      this.dispatch();
    });
  }

  /** `exchange` into a KeptAnswer: the whole answer, or why there was none. */
  async ask(method: string, request: Buffer | readonly Buffer[], timeoutMs: number): Promise<WireAnswer | string> {
    const kept = new KeptAnswer();
    return (await this.exchange(method, request, timeoutMs, kept)) ?? kept.answer;
  }

  /**
   * Exchanges from the backlog onto connections, one at a time onto the least busy that can take it:
   * an idle one, a new one (up to `connections`), else a proven one below `depth`. What goes on one
   * connection in one call goes out in one write.
   */
  private dispatch(): void {
    if (this.backlog.length === 0) return;
    const corked = new Set<Connection>();
    while (this.backlog.length > 0) {
      let c = this.open.find((o) => o.sent.length === 0);
      if (c === undefined && this.open.length < this.connections) c = this.connect();
      if (c === undefined) for (const o of this.open) if (o.proven && o.sent.length < this.depth && (c === undefined || o.sent.length < c.sent.length)) c = o;
      if (c === undefined) break;
      if (!corked.has(c)) {
        c.socket.cork();
        corked.add(c);
      }
      const ex = this.backlog.shift()!;
      c.sent.push(ex);
      for (const part of Buffer.isBuffer(ex.request) ? [ex.request] : ex.request) c.socket.write(part);
    }
    for (const c of corked) c.socket.uncork();
  }

  /** Bytes read on `c`: the answer of its oldest exchange, then, pipelined, the next one's; then what waits goes out. */
  private read(c: Connection, chunk: Buffer): void {
    this.answers(c, chunk);
    this.dispatch();
  }

  private answers(c: Connection, chunk: Buffer): void {
    for (;;) {
      const ex = c.sent[0];
      // Bytes nothing was asked for: the connection's framing is lost.
      if (ex === undefined) return this.lose(c, 'bytes beyond the answer');
      let ended: boolean;
      ex.begun = true;
      try {
        ended = ex.reader.push(chunk);
      } catch (e) {
        c.sent.shift();
        ex.finish((e as Error).message);
        return this.lose(c, 'the connection closed before the answer ended');
      }
      if (!ended) return;
      c.sent.shift();
      ex.finish(null);
      if (!ex.reader.keepAlive) return this.lose(c, 'the connection closed before the answer ended');
      c.proven = true;
      if (ex.reader.beyond === 0) return;
      chunk = chunk.subarray(chunk.length - ex.reader.beyond);
    }
  }

  /**
   * A connection gone (closed, reset, its framing lost): an answer framed by its end is whole. The
   * others are sent again on another connection, once, if pipelined and not yet begun (their sink
   * has had nothing); otherwise they fail.
   */
  private lose(c: Connection, why: string): void {
    const i = this.open.indexOf(c);
    if (i === -1) return;
    this.open.splice(i, 1);
    c.socket.destroy();
    for (const ex of c.sent.splice(0)) {
      if (ex.reader.end()) ex.finish(null);
      else if (this.depth === 1 || ex.retried || ex.begun) ex.finish(why);
      else {
        ex.retried = true;
        this.backlog.push(ex);
      }
    }
    this.dispatch();
  }

  /** An exchange not answered in time: out of the backlog, or its connection given up (answers come in order: it cannot be skipped). */
  private timedOut(ex: Exchange, timeoutMs: number): void {
    const why = `no answer within ${timeoutMs} ms`;
    ex.finish(why);
    const waiting = this.backlog.indexOf(ex);
    if (waiting !== -1) return void this.backlog.splice(waiting, 1);
    const c = this.open.find((o) => o.sent.includes(ex));
    if (c === undefined) return;
    c.sent.splice(c.sent.indexOf(ex), 1);
    this.lose(c, why);
  }

  private connect(): Connection {
    const host = this.origin.hostname.replace(/^\[|\]$/g, '');
    const c: Connection = { socket: undefined as unknown as net.Socket, sent: [], proven: false };
    const read = (chunk: Buffer) => this.read(c, chunk);
    // TLS reads into buffers of its own; a plain connection into the shared one.
    c.socket =
      this.origin.protocol === 'https:'
        ? tls.connect({ host, port: this.port, servername: net.isIP(host) === 0 ? host : undefined }).on('data', read)
        : net.connect({ host, port: this.port, onread: { buffer: READS, callback: (n) => (read(READS.subarray(0, n)), true) } });
    c.socket.setNoDelay(true);
    const gone = (why: string) => () => this.lose(c, why);
    c.socket.on('end', gone('the connection closed before the answer ended'));
    c.socket.on('close', gone('the connection closed before the answer ended'));
    c.socket.on('error', (e) => this.lose(c, e.message));
    this.open.push(c);
    return c;
  }
}
