import type http from 'node:http';
import parseUrl from 'parseurl';
import { type EndpointSpec, findEndpoint } from './operations';

/**
 * The one reading of a request's URL: which endpoint, which operation, which binding. Routing serves
 * by it, shadow traffic decides by it what it may copy, and what it finds is what the metrics and
 * the request's log line name (routing records it on the request's Exchange).
 */

/** What a request to an endpoint asks for, by method and path. */
export type RequestKind = 'soap' | 'page' | 'httpget' | 'httppost';

export interface Route {
  endpoint: EndpointSpec;
  /**
   * After `/X.asmx/`: HTTP GET/POST's operation, as written (matched with regard to case by the
   * binding; '' when the URL names none), or undefined for `/X.asmx` itself.
   */
  operation: string | undefined;
  /** By the method; undefined for a method no protocol takes (HEAD on an operation, PUT). */
  kind: RequestKind | undefined;
}

/** What routing needs of a request: node's request, or its method and URL as they arrived. */
export type RequestLine = Pick<http.IncomingMessage, 'method' | 'url'>;

/** The path of the request URL without its query (as Express's `req.path`: absolute-form URLs included); parsed once per request. */
export function pathOf(req: RequestLine): string {
  return parseUrl(req as http.IncomingMessage)?.pathname ?? '';
}

/**
 * The route reader for a BASE_PATH: `/<base>/<Endpoint>.asmx` and `/<base>/<Endpoint>.asmx/<Op>`,
 * the path %-decoded first and matched without regard to case, as on IIS. Null when the path names
 * no endpoint, or cannot be decoded (routing refuses that earlier, as http.sys does).
 */
export function routeReader(basePath: string): (req: RequestLine) => Route | null {
  const pattern = new RegExp(`^${escapeRegExp(basePath)}/([^/]+)\\.asmx(?:/(.*))?$`, 'i');
  return (req) => {
    let path: string;
    try {
      path = decodeURIComponent(pathOf(req));
    } catch {
      return null;
    }
    const match = pattern.exec(path);
    const endpoint = match === null ? undefined : findEndpoint(match[1]);
    if (endpoint === undefined) return null;
    const operation = match![2];
    return { endpoint, operation, kind: requestKind(req.method ?? '', operation) };
  };
}

function requestKind(method: string, operation: string | undefined): RequestKind | undefined {
  if (method === 'POST') return operation === undefined ? 'soap' : 'httppost';
  if (method === 'GET' || method === 'HEAD') return operation === undefined ? 'page' : 'httpget';
  return undefined;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
