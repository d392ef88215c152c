import { type Getter, wholeNumber } from './parse';

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
  /** How long an idle keep-alive connection stays open; longer than the front's own idle time-out. */
  keepAliveTimeoutMs: number;
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
  'KEEPALIVE_TIMEOUT_MS',
  'MAX_XML_DEPTH',
  'MAX_XML_ELEMENTS',
  'MAX_FORM_KEYS',
] as const;

export function loadLimits(get: Getter<(typeof LIMIT_SETTINGS)[number]>): Limits {
  const limit = (name: (typeof LIMIT_SETTINGS)[number], fallback: number) => wholeNumber(name, get(name, String(fallback)), 1, 999_999_999);
  return {
    maxBodyBytes: limit('MAX_BODY_BYTES', 4 * 1024 * 1024),
    maxQueryBytes: limit('MAX_QUERY_BYTES', 2048),
    maxUrlBytes: limit('MAX_URL_BYTES', 4096),
    maxHeaderBytes: limit('MAX_HEADER_BYTES', 16 * 1024),
    requestTimeoutMs: limit('REQUEST_TIMEOUT_MS', 30_000),
    keepAliveTimeoutMs: limit('KEEPALIVE_TIMEOUT_MS', 65_000),
    maxXmlDepth: limit('MAX_XML_DEPTH', 64),
    maxXmlElements: limit('MAX_XML_ELEMENTS', 10_000),
    maxFormKeys: limit('MAX_FORM_KEYS', 1000),
  };
}
