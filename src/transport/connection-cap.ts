import type net from 'node:net';
import { callerKey, canonicalAddress, inRanges } from '../basics/address';
import { log } from '../basics/log';
import type { ConnectionLimits } from '../config';

/**
 * The connections one client address holds open at once, capped (IIS's dynamic IP restrictions,
 * nginx's limit_conn). Without it one client opening thousands of connections, each kept alive by a
 * header byte now and then, uses up the process's file descriptors, and every new connection from
 * anyone is reset. Counted where connections are accepted (the single process, or the cluster primary
 * before it hands a connection to a worker) by the TCP peer's address, an IPv6 peer by its /64 as
 * basics/address.ts counts callers. Behind a proxy every connection is the proxy's: the proxy goes in
 * CONNECTION_LIMIT_EXEMPT and caps its own clients.
 */

/**
 * A refused address is logged once in this period, the next line saying how many were refused in
 * between: an attack writes a line a minute, not one per connection (the metric counts each).
 */
const LOG_EVERY_MS = 60_000;
/** Addresses remembered for the log's sake; past this, those whose period is over are forgotten. */
const LOG_MEMORY = 10_000;

/** One admitted connection's place in the count, given back once it closes (again: no effect). */
export interface Ticket {
  /** Its client address's key (an IPv6 client's /64). */
  readonly key: string;
  release(): void;
}

/** An address at its cap, whose connection waits while another process is asked to close an idle one. */
export interface Full {
  full: string;
}

export class ConnectionCap {
  private readonly counts = new Map<string, number>();
  private readonly logged = new Map<string, { at: number; refused: number }>();
  private total = 0;

  /**
   * `shed` closes one idle connection of an address at its cap, if it has one (idle.ts), so that the
   * new one is admitted: counted until the closed one's release, a moment later.
   */
  constructor(
    private readonly limits: ConnectionLimits,
    private readonly onRefused: () => void,
    private readonly shed: (key: string) => boolean = () => false,
  ) {}

  /** Connections admitted and not yet released. */
  get open(): number {
    return this.total;
  }

  /**
   * Counts a new connection from `remoteAddress`, or returns null when it is to be closed at once:
   * its address already holds the limit and has no idle connection to give way (counted and logged),
   * or its peer is gone (no address).
   */
  admit(remoteAddress: string | undefined): Ticket | null {
    const verdict = this.check(remoteAddress);
    if (verdict === null || !('full' in verdict)) return verdict;
    if (this.shed(verdict.full)) return this.admitOver(verdict.full);
    this.refuse(verdict.full);
    return null;
  }

  /**
   * As admit, for a process whose connections' idleness another process knows (the cluster primary):
   * an address at its cap is not refused here but returned, for its holders to be asked (admitOver
   * once one closed an idle connection, else refuse).
   */
  check(remoteAddress: string | undefined): Ticket | Full | null {
    const address = remoteAddress === undefined ? null : canonicalAddress(remoteAddress);
    if (address === null) return null;
    const key = callerKey(address);
    const { perAddress, exempt } = this.limits;
    // Exempt peers are counted too (the count is every open connection), never refused.
    if (perAddress > 0 && (this.counts.get(key) ?? 0) >= perAddress && !inRanges(address, exempt)) return { full: key };
    return this.admitOver(key);
  }

  /** Counts a connection of `key` whatever its count: one of its idle ones is closing, and will be released. */
  admitOver(key: string): Ticket {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.total += 1;
    let released = false;
    return {
      key,
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        const left = (this.counts.get(key) ?? 1) - 1;
        if (left > 0) this.counts.set(key, left);
        else this.counts.delete(key);
      },
    };
  }

  /** A connection of `key` closed unread: counted, and logged once a period per address. */
  refuse(key: string): void {
    this.onRefused();
    const now = Date.now();
    const last = this.logged.get(key);
    if (last !== undefined && now - last.at < LOG_EVERY_MS) {
      last.refused += 1;
      return;
    }
    if (this.logged.size >= LOG_MEMORY) {
      for (const [k, entry] of this.logged) if (now - entry.at >= LOG_EVERY_MS) this.logged.delete(k);
      // Still full within one period: this one is counted by the metric only.
      if (this.logged.size >= LOG_MEMORY) return;
    }
    log.warn('connection refused: too many open from one address', {
      client: key,
      limit: this.limits.perAddress,
      refusedSincePreviousLine: last?.refused ?? 0,
    });
    this.logged.set(key, { at: now, refused: 0 });
  }
}

/**
 * Caps a listening server's own connections (the single process). First among its 'connection'
 * listeners, so a refused socket is destroyed before a byte of it is read or written.
 */
export function capConnections(server: net.Server, cap: ConnectionCap): void {
  server.prependListener('connection', (socket: net.Socket) => {
    const ticket = cap.admit(socket.remoteAddress);
    if (ticket === null) return void socket.destroy();
    socket.once('close', () => ticket.release());
  });
}

/** A connection handed over, not yet taken: the sender's copy of it, with its place in the count. */
export interface Untaken<Copy> {
  copy: Copy;
  ticket: Ticket;
}

/**
 * Connections admitted by a cap and handed to other processes (cluster workers), in two steps. Handed,
 * a connection is the sender's still: it keeps its own copy until the holder says it has taken it, and
 * the holder reads nothing before saying so (process/handover.ts). So a holder that ends before taking
 * it read none of it, and its copy goes to another holder with its ticket. Taken, the sender's copy is
 * given back to be closed (the holder's stays open), and the ticket waits for the word closed or the
 * holder's end (a worker that crashes says nothing; without this its connections would count forever).
 * Each ticket is released exactly once, whatever the order of these words; a word about a connection
 * the holder does not hold (late, repeated, from another holder) changes nothing.
 */
export class Handovers<Holder, Copy> {
  private next = 0;
  private readonly held = new Map<Holder, Map<number, { ticket: Ticket; copy: Copy | null }>>();
  /** Connections handed to each holder and not yet taken. */
  private readonly untakenBy = new Map<Holder, number>();

  /** Records a connection about to be handed to `holder`; its id travels with it and comes back. */
  add(holder: Holder, copy: Copy, ticket: Ticket): number {
    const id = ++this.next;
    let connections = this.held.get(holder);
    if (connections === undefined) this.held.set(holder, (connections = new Map()));
    connections.set(id, { ticket, copy });
    this.untakenBy.set(holder, this.untaken(holder) + 1);
    return id;
  }

  /** How many connections handed to `holder` it has not yet taken. */
  untaken(holder: Holder): number {
    return this.untakenBy.get(holder) ?? 0;
  }

  private settled(holder: Holder): void {
    const left = this.untaken(holder) - 1;
    if (left > 0) this.untakenBy.set(holder, left);
    else this.untakenBy.delete(holder);
  }

  /** The holder has connection `id`: the sender's copy, to be closed (once; then undefined). */
  taken(holder: Holder, id: number): Copy | undefined {
    const connection = this.held.get(holder)?.get(id);
    if (connection === undefined || connection.copy === null) return undefined;
    const { copy } = connection;
    connection.copy = null;
    this.settled(holder);
    return copy;
  }

  /** The holder closed connection `id`, or never got it: released; a copy never taken is returned, to be closed. */
  closed(holder: Holder, id: number): Copy | undefined {
    const connections = this.held.get(holder);
    const connection = connections?.get(id);
    if (connections === undefined || connection === undefined) return undefined;
    connection.ticket.release();
    connections.delete(id);
    if (connections.size === 0) this.held.delete(holder);
    if (connection.copy !== null) this.settled(holder);
    return connection.copy ?? undefined;
  }

  /** The handover of `id` failed (the holder never got it): the connection back, for another holder. */
  withdraw(holder: Holder, id: number): Untaken<Copy> | undefined {
    const connections = this.held.get(holder);
    const connection = connections?.get(id);
    if (connections === undefined || connection?.copy == null) return undefined;
    connections.delete(id);
    if (connections.size === 0) this.held.delete(holder);
    this.settled(holder);
    return { copy: connection.copy, ticket: connection.ticket };
  }

  /** The holders of connections of address `key` they have taken, those holding the most first. */
  holdersOf(key: string): Holder[] {
    const counted: [Holder, number][] = [];
    for (const [holder, connections] of this.held) {
      let n = 0;
      for (const { ticket, copy } of connections.values()) if (copy === null && ticket.key === key) n += 1;
      if (n > 0) counted.push([holder, n]);
    }
    return counted.sort((a, b) => b[1] - a[1]).map(([holder]) => holder);
  }

  /**
   * The holder ended: the connections it had taken closed with it (released, and counted in `closed`);
   * those it had not are returned with their tickets, for another holder.
   */
  gone(holder: Holder): { closed: number; untaken: Untaken<Copy>[] } {
    const untaken: Untaken<Copy>[] = [];
    let closed = 0;
    for (const { ticket, copy } of this.held.get(holder)?.values() ?? []) {
      if (copy !== null) untaken.push({ copy, ticket });
      else {
        ticket.release();
        closed += 1;
      }
    }
    this.held.delete(holder);
    this.untakenBy.delete(holder);
    return { closed, untaken };
  }
}
