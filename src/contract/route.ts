import type http from 'node:http';
import { ENDPOINTS, type EndpointSpec } from './operations';
import { targetOf, trimEndAsDotNet } from './url';

/**
 * The one reading of a request's URL: which endpoint, which operation, which binding. Routing serves
 * by it, shadow traffic decides by it what it may copy, and what it finds is what the metrics and
 * the request's log line name (routing records it on the request's Exchange). The path is read as
 * IIS hands it to ASP.NET (contract/url.ts): decoded, `\`, `//` and dot segments resolved.
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

/** The request's path as IIS hands it to ASP.NET, without its query (absolute-form URLs included). */
export function pathOf(req: RequestLine): string {
  return targetOf(req).path;
}

/**
 * Where IIS sends a path, by the default handler mappings of an ASP.NET 4 site (applicationHost.config):
 * the first segment named `*.asmx`, `*.aspx` or `*.ashx` is a script ASP.NET compiles, the rest of the
 * path its PathInfo. `endpoint`: one of the services, directly under the base path (IIS matches names
 * without regard to case); `script`: a script that is none of them (ASP.NET finds no such file);
 * `root`: the application's own directory; `other`: any other path (no such file).
 */
export type Place = EndpointPlace | { at: 'script' | 'root' | 'other' };
export interface EndpointPlace {
  at: 'endpoint';
  endpoint: EndpointSpec;
  /** What follows `/X.asmx` (from its `/`), undefined when nothing does. */
  pathInfo: string | undefined;
}

/** The end of the first segment named like a script: its extension, then a `/` or the end. */
const SCRIPT_END = /\.as[hmp]x(?=\/|$)/i;
const ENDPOINT_FILE: ReadonlyMap<string, EndpointSpec> = new Map(ENDPOINTS.map((e) => [`${e.name.toLowerCase()}.asmx`, e]));

export function placeReader(basePath: string): (path: string) => Place {
  const base = basePath.toLowerCase();
  return (path) => {
    const found = SCRIPT_END.exec(path);
    if (found === null) return { at: path.length === base.length + 1 && path.toLowerCase() === `${base}/` ? 'root' : 'other' };
    const end = found.index + 5;
    const slash = path.lastIndexOf('/', found.index);
    const endpoint =
      slash === base.length && path.slice(0, slash).toLowerCase() === base
        ? ENDPOINT_FILE.get(path.slice(slash + 1, end).toLowerCase())
        : undefined;
    return endpoint === undefined
      ? { at: 'script' }
      : { at: 'endpoint', endpoint, pathInfo: end === path.length ? undefined : path.slice(end) };
  };
}

/**
 * The route reader for a BASE_PATH: `/<base>/<Endpoint>.asmx` and `/<base>/<Endpoint>.asmx/<Op>`.
 * Null when the path names no endpoint, or when http.sys would refuse the URL (routing answers that
 * earlier). The operation is the PathInfo as ASP.NET gives it (VirtualPath.Create trims its end).
 */
export function routeReader(basePath: string): (req: RequestLine) => Route | null {
  const placeOf = placeReader(basePath);
  return (req) => {
    const target = targetOf(req);
    if (target.invalid !== undefined) return null;
    const place = placeOf(target.path);
    return place.at === 'endpoint' ? routeAt(place, req.method ?? '') : null;
  };
}

/** The route to an endpoint: the operation is the PathInfo as ASP.NET gives it (VirtualPath.Create trims its end). */
export function routeAt(place: EndpointPlace, method: string): Route {
  const operation = place.pathInfo === undefined ? undefined : trimEndAsDotNet(place.pathInfo).slice(1);
  return { endpoint: place.endpoint, operation, kind: requestKind(method, operation) };
}

function requestKind(method: string, operation: string | undefined): RequestKind | undefined {
  if (method === 'POST') return operation === undefined ? 'soap' : 'httppost';
  if (method === 'GET' || method === 'HEAD') return operation === undefined ? 'page' : 'httpget';
  return undefined;
}
