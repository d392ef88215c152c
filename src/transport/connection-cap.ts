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
  release(): void;
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
   * its address already holds the limit (counted and logged), or its peer is gone (no address).
   */
  admit(remoteAddress: string | undefined): Ticket | null {
    const address = remoteAddress === undefined ? null : canonicalAddress(remoteAddress);
    if (address === null) return null;
    const key = callerKey(address);
    const held = this.counts.get(key) ?? 0;
    const { perAddress, exempt } = this.limits;
    // Exempt peers are counted too (the count is every open connection), never refused.
    if (perAddress > 0 && held >= perAddress && !inRanges(address, exempt) && !this.shed(key)) {
      this.refuse(key);
      return null;
    }
    this.counts.set(key, held + 1);
    this.total += 1;
    let released = false;
    return {
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

  private refuse(key: string): void {
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

/**
 * Connections admitted by a cap and handed to another process (a cluster worker), which says when
 * each one closes. Each ticket is released once: by that word, by a handover that failed, or when its
 * holder ends (a worker that crashes says nothing; without this its connections would count forever).
 */
export class Handovers<Holder> {
  private next = 0;
  private readonly held = new Map<Holder, Map<number, Ticket>>();

  /** Records a connection about to be handed to `holder`; the id travels with it and comes back closed. */
  add(holder: Holder, ticket: Ticket): number {
    const id = ++this.next;
    let tickets = this.held.get(holder);
    if (tickets === undefined) this.held.set(holder, (tickets = new Map()));
    tickets.set(id, ticket);
    return id;
  }

  /** The holder closed connection `id`, or never got it. */
  closed(holder: Holder, id: number): void {
    const tickets = this.held.get(holder);
    if (tickets === undefined) return;
    tickets.get(id)?.release();
    tickets.delete(id);
    // A holder that ended while a handover to it was failing is not kept for good.
    if (tickets.size === 0) this.held.delete(holder);
  }

  /** The holder ended: every connection it held closed with it. */
  gone(holder: Holder): void {
    for (const ticket of this.held.get(holder)?.values() ?? []) ticket.release();
    this.held.delete(holder);
  }
}
