import type net from 'node:net';
import { callerKey, canonicalAddress } from '../basics/address';
import { closedConnections } from './closed';

/**
 * Kept-alive connections with nothing asked on them, by client address (an IPv6 client by its /64),
 * oldest first: what gives way when an address reaches MAX_CONNECTIONS_PER_ADDRESS. A school's app
 * users behind one NAT each leave an idle keep-alive connection open, as HTTP clients do; counted like
 * busy ones, 100 of them locked every further user of that school out for as long as they were kept
 * (65 s). nginx's limit_conn counts only connections with a request in progress; HAProxy and nginx
 * close idle keep-alives first when short of connections. So at the cap, the address's oldest idle
 * connection is closed to make room (its client opens another when it next asks, as it does after a
 * keep-alive time-out), and only an address whose connections are all busy is refused.
 */

/** The key connections are counted and capped by (connection-cap.ts), or null for a peer already gone. */
export function addressKey(remoteAddress: string | undefined): string | null {
  const address = remoteAddress === undefined ? null : canonicalAddress(remoteAddress);
  return address === null ? null : callerKey(address);
}

class IdleConnections {
  private readonly byKey = new Map<string, Set<net.Socket>>();

  /** An answer was finished and nothing more is asked on `socket` yet. */
  add(key: string, socket: net.Socket): void {
    let idle = this.byKey.get(key);
    if (idle === undefined) this.byKey.set(key, (idle = new Set()));
    idle.add(socket);
  }

  /** A byte of a next request came, or the connection closed. */
  remove(key: string, socket: net.Socket): void {
    const idle = this.byKey.get(key);
    if (idle === undefined || !idle.delete(socket)) return;
    if (idle.size === 0) this.byKey.delete(key);
  }

  /** Closes the address's oldest idle connection; false when it has none. */
  evict(key: string): boolean {
    const idle = this.byKey.get(key);
    const oldest = idle?.values().next().value;
    if (oldest === undefined) return false;
    this.remove(key, oldest);
    closedConnections.evicted += 1;
    oldest.destroy();
    return true;
  }
}

/** This process's idle keep-alive connections (its own, or a cluster worker's). */
export const idleConnections = new IdleConnections();
