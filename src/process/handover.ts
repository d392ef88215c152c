import type { SendHandle } from 'node:child_process';
import type { Worker } from 'node:cluster';
import net from 'node:net';
import { countNotReceived, countWorkerEnded } from '../app/metrics';
import { type ConnectionCap, Handovers, type Untaken } from '../transport/connection-cap';
import type { ToPrimary, ToWorker } from './cluster-messages';

/**
 * How the cluster primary hands accepted connections to its workers, so that a worker that dies
 * (kill -9, an uncaught exception, out of memory) leaves no connection hanging and no descriptor behind.
 *
 * Node's own way, a net.Socket given to send(), does not do for a worker that may die. The primary's
 * copy is closed as soon as it is sent, and the sends queued behind it wait for the worker's
 * acknowledgement: when the worker dies first, those connections are neither served nor closed (their
 * clients wait out their own time-out), and their descriptors stay in the primary for good, held by
 * Node's queue where nothing can close them. And the receiving process wraps the connection and
 * starts reading it before its message handler runs, so no word from the worker could say whether it
 * had read a request. So the primary sends the socket's native handle, as Node's cluster module does
 * with its own round-robin connections (`net.Native`): that leaves the primary's socket open. The
 * worker first says `taken`, and wraps the handle (and so reads) only once that word is written to
 * its channel; then the primary closes its copy (the worker's descriptor keeps the connection open).
 *
 * A worker's channel is read to its end before its process says `close`: a connection it had not
 * taken by then was never read, and goes to another worker (or waits for one) with its place in the
 * per-address count. One it had taken closed with it: the kernel closes a connection with its last
 * descriptor, at once, which its client sees as a reset or an end.
 *
 * A handle that does not reach the worker (it has no descriptor free, and the kernel drops it) is not
 * sent again by Node when it is a native handle: the worker says `missed`, and the connection goes to
 * the next worker, closed only once MAX_MISSES workers in a row missed it (Node's own retries for a socket).
 */
const MAX_MISSES = 3;
/**
 * Connections a worker may hold handed and not yet taken. A worker that takes none (stuck in a long
 * computation, dying of out of memory, stopped) is handed no more: strict turns gave it every other
 * new connection, each waiting unanswered for as long as it stayed stuck, until every client was
 * waiting on it. As Node's round robin does, a worker is handed the next connection once it has taken
 * the last; the others go to a worker free to take one, or wait here for one.
 */
const MAX_UNTAKEN = 1;
/** How long a worker may take to say whether it closed an idle connection (one that does not: no). */
const SHED_ASK_MS = 1000;

export class Handout {
  /** The workers that serve, in turn. */
  readonly serving: Worker[] = [];
  private readonly handovers = new Handovers<Worker, net.Socket>();
  private readonly waiting: Untaken<net.Socket>[] = [];
  /** While the listener closes, connections are held here, handed over once it has closed. */
  private held: Untaken<net.Socket>[] | null = null;
  /**
   * Once the workers are told to stop, a connection a dead worker had not taken is closed rather than
   * handed again: the others are draining, and may have ended before they would take it.
   */
  private stopped = false;
  private turn = 0;
  private readonly misses = new WeakMap<net.Socket, number>();
  private questions = 0;
  /** Workers asked to close an idle connection, by question: what to do with their answer. */
  private readonly asked = new Map<number, (closed: boolean) => void>();
  /** Connections waiting for such an answer, by address. */
  private readonly shedding = new Map<string, number>();

  constructor(
    private readonly cap: ConnectionCap,
    private readonly perAddress: number,
  ) {}

  accept(socket: net.Socket): void {
    const verdict = this.cap.check(socket.remoteAddress);
    if (verdict === null) return void socket.destroy();
    if ('full' in verdict) return this.shed(verdict.full, socket, this.handovers.holdersOf(verdict.full));
    this.dispatch({ copy: socket, ticket: verdict });
  }

  /**
   * An address at its cap: the workers holding its connections are asked in turn to close an idle one
   * (transport/idle.ts), and the new connection, held unread meanwhile, is admitted once one did, or
   * refused once none could. At most the cap's worth of an address's connections wait so.
   */
  private shed(key: string, socket: net.Socket, holders: Worker[]): void {
    const worker = holders.shift();
    if (worker === undefined || (this.shedding.get(key) ?? 0) >= this.perAddress) {
      this.cap.refuse(key);
      return void socket.destroy();
    }
    const id = ++this.questions;
    this.shedding.set(key, (this.shedding.get(key) ?? 0) + 1);
    const timer = setTimeout(() => answer(false), SHED_ASK_MS);
    const answer = (closed: boolean) => {
      if (!this.asked.delete(id)) return;
      clearTimeout(timer);
      const left = this.shedding.get(key)! - 1;
      if (left > 0) this.shedding.set(key, left);
      else this.shedding.delete(key);
      if (socket.destroyed) return;
      if (closed) this.dispatch({ copy: socket, ticket: this.cap.admitOver(key) });
      else this.shed(key, socket, holders);
    };
    this.asked.set(id, answer);
    worker.send({ type: 'shed?', id, key } satisfies ToWorker, undefined, undefined, (err) => err === null || answer(false));
  }

  /** `worker` serves: connections waiting for one go to the workers. */
  serve(worker: Worker): void {
    this.serving.push(worker);
    this.flush();
  }

  /** `worker` gets no more connections (it exited, or a send to it failed). */
  retire(worker: Worker): void {
    const at = this.serving.indexOf(worker);
    if (at >= 0) this.serving.splice(at, 1);
  }

  /** A worker's word about a connection it was handed. */
  heard(worker: Worker, m: ToPrimary): void {
    if (m.type === 'taken') this.handovers.taken(worker, m.connection)?.destroy();
    // Closed without being taken: the worker got no handle (Node sends none for a socket already closed).
    else if (m.type === 'closed') this.handovers.closed(worker, m.connection)?.destroy();
    else if (m.type === 'missed') this.missed(worker, m.connection);
    else if (m.type === 'shed') return void this.asked.get(m.id)?.(m.closed);
    // The worker may be free to take the next.
    this.flush();
  }

  private missed(worker: Worker, id: number): void {
    const back = this.handovers.withdraw(worker, id);
    if (back === undefined) return;
    const misses = (this.misses.get(back.copy) ?? 0) + 1;
    this.misses.set(back.copy, misses);
    const outcome = misses < MAX_MISSES ? 'handed_again' : 'closed';
    countNotReceived(outcome);
    if (outcome === 'closed') close(back);
    else this.dispatch(back);
  }

  /** `worker` has ended, and every word it wrote has been read (its process's 'close'). */
  ended(worker: Worker): void {
    this.retire(worker);
    const { closed, untaken } = this.handovers.gone(worker);
    countWorkerEnded('closed', closed);
    countWorkerEnded(this.stopped ? 'closed' : 'handed_again', untaken.length);
    for (const connection of untaken) this.dispatch(connection);
  }

  /** The listener is closing: connections are held until `release`. */
  hold(): void {
    this.held = [];
  }

  /**
   * The listener has closed: the connections held, and those waiting for a worker free to take them,
   * go to the workers whatever they hold untaken (before the workers are told to stop, so each is read
   * first); with no worker serving they are closed (none will come now). From now on a connection a
   * dead worker had not taken is closed.
   */
  release(): void {
    this.waiting.push(...(this.held ?? []));
    this.held = null;
    this.flush(true);
    for (const connection of this.waiting.splice(0)) close(connection);
    this.stopped = true;
  }

  /** Queues `connection` for the next worker free to take it, and hands out what can be. */
  private dispatch(connection: Untaken<net.Socket>): void {
    if (this.held !== null) return void this.held.push(connection);
    if (this.stopped || handleOf(connection.copy) === null) return close(connection);
    this.waiting.push(connection);
    this.flush();
  }

  /** Connections waiting for a worker go, in order, to those free to take one (`toAny`: to any serving). */
  private flush(toAny = false): void {
    while (this.waiting.length > 0) {
      const worker = this.nextWorker(toAny);
      if (worker === undefined) return;
      const connection = this.waiting.shift()!;
      const handle = handleOf(connection.copy);
      // Its client may have left while it waited.
      if (handle === null) close(connection);
      else this.handTo(worker, connection, handle);
    }
  }

  /** The next serving worker in turn that may be handed a connection (`toAny`: whatever it holds untaken). */
  private nextWorker(toAny: boolean): Worker | undefined {
    for (let tried = 0; tried < this.serving.length; tried += 1) {
      const worker = this.serving[this.turn++ % this.serving.length]!;
      if (toAny || this.handovers.untaken(worker) < MAX_UNTAKEN) return worker;
    }
    return undefined;
  }

  private handTo(worker: Worker, connection: Untaken<net.Socket>, handle: SendHandle): void {
    const id = this.handovers.add(worker, connection.copy, connection.ticket);
    worker.send({ type: 'connection', connection: id } satisfies ToWorker, handle, (err) => {
      // Not written (the worker is disconnecting): it never got it, another worker does.
      const back = err === null ? undefined : this.handovers.withdraw(worker, id);
      if (back === undefined) return;
      this.retire(worker);
      countWorkerEnded('handed_again', 1);
      this.dispatch(back);
    });
  }
}

function close({ copy, ticket }: Untaken<net.Socket>): void {
  copy.destroy();
  ticket.release();
}

/** An accepted socket's native handle, to send as is (null once the socket is destroyed). */
function handleOf(socket: net.Socket): SendHandle | null {
  return (socket as unknown as { _handle: SendHandle | null })._handle;
}

/** A worker's socket for a handle the primary sent (what Node's cluster module does with its own). */
export function socketOf(handle: unknown): net.Socket {
  return new net.Socket({ handle, readable: true, writable: true } as net.SocketConstructorOpts);
}
