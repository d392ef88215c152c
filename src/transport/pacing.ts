import type http from 'node:http';
import type net from 'node:net';
import { addressKey, idleConnections } from './idle';
import { RequestLines } from './raw-target';

/**
 * A connection's requests are read only as fast as its answers are taken: one request at a time, the
 * next one read once the answer before it is written and the client has taken all but
 * MAX_UNSENT_BYTES of what was written, as nginx and HAProxy serve HTTP/1.1 pipelining.
 *
 * Node's own server parses every request a read brings (a read is up to 64 KiB: eight hundred small
 * pipelined GETs) and runs them all at once, and stops reading only once answers back up. A client that
 * pipelines without reading its answers made the service run thousands of requests a second per
 * connection, hold all of their answers, and make everyone else wait seconds for a turn; under a
 * small heap the process ran out of memory in seconds.
 *
 * So the parser is fed here, by slices of at most SLICE bytes, from what the socket read. Once a
 * request is whole and being answered, the rest stays unread: in the kernel (the socket's reading is
 * stopped), or in the one read that was already taken. Requests a slice held beyond the first wait
 * their turn (after an answer, a connection with more to do waits for a turn of the event loop, a
 * few connections a turn, so that every connection gets one and new connections are accepted in
 * between). Each connection then holds at
 * most: one read of bytes, the requests of one slice, the answer being written and MAX_UNSENT_BYTES;
 * a client that takes nothing at all is closed by the send time-out (transport/server.ts).
 *
 * This takes over node's 'data' and 'end' listeners of the connection (its parser is fed the same
 * bytes, only later); test/pacing.test.ts holds every supported Node to what that relies on.
 */

/** The largest piece of a read handed to the parser at once: a small request's worth, and a few dozen at most of the smallest. */
const SLICE = 1024;
/**
 * A body declared by its Content-Length goes to the parser in pieces of up to a read's size, none
 * longer than what the body may still hold: past the body's end, no more than one SLICE is parsed.
 */
const BODY_SLICE = 64 * 1024;

const PACED = Symbol('paced connection');

/**
 * Turns given to connections with more to do (a request waiting, bytes held) in one turn of the event
 * loop. Node accepts one new connection per turn, so a turn that ran every busy connection's next
 * request would make a burst of new connections wait a second or more to be accepted; a few at a
 * time keep each turn short, and the rest go on, in order, on the next.
 */
const TURNS_AT_ONCE = 4;
const turns: Connection[] = [];
let turnsScheduled = false;

function runTurns(): void {
  turnsScheduled = false;
  for (let n = Math.min(turns.length, TURNS_AT_ONCE); n > 0; n -= 1) turns.shift()!.turn();
  scheduleTurns();
}

function scheduleTurns(): void {
  if (turnsScheduled || turns.length === 0) return;
  turnsScheduled = true;
  setImmediate(runTurns);
}

/** What is held back at this moment, over every connection of the process (the metrics read it). */
export const pacing = {
  /** Requests read whole and waiting for the answer to an earlier one on their connection. */
  waiting: 0,
  /** Connections with bytes read but not yet parsed, whose reading is stopped meanwhile. */
  held: 0,
  /** Those bytes. */
  heldBytes: 0,
};

// biome-ignore lint/suspicious/noExplicitAny: node's listeners take what their events carry
type Listener = (...args: any[]) => void;
/** Node's own http server's view of a connection: `_paused` is set while its answers back up. */
type NodeSocket = net.Socket & { _paused?: boolean; parser?: unknown; [PACED]?: Connection };

/** Node's listener of `event` that the http server added to the connection (a bound function of its own). */
function nodeListener(socket: net.Socket, event: string, name: string): Listener | undefined {
  return socket.listeners(event).find((l) => l.name === `bound ${name}`) as Listener | undefined;
}

class Connection {
  private readonly stash: Buffer[] = [];
  private stashed = 0;
  /** The request being answered: no other runs, and once it is whole no more is parsed. */
  private running: http.IncomingMessage | null = null;
  /** At most what the running request's body still holds, by its Content-Length, after the slice its headers came in. */
  private bodyLeft = 0;
  private readonly waiting: (() => void)[] = [];
  /** The client sent its last byte (node's end handling waits until every request of it is answered). */
  private ended = false;
  private endHandled = false;
  private closed = false;
  /** Reading was stopped here (not by node, nor by a listener holding the connection). */
  private stopped = false;
  private turnTaken = false;
  /** Whether it is among its address's idle connections (idle.ts). */
  private isIdle = false;
  /** Its client address's key (idle.ts), read once. */
  private key: string | null | undefined;
  /** Where its request lines are, for their raw bytes (raw-target.ts). */
  private readonly lines: RequestLines;

  constructor(
    private readonly socket: NodeSocket,
    private readonly parse: (chunk: Buffer) => void,
    private readonly endParsing: () => void,
    private readonly maxUnsentBytes: number,
  ) {
    this.lines = new RequestLines(socket.parser);
    // While bytes are held, nothing but this connection resumes reading: node resumes a socket
    // after each answer (to drop an unread body) and on its own drain.
    const resume = socket.resume;
    socket.resume = (): NodeSocket => {
      if (this.stashed === 0) return resume.call(socket);
      // Whoever resumes may have made room: looked at on the next turn.
      this.nextTurn();
      return socket;
    };
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('end', () => {
      this.ended = true;
      this.nextTurn();
    });
    // Room to write, or reading resumed: what is held goes on in the connection's turn.
    socket.on('drain', () => this.nextTurn());
    socket.on('resume', () => this.nextTurn());
    socket.once('close', () => this.close());
  }

  /** A request node parsed: run now, or after the one before it is answered. */
  request(req: http.IncomingMessage, res: http.ServerResponse, handler: http.RequestListener): void {
    this.lines.headers(req);
    if (this.running === null && this.waiting.length === 0) return this.run(req, res, handler);
    pacing.waiting += 1;
    this.waiting.push(() => {
      pacing.waiting -= 1;
      this.run(req, res, handler);
    });
  }

  private run(req: http.IncomingMessage, res: http.ServerResponse, handler: http.RequestListener): void {
    this.running = req;
    this.bodyLeft = req.complete ? 0 : Number(req.headers['content-length']) || 0;
    res.once('close', () => {
      if (this.running !== req) return;
      this.running = null;
      // Anything more of this connection's waits for its turn: one answer per turn each.
      if (this.waiting.length > 0 || this.stashed > 0) this.nextTurn();
      else if (this.ended) this.endIfDone();
      else this.idle();
    });
    handler(req, res);
  }

  /** Whether its client is in the middle of sending a request: the head begun, or the running request's body not all come. */
  midRequest(): boolean {
    return this.running === null ? this.lines.midMessage : !this.running.complete;
  }

  /** Nothing asked on the connection now: it may give way to another of its address (idle.ts). */
  private idle(): void {
    if (this.key === undefined) this.key = addressKey(this.socket.remoteAddress);
    if (this.key === null || this.closed) return;
    this.isIdle = true;
    idleConnections.add(this.key, this.socket);
  }

  private busy(): void {
    if (!this.isIdle) return;
    this.isIdle = false;
    idleConnections.remove(this.key!, this.socket);
  }

  private received(chunk: Buffer): void {
    this.busy();
    if (this.stashed === 0) pacing.held += 1;
    this.stash.push(chunk);
    this.stashed += chunk.length;
    pacing.heldBytes += chunk.length;
    this.feed();
  }

  /** Queues the connection for a turn (once, however often it is asked). */
  private nextTurn(): void {
    if (this.turnTaken) return;
    this.turnTaken = true;
    turns.push(this);
    scheduleTurns();
  }

  turn(): void {
    this.turnTaken = false;
    this.next();
  }

  /**
   * Goes on where the connection stands: the next waiting request, then more of what was read (a
   * request that waited may have the rest of its body still unread: its handler waits for it).
   */
  private next(): void {
    if (this.closed || this.unsentTooMuch()) return;
    if (this.running === null) this.waiting.shift()?.();
    this.feed();
    this.endIfDone();
  }

  /** Node's own end handling (the parser finished, our side closed) once everything the client sent is answered. */
  private endIfDone(): void {
    if (!this.ended || this.endHandled || this.closed || this.stashed > 0 || this.running !== null || this.waiting.length > 0) return;
    this.endHandled = true;
    this.endParsing();
  }

  private unsentTooMuch(): boolean {
    return this.socket.writableLength > this.maxUnsentBytes;
  }

  /** Whether the parser may be given more: nothing waiting, the request being answered not yet whole, node not holding the connection. */
  private parsing(): boolean {
    if (this.closed || this.socket._paused === true || this.socket.parser == null) return false;
    if (this.waiting.length > 0 || this.unsentTooMuch()) return false;
    return this.running === null || !this.running.complete;
  }

  private feed(): void {
    while (this.stashed > 0 && this.parsing()) {
      const head = this.stash[0]!;
      const inBody = this.running !== null && !this.running.complete && this.bodyLeft > SLICE;
      const size = inBody ? Math.min(this.bodyLeft, BODY_SLICE) : SLICE;
      const cut = this.lines.size(head.length <= size ? head : head.subarray(0, size));
      const slice = cut === head.length ? head : head.subarray(0, cut);
      if (slice === head) this.stash.shift();
      else this.stash[0] = head.subarray(cut);
      if (inBody) this.bodyLeft -= slice.length;
      this.take(slice.length);
      this.parse(this.lines.prepare(slice));
    }
    // Reading stops while anything is held, and starts again once it is all parsed.
    if (this.stashed > 0 && !this.stopped) {
      this.stopped = true;
      this.socket.pause();
    } else if (this.stashed === 0 && this.stopped) {
      this.stopped = false;
      if (!this.closed) this.socket.resume();
    }
  }

  private take(bytes: number): void {
    this.stashed -= bytes;
    pacing.heldBytes -= bytes;
    if (this.stashed === 0) pacing.held -= 1;
  }

  private close(): void {
    this.busy();
    this.closed = true;
    this.lines.release();
    if (this.stashed > 0) this.take(this.stashed);
    this.stash.length = 0;
    pacing.waiting -= this.waiting.length;
    this.waiting.length = 0;
  }
}

/**
 * Paces every connection of `server` (an http.Server: its own connections, or those handed to it
 * with emit('connection')), and returns its request listener wrapped to run one request at a time
 * per connection.
 */
export function paceConnections(server: http.Server, handler: http.RequestListener, maxUnsentBytes: number): http.RequestListener {
  server.on('connection', (socket: NodeSocket) => {
    const onData = nodeListener(socket, 'data', 'socketOnData');
    const onEnd = nodeListener(socket, 'end', 'socketOnEnd');
    // A Node whose server is not the one this was written against: served as node serves it.
    if (onData === undefined || onEnd === undefined) return;
    socket.removeListener('data', onData);
    socket.removeListener('end', onEnd);
    socket[PACED] = new Connection(socket, onData, onEnd, maxUnsentBytes);
  });
  return (req, res) => {
    const connection = (req.socket as NodeSocket)[PACED];
    if (connection === undefined) handler(req, res);
    else connection.request(req, res, handler);
  };
}

/** Whether the client of a paced connection is in the middle of sending a request (false for one not paced). */
export function midRequest(socket: net.Socket): boolean {
  return (socket as NodeSocket)[PACED]?.midRequest() === true;
}

/** Whether the connection is paced (test/pacing.test.ts asks it of every supported Node). */
export function isPaced(socket: net.Socket): boolean {
  return (socket as NodeSocket)[PACED] !== undefined;
}
