import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { canonicalAddress, forwardedAddress } from '../basics/address';
import { log } from '../basics/log';

/** What an operation may need to know about the request it serves, beyond its arguments. */
export interface RequestContext {
  /** The request's id (X-Request-Id), which every log line written while serving it carries. */
  reqId: string;
  /** The client's IP address: the socket's peer, or behind a trusted proxy the address it saw. */
  clientAddress: string | null;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs the rest of a request's handling with its context, however many awaits and callbacks deep. */
export const withRequestContext = <T>(context: RequestContext, fn: () => T): T => storage.run(context, fn);

export const currentRequest = (): RequestContext | undefined => storage.getStore();

/**
 * Runs `fn` outside any request: for background work a request only sets going (the SMS dispatcher
 * woken by an AuthCode), which would otherwise carry that request's context, and its id in the log,
 * into every timer and callback it makes from then on.
 */
export const outsideRequest = <T>(fn: () => T): T => storage.exit(fn);

/**
 * The one rule for who the caller is. Without TRUST_PROXY, the socket's peer. With it, the last
 * X-Forwarded-For entry: the one the proxy in front of us added (nginx's $proxy_add_x_forwarded_for
 * and IIS ARR append it); earlier entries are whatever the client chose to send. The entry is read in
 * every form those proxies write (src/basics/address.ts); one that is no address (`unknown`, a proxy that
 * was told to write something else) leaves the socket's peer, which is the proxy: a caller never
 * picks its own key by sending a malformed header.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string | null {
  if (trustProxy) {
    const forwarded = forwardedClient(req);
    if (forwarded !== null) return forwarded;
  }
  const address = peerAddress(req);
  if (trustProxy && !warned) {
    // Said once: a proxy that sets no X-Forwarded-For makes every caller one address, which the
    // per-address SMS limit then refuses for the whole site (a health check says it harmlessly too).
    warned = true;
    log.warn('TRUST_PROXY is on but a request came without a readable X-Forwarded-For: it counts as its peer, the proxy; check that the proxy sets the header (docs/deployment.md)', { peer: address });
  }
  return address;
}

/**
 * The one rule for whether the caller is on this machine (HttpPostLocalhost, the help page's test
 * form). .NET's HttpRequest.IsLocal: the caller's address is 127.0.0.1 or ::1, or the connection's own
 * local address (System.Web/WorkerRequest.cs, IsLocal). Without TRUST_PROXY the caller is the socket's
 * peer (an IPv4-mapped loopback as its IPv4 address). Behind a trusted proxy the peer is the proxy,
 * often on this very machine, so the caller is the forwarded client instead, and a request whose
 * client the proxy did not name is not local: the proxy alone never makes a caller local.
 */
export function isLocalCaller(req: IncomingMessage, trustProxy: boolean): boolean {
  const caller = trustProxy ? forwardedClient(req) : peerAddress(req);
  if (caller === null) return false;
  if (caller === '127.0.0.1' || caller === '::1') return true;
  const local = req.socket.localAddress;
  return local !== undefined && caller === canonicalAddress(local);
}

/** The last X-Forwarded-For entry's address (the one our proxy added), or null when there is none. */
function forwardedClient(req: IncomingMessage): string | null {
  const header = req.headers['x-forwarded-for'];
  const last = (Array.isArray(header) ? header.join(',') : header)?.split(',').pop();
  return last === undefined ? null : forwardedAddress(last);
}

function peerAddress(req: IncomingMessage): string | null {
  const peer = req.socket.remoteAddress;
  return peer === undefined ? null : canonicalAddress(peer);
}

let warned = false;
