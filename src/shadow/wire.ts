import net from 'node:net';
import tls from 'node:tls';
import { AnswerReader, type AnswerSink, KeptAnswer, MAX_ANSWER_BYTES, type WireAnswer } from './answer';

/**
 * The copier's HTTP/1.1 client: requests go out as bytes made ready beforehand, and answers are read
 * by their framing alone (answer.ts), on keep-alive connections. node's http client costs twice as much CPU per
 * copy (measured: 700 against 350 ms of the copier's CPU for 12,000 copies), most of it in request
 * objects, header validation and stream events a copy needs none of; and on a machine that answers
 * clients, the copies' CPU is what slows them.
 */

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
  /** Whether a copy lost with its connection may be sent again: those pipelined are without effects. */
  private readonly resend: boolean;

  /** `answerCap`: the most of an answer's body read (AnswerReader). */
  constructor(
    private readonly origin: URL,
    private readonly answerCap = MAX_ANSWER_BYTES,
    private readonly connections = Infinity,
    private depth = 1,
  ) {
    this.port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
    this.resend = depth > 1;
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
      if (c === undefined)
        for (const o of this.open) if (o.proven && o.sent.length < this.depth && (c === undefined || o.sent.length < c.sent.length)) c = o;
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
      else if (!this.resend || ex.retried || ex.begun) ex.finish(why);
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
    // Copies pipelined behind one that was never answered: a host (or something before it) that does
    // not serve pipelined requests, or one too slow for them. Either way, one at a time from now on.
    if (c.sent.length > 1) this.depth = 1;
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
