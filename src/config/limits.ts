import type { AddressRange } from '../basics/address';
import { addressRanges, ConfigError, type Getter, wholeNumber } from './parse';

/** What one request may cost; docs/security.md gives the answer past each limit. */
export interface Limits {
  /** A request body, before and after decompression (ASP.NET's maxRequestLength). */
  maxBodyBytes: number;
  /** The query string (IIS request filtering's maxQueryString). */
  maxQueryBytes: number;
  /** The URL without its query string (IIS request filtering's maxUrl). */
  maxUrlBytes: number;
  /** The request line and headers together (http.sys's MaxRequestBytes). */
  maxHeaderBytes: number;
  /** Time to receive a whole request, headers and body. */
  requestTimeoutMs: number;
  /** Time to receive the request line and headers (http.sys's HeaderWait); at most requestTimeoutMs. */
  headersTimeoutMs: number;
  /** How long an idle keep-alive connection stays open; longer than the front's own idle time-out. */
  keepAliveTimeoutMs: number;
  /** How long a connection may go with nothing read from it nor taken by its client (nginx's send_timeout). */
  sendTimeoutMs: number;
  /** A connection's answers written but not yet taken by its client, beyond which its next requests are not read. */
  maxUnsentBytes: number;
  maxXmlDepth: number;
  maxXmlElements: number;
  /** Distinct names in a query string or form (ASP.NET's MaxHttpCollectionKeys). */
  maxFormKeys: number;
}

export const LIMIT_SETTINGS = [
  'MAX_BODY_BYTES',
  'MAX_QUERY_BYTES',
  'MAX_URL_BYTES',
  'MAX_HEADER_BYTES',
  'REQUEST_TIMEOUT_MS',
  'HEADERS_TIMEOUT_MS',
  'KEEPALIVE_TIMEOUT_MS',
  'SEND_TIMEOUT_MS',
  'MAX_UNSENT_BYTES',
  'MAX_XML_DEPTH',
  'MAX_XML_ELEMENTS',
  'MAX_FORM_KEYS',
] as const;

export const CONNECTION_SETTINGS = ['MAX_CONNECTIONS_PER_ADDRESS', 'CONNECTION_LIMIT_EXEMPT'] as const;

/** What one client address may hold of the listener (IIS's dynamic IP restrictions, nginx's limit_conn). */
export interface ConnectionLimits {
  /** Connections open at once from one address (an IPv6 caller by its /64); 0 for no cap. */
  perAddress: number;
  /** Peers the cap does not apply to: a proxy in front, through which every client comes. */
  exempt: readonly AddressRange[];
}

const HEADERS_TIMEOUT_MS = 20_000;
/**
 * CONNECTION_LIMIT_EXEMPT's default: a proxy on this machine (every recipe in deploy/), whose
 * connections are all its clients'. No packet from the network carries a loopback source address.
 */
export const DEFAULT_CONNECTION_LIMIT_EXEMPT = '127.0.0.1,::1';

export function loadLimits(get: Getter<(typeof LIMIT_SETTINGS)[number]>): Limits {
  const limit = (name: (typeof LIMIT_SETTINGS)[number], fallback: number) => wholeNumber(name, get(name, String(fallback)), 1, 999_999_999);
  const requestTimeoutMs = limit('REQUEST_TIMEOUT_MS', 30_000);
  // Unset, it follows a shorter REQUEST_TIMEOUT_MS down; set, it must fit inside it (node refuses otherwise).
  const headersTimeoutMs = limit('HEADERS_TIMEOUT_MS', Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs));
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got "${headersTimeoutMs}"`);
  }
  return {
    maxBodyBytes: limit('MAX_BODY_BYTES', 4 * 1024 * 1024),
    maxQueryBytes: limit('MAX_QUERY_BYTES', 2048),
    maxUrlBytes: limit('MAX_URL_BYTES', 4096),
    maxHeaderBytes: limit('MAX_HEADER_BYTES', 16 * 1024),
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: limit('KEEPALIVE_TIMEOUT_MS', 65_000),
    // Later than the request time-out, which answers a client that stopped sending with a 408 rather than a silent close.
    sendTimeoutMs: limit('SEND_TIMEOUT_MS', 2 * requestTimeoutMs),
    maxUnsentBytes: limit('MAX_UNSENT_BYTES', 64 * 1024),
    maxXmlDepth: limit('MAX_XML_DEPTH', 64),
    maxXmlElements: limit('MAX_XML_ELEMENTS', 10_000),
    maxFormKeys: limit('MAX_FORM_KEYS', 1000),
  };
}

export function loadConnectionLimits(get: Getter<(typeof CONNECTION_SETTINGS)[number]>): ConnectionLimits {
  return {
    perAddress: wholeNumber('MAX_CONNECTIONS_PER_ADDRESS', get('MAX_CONNECTIONS_PER_ADDRESS', '100'), 0, 999_999_999),
    exempt: addressRanges('CONNECTION_LIMIT_EXEMPT', get('CONNECTION_LIMIT_EXEMPT', DEFAULT_CONNECTION_LIMIT_EXEMPT)),
  };
}
