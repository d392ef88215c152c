import type { Limits } from '../config';
import { type HostError, HostErrors } from '../basics/errors';
import { type EndpointPlace, placeReader } from '../contract/route';
import { readTarget, type Target, trimEndAsDotNet } from '../contract/url';
import { notFoundPage, runtimeErrorPage } from '../pages/error-page';

/**
 * What a request meets before ASMX on IIS 10 with ASP.NET 4 (integrated pipeline, the default
 * handler mappings, a site that holds only the .asmx files), in that order:
 *
 * 1. http.sys refuses a URL it cannot read (contract/url.ts): 400 Invalid URL, connection closed.
 * 2. Request filtering (its defaults): a path over maxUrl, a query over maxQueryString (both `>`), a
 *    `+` or an escape left after decoding (allowDoubleEscaping false, 404.11): IIS's 404 page.
 * 3. DEBUG is ASP.NET's debugger auto-attach (HttpApplicationFactory.GetApplicationInstance hands it
 *    to HttpDebugHandler before any module runs), which answers 403 when debugging is off; IIS puts
 *    its own 403 page in place (the handler does not set TrySkipIisCustomErrors).
 * 4. ASP.NET checks every request's path (HttpApplication's ValidateHelper, before any handler):
 *    over maxUrlLength (260) or holding one of requestPathInvalidCharacters (`< > * % & : \ ?`) is a
 *    400 (HttpRequest.ValidateInputIfRequiredByConfig), a segment ending in `.` or a space is a 404
 *    (CachedPathData via FileUtil.IsSuspiciousPhysicalPath: Windows would read it as another name).
 *    Both reach a remote client as ASP.NET's pages (runtime error page; the 404 page).
 * 5. The handler mappings (applicationHost.config): OPTIONS and TRACE are ProtocolSupportModule's,
 *    on any path (200 with Allow and Public; 501); `*.asmx` for GET, HEAD, POST is ASMX's (through
 *    ScriptHandlerFactory), and a script that is none of the services is ASP.NET's 404 page; any other
 *    path, or any other method, is the static file handler's: 404 for no such file, 405 (with Allow)
 *    for a method other than GET and HEAD on one that exists (an .asmx file, the application's
 *    directory), and for GET or HEAD on the directory 403 (no default document, no listing).
 *
 * An endpoint's place: ASMX answers.
 */
export interface HostAnswer {
  status: number;
  /** Every header of the answer but its length (none for OPTIONS). */
  headers: Record<string, string>;
  body: string;
  /** Why, for the request's log line; never a value from the request. */
  reason: string;
  /** http.sys closes a connection whose request it could not read. */
  close?: boolean;
}

/** Request filtering's second decoding: a `+`, or an escape that would decode again. */
const DOUBLE_ESCAPED = /\+|%[0-9a-f]{2}/i;
/** ASP.NET's requestPathInvalidCharacters default. */
const INVALID_PATH_CHAR = /[<>*%&:\\?]/;
const MAX_URL_LENGTH = 260;
/** A segment Windows would read without its trailing dot or space. */
const SUSPICIOUS = /[. ](?:\/|$)/;
const ASPNET_HEADERS = { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'private' };
const OPTIONS_ALLOWED = 'OPTIONS, TRACE, GET, HEAD, POST';

const host = (e: HostError, reason: string, close = false): HostAnswer => ({
  status: e.status,
  headers: { 'Content-Type': e.contentType, ...e.headers },
  body: e.body,
  reason,
  ...(close ? { close } : {}),
});

export type HostRules = (method: string, target: Target) => HostAnswer | EndpointPlace;

export function hostRules(basePath: string, limits: Pick<Limits, 'maxUrlBytes' | 'maxQueryBytes'>): HostRules {
  const placeOf = placeReader(basePath);
  const virtualPath = basePath === '' ? '/' : basePath;
  const runtimeError = runtimeErrorPage(virtualPath);
  const aspnet = (status: number, body: string, reason: string): HostAnswer => ({ status, headers: { ...ASPNET_HEADERS }, body, reason });

  const options: HostAnswer = {
    status: 200,
    headers: { Allow: OPTIONS_ALLOWED, Public: OPTIONS_ALLOWED },
    body: '',
    reason: 'OPTIONS: answered by IIS',
  };
  return (method, target) => {
    // `OPTIONS *` asks about the server, not a path.
    if (method === 'OPTIONS' && target.rawPath === '*') return { ...options };
    if (target.invalid !== undefined) return host(HostErrors.invalidUrl(), target.invalid, true);
    // Counted as sent: a raw byte the front %-escaped is one (contract/url.ts).
    if (target.pathBytes > limits.maxUrlBytes) return host(HostErrors.filtered(), 'URL path over MAX_URL_BYTES');
    if (target.queryBytes > limits.maxQueryBytes) return host(HostErrors.filtered(), 'query string over MAX_QUERY_BYTES');
    if (DOUBLE_ESCAPED.test(target.path))
      return host(HostErrors.filtered(), 'a + or an escape left in the URL path once decoded (request filtering)');
    if (method === 'DEBUG') return host(HostErrors.forbidden(), 'DEBUG: ASP.NET debugging is not enabled');

    const path = trimEndAsDotNet(target.path);
    if (path.length > MAX_URL_LENGTH) return aspnet(400, runtimeError, "URL path over ASP.NET's maxUrlLength (260)");
    if (INVALID_PATH_CHAR.test(path))
      return aspnet(400, runtimeError, "a character ASP.NET's requestPathInvalidCharacters refuses in the URL path");
    const place = placeOf(target.path);
    if (place.at !== 'endpoint' && SUSPICIOUS.test(path))
      return aspnet(404, notFoundPage(virtualPath, path), 'a URL path segment ending in a dot or a space');

    if (method === 'OPTIONS') return { ...options };
    if (method === 'TRACE') return host(HostErrors.notImplemented(), 'TRACE: not implemented by IIS');
    if (method === 'GET' || method === 'HEAD' || method === 'POST') {
      if (place.at === 'endpoint') return place;
      if (place.at === 'script') return aspnet(404, notFoundPage(virtualPath, path), 'not an endpoint');
      if (place.at === 'root')
        return method === 'POST'
          ? host(HostErrors.methodNotAllowed(), 'POST to the application directory')
          : host(HostErrors.forbidden(), "the application's directory");
      return host(HostErrors.notFound(), 'not an endpoint');
    }
    const exists = place.at === 'root' || (place.at === 'endpoint' && place.pathInfo === undefined);
    return exists
      ? host(HostErrors.methodNotAllowed(), "a method only IIS's static file handler takes, on an existing file")
      : host(HostErrors.notFound(), "a method only IIS's static file handler takes, on no file");
  };
}

/**
 * A request node's parser refused for its method (one it does not know: DEBUG, or any other token),
 * read from the bytes it refused: the request line is where the parser stopped, back to the line's
 * start. What IIS answers it (hostRules), or null when the line is not a request line at all
 * (http.sys's 400). The connection is closed after it: node's parser cannot go on past its refusal.
 */
export function unknownMethodAnswer(rules: HostRules): (raw: Buffer, at: number) => HostError | null {
  return (raw, at) => {
    const lineStart = raw.lastIndexOf(0x0a, Math.max(0, Math.min(at, raw.length) - 1)) + 1;
    let lineEnd = raw.indexOf(0x0a, lineStart);
    if (lineEnd === -1) lineEnd = raw.length;
    const line = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+)(?: HTTP\/\d\.\d)?\r?$/.exec(raw.toString('latin1', lineStart, lineEnd));
    if (line === null) return null;
    const answer = rules(line[1], readTarget(line[2]));
    if ('at' in answer) return null;
    const { 'Content-Type': contentType, ...headers } = answer.headers;
    return {
      status: answer.status,
      contentType: contentType ?? 'text/html',
      body: answer.body,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
  };
}
