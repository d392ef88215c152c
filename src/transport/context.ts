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
    const header = req.headers['x-forwarded-for'];
    const last = (Array.isArray(header) ? header.join(',') : header)?.split(',').pop();
    const forwarded = last === undefined ? null : forwardedAddress(last);
    if (forwarded !== null) return forwarded;
  }
  const peer = req.socket.remoteAddress;
  const address = peer === undefined ? null : canonicalAddress(peer);
  if (trustProxy && !warned) {
    // Said once: a proxy that sets no X-Forwarded-For makes every caller one address, which the
    // per-address SMS limit then refuses for the whole site (a health check says it harmlessly too).
    warned = true;
    log.warn('TRUST_PROXY is on but a request came without a readable X-Forwarded-For: it counts as its peer, the proxy; check that the proxy sets the header (docs/deployment.md)', { peer: address });
  }
  return address;
}

let warned = false;
