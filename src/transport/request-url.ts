import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { canonicalAddress } from '../basics/address';
import type { Config } from '../config';

/**
 * The scheme and host of the URL a request was made to, as ASP.NET's Request.Url has them: what the
 * WSDL's addresses are built from (pages/public-url.ts), and half of what makes a caller local
 * (isLocalCaller in context.ts). Without TRUST_PROXY the Host header, as IIS gives it to ASP.NET; with
 * it, the host the proxy says the client asked for (X-Forwarded-Host).
 */

/**
 * host[:port] as a client can have typed it: a DNS name or IPv4 address, or a bracketed IPv6 address.
 * Anything else (quotes, angle brackets, spaces, paths, credentials) is refused, so a hostile Host or
 * X-Forwarded-Host cannot put markup or a foreign path into a WSDL or a help page.
 */
const PLAUSIBLE_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * Whether the request has more than one Host header line, in any case: RFC 9112 (3.2) makes that a
 * 400, since the parts of a server that each read one of them would disagree on the host asked for
 * (node keeps the first in `headers.host`). Counted on rawHeaders, which node has already built: no
 * header object is made, and a request pays a loop over its header names.
 */
export function hasTwoHosts(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 4 || (name !== 'Host' && name.toLowerCase() !== 'host')) continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/** The first entry of a header that proxies may have turned into a comma-separated list. */
function firstValue(header: string | string[] | undefined): string | undefined {
  const raw = Array.isArray(header) ? header[0] : header;
  const first = raw?.split(',')[0]?.trim();
  return first === undefined || first === '' ? undefined : first;
}

/** The shape above, and a host a URL can hold (no port past 65535, no malformed IPv6). */
function plausibleHost(value: string | undefined): string | undefined {
  return value !== undefined && PLAUSIBLE_HOST.test(value) && URL.canParse(`http://${value}/`) ? value : undefined;
}

/** The address the connection reached, for a request without a usable Host header (HTTP/1.0), as IIS's SERVER_NAME then is. */
function localHost(req: IncomingMessage): string {
  const { localAddress, localPort } = req.socket;
  if (localAddress === undefined) return 'localhost';
  const address = localAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '').replace(/%.*$/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return localPort === undefined ? host : `${host}:${localPort}`;
}

export function requestScheme(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
    if (forwarded === 'http' || forwarded === 'https') return forwarded;
  }
  return (req.socket as Partial<TLSSocket>).encrypted === true ? 'https' : 'http';
}

/** host[:port] of the URL the client asked for. */
export function requestHost(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? plausibleHost(firstValue(req.headers['x-forwarded-host'])) : undefined;
  return forwarded ?? plausibleHost(req.headers.host?.trim()) ?? localHost(req);
}

/**
 * System.Uri's IsLoopback for the request's URL (PUBLIC_URL's when it is set): the host is `localhost`
 * or `loopback` in any case, an IPv4 address in 127.0.0.0/8, or the IPv6 ::1, ::127.0.0.1 or
 * ::ffff:127.0.0.1 (System/net/System/_DomainName.cs, _IPv4Address.cs, _IPv6Address.cs).
 */
export function urlIsLoopback(req: IncomingMessage, cfg: Pick<Config, 'trustProxy' | 'publicUrl'>): boolean {
  const host = cfg.publicUrl !== null ? new URL(cfg.publicUrl).host : requestHost(req, cfg.trustProxy);
  const name = host.replace(/:\d+$/, '').toLowerCase();
  if (name === 'localhost' || name === 'loopback') return true;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return canonicalAddress(name)?.startsWith('127.') === true;
  const v6 = /^\[(.*)\]$/.exec(name)?.[1];
  if (v6 === undefined) return false;
  const address = canonicalAddress(v6);
  return address === '::1' || address === '127.0.0.1' || address === '::7f00:1';
}
