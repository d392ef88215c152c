import { AsyncLocalStorage } from 'node:async_hooks';
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

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
 * With TRUST_PROXY, the last X-Forwarded-For entry: the one the proxy in front of us added (nginx's
 * $proxy_add_x_forwarded_for appends it). Earlier entries are whatever the client chose to send.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string | null {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for'];
    const last = (Array.isArray(header) ? header.join(',') : header)?.split(',').pop()?.trim();
    if (last !== undefined && isIP(last) !== 0) return last;
  }
  return req.socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '') ?? null;
}
