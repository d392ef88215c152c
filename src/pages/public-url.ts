import { pathOf } from '../contract/route';
import type { Request } from '../transport/types';
import type { TLSSocket } from 'node:tls';
import type { Config } from '../config';
import { findEndpoint } from '../contract/operations';

/**
 * host[:port] as a client can have typed it: a DNS name or IPv4 address, or a bracketed IPv6 address.
 * Anything else (quotes, angle brackets, spaces, paths, credentials) is refused, so a hostile Host or
 * X-Forwarded-Host cannot put markup or a foreign path into a WSDL or a help page.
 */
const PLAUSIBLE_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

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

/** The address the connection reached, for a request without a usable Host header (HTTP/1.0). */
function localHost(req: Request): string {
  const { localAddress, localPort } = req.socket;
  if (localAddress === undefined) return 'localhost';
  const address = localAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '').replace(/%.*$/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return localPort === undefined ? host : `${host}:${localPort}`;
}

function scheme(req: Request, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
    if (forwarded === 'http' || forwarded === 'https') return forwarded;
  }
  return (req.socket as Partial<TLSSocket>).encrypted === true ? 'https' : 'http';
}

function host(req: Request, trustProxy: boolean): string {
  const forwarded = trustProxy ? plausibleHost(firstValue(req.headers['x-forwarded-host'])) : undefined;
  return forwarded ?? plausibleHost(req.headers.host?.trim()) ?? localHost(req);
}

/**
 * The URL by which the client reached `/<basePath>/<Endpoint>.asmx`, as ASMX puts it in the WSDL
 * addresses and the discovery document. X-Forwarded-Prefix is deliberately ignored: a virtual
 * directory is configured as BASE_PATH (or as part of PUBLIC_URL) instead.
 */
export function serviceUrl(
  req: Request,
  cfg: Pick<Config, 'publicUrl' | 'trustProxy' | 'basePath'>,
  endpoint: string,
): string {
  if (cfg.publicUrl !== null) return `${cfg.publicUrl}/${findEndpoint(endpoint)?.name ?? endpoint}.asmx`;
  // The path as the client spelled it (IIS matches it without regard to case but keeps it).
  const asmx = /^.*?\.asmx/i.exec(pathOf(req))?.[0] ?? `${cfg.basePath}/${endpoint}.asmx`;
  return `${scheme(req, cfg.trustProxy)}://${host(req, cfg.trustProxy)}${asmx}`;
}
