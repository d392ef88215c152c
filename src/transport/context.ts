import type { IncomingMessage } from 'node:http';
import type { Caller } from '../contract/types';
import { canonicalAddress, forwardedAddress } from '../basics/address';
import { log } from '../basics/log';
import type { Response } from './types';
import type { Config } from '../config';
import { urlIsLoopback } from './request-url';

/**
 * Who sent a request, read once as it arrives (the request hooks) and handed to the operation by its
 * binding, and from there to what the operation calls (AuthCode's intake, which logs with the id).
 * It travels as an argument, not in an AsyncLocalStorage: that one turns on node's promise hooks for
 * every promise of the process, which cost a small request about 10 µs (issue 24).
 */
const NO_CALLER: Caller = { reqId: '', clientAddress: null };

export function setCaller(res: Response, caller: Caller): void {
  res.locals.caller = caller;
}

/** The request's caller; a request that did not pass the request hooks has none. */
export function callerOf(res: Response): Caller {
  return res.locals.caller ?? NO_CALLER;
}

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
    log.warn(
      'TRUST_PROXY is on but a request came without a readable X-Forwarded-For: it counts as its peer, the proxy; check that the proxy sets the header (docs/deployment.md)',
      { peer: address },
    );
  }
  return address;
}

/**
 * The one rule for whether the caller is on this machine (HttpPostLocalhost, the help page's test
 * form), ASMX's `request.Url.IsLoopback || request.IsLocal` (HttpPostLocalhostServerProtocol.cs,
 * DocumentationServerProtocol.cs). Url.IsLoopback: the URL the request was made to names a loopback
 * host (request-url.ts). IsLocal (System.Web/WorkerRequest.cs): the caller's address is 127.0.0.1 or
 * ::1, or the connection's own local address. Without TRUST_PROXY the caller is the socket's peer (an
 * IPv4-mapped loopback as its IPv4 address). Behind a trusted proxy the peer is the proxy, often on
 * this very machine, so the caller is the forwarded client instead, and a request whose client the
 * proxy did not name is not local: the proxy alone never makes a caller local.
 */
export function isLocalCaller(req: IncomingMessage, cfg: Pick<Config, 'trustProxy' | 'publicUrl'>): boolean {
  if (urlIsLoopback(req, cfg)) return true;
  const caller = cfg.trustProxy ? forwardedClient(req) : peerAddress(req);
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
