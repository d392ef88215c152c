import type { Answer } from '../../src/shadow/compare';
import { HostErrors } from '../../src/basics/errors';
import type { Generated } from '../differential/generate';
import { isHostError, isRuntimeErrorPage, type Rule } from '../differential/rules';

/**
 * Mono's own differences as generated requests meet them (scripts/differential/): the same rules as
 * accepted.ts's list for the corpus, written for requests that have no names, by the request's
 * features and the answers. Each says why Mono is not .NET there and the reference source
 * (microsoft/referencesource) that shows .NET answers as we do; docs/fidelity.md ("The differential
 * run") says how to add one. A difference none of these (nor a temporary open rule) covers fails the run.
 *
 * The IIS, http.sys and ASP.NET rules (`iis-*`, `httpsys-*`, `aspnet-*`) are where the service
 * answers, on purpose, as IIS in front of ASP.NET does before ASMX is reached (docs/fidelity.md,
 * "Before ASMX"), and the legacy host, an HttpListener with no IIS, hands the request to ASMX: each
 * checks both answers, ours the very page IIS, http.sys or ASP.NET sends.
 */

/** Our answer is ASP.NET's 404 page (PageNotFoundErrorFormatter, src/pages/error-page.ts). */
const isAspNetNotFound = (g: Generated, a: Answer) =>
  a.status === 404 &&
  /^text\/html; charset=utf-8$/i.test(a.headers['content-type'] ?? '') &&
  (g.c.method === 'HEAD' ? a.body === '' : a.body.includes('<title>The resource cannot be found.</title>'));
/** ASP.NET's runtime error page (Mono's too), or to HEAD its head alone. */
const isMonoErrorPage = (g: Generated, a: Answer) =>
  g.c.method === 'HEAD'
    ? a.status >= 400 && /^text\/html\b/i.test(a.headers['content-type'] ?? '') && a.body === ''
    : isRuntimeErrorPage(a);
/** Our answer is ASMX's `... Web Service method name is not valid.` (HTTP GET and POST). */
const isMethodNameNotValid = (a: Answer) =>
  a.status === 500 && /^text\/plain\b/.test(a.headers['content-type'] ?? '') && / Web Service method name is not valid\.\r\n$/.test(a.body);
/** The query string as sent (no fragment). */
const queryOf = (g: Generated) => (g.c.path.includes('?') ? g.c.path.slice(g.c.path.indexOf('?') + 1).replace(/#.*$/, '') : '');
/** IIS's maxQueryString (applicationHost.config requestFiltering requestLimits), MAX_QUERY_BYTES's default. */
const MAX_QUERY = 2048;
/** http.sys's MaxRequestBytes (the request line and headers), MAX_HEADER_BYTES's default. */
const MAX_REQUEST_BYTES = 16384;
/** The path as ASP.NET reads it (http.sys resolves `.` and `..`, ASP.NET collapses `//`), without the query. */
const canonicalPath = (path: string) => new URL(path.replace(/[?#].*$/, '').replace(/\/{2,}/g, '/'), 'http://h').pathname;
export const MONO_OWN: Rule[] = [
  {
    name: 'mono-help-op-page',
    features: [],
    applies: (g, legacy, ours) =>
      g.c.method === 'GET' && /\.asmx\?op=/i.test(g.c.path) && isRuntimeErrorPage(legacy) && ours.status === 200,
    reason:
      "Mono's ?op= help page fails with its runtime error page (500) where .NET renders the operation's page (200): its own DefaultWsdlHelpGenerator.aspx needs a `bnd` parameter (as accepted.ts's `*/help-op`)",
    evidence:
      "System.Web.Services/System/Web/Services/Protocols/DocumentationServerProtocol.cs: a GET to the service page with Documentation on is answered by DefaultWsdlHelpGenerator.aspx, which renders ?op= as the operation's page",
  },
  {
    name: 'mono-json-form',
    features: ['content-type:json'],
    reason:
      "Mono answers application/json with JSON even to a service without [ScriptService]; .NET 4 hands it to ScriptHandlerFactory, which fails with ASP.NET's runtime error page (as accepted.ts's `http-post/ct-json`)",
    evidence:
      'System.Web.Extensions/Script/Services/ScriptHandlerFactory.cs GetHandler (RestHandlerFactory.IsRestRequest), RestHandler.cs CreateHandler, WebServiceData.cs',
  },
  {
    name: 'mono-form-segment-without-equals',
    features: ['form:no-equals'],
    reason:
      "Mono's form parser reads a segment without `=` as a name with an empty value; .NET's as a value without a name (as accepted.ts's `http-post/auth-name-only`)",
    evidence:
      'System.Web/HttpValueCollection.cs FillFromString: a segment without `=` is added with a null name and the segment as its value',
  },
  {
    name: 'mono-request-validation',
    features: ['value:validation-differs'],
    reason:
      "Mono's request validation is its own (docs/fidelity.md, Request validation): it refuses `<` before a control character and the fullwidth `＜`, lets `</` and `<?` through, validates `__` names and writes `＜` `＞` as references; .NET refuses what IsDangerousString says",
    evidence:
      'System.Web/CrossSiteScriptingValidation.cs IsDangerousString (`<` before a letter, `!`, `/` or `?`; `&#`), System.Web/HttpRequest.cs ValidateHttpValueCollection (names starting `__` skipped); Mono: its HttpRequest.IsInvalidString',
  },
  {
    name: 'mono-form-raw-latin1',
    features: ['form:raw-latin1'],
    reason:
      "a form value holding a raw (unescaped) U+0080-U+00FF character along with a %-escape: Mono's HttpUtility.UrlDecode(string, Encoding) writes each char under 256 as one byte and decodes the bytes as UTF-8, so the character becomes U+FFFD; .NET decodes the form's bytes",
    evidence:
      'System.Web/HttpValueCollection.cs FillFromEncodedBytes: HttpUtility.UrlDecode(bytes, offset, count, encoding) on the raw bytes of each name and value',
  },
  {
    name: 'mono-host-query-reescaped',
    features: ['query:percent-u'],
    applies: (g) => g.binding === 'get' || g.binding === 'page',
    reason:
      "the legacy host hands ASP.NET the query of HttpListener's Request.Url, which System.Uri has re-escaped: a `%` not followed by two hex digits becomes `%25`, so `%u0646` is read as the text `%u0646`; IIS hands over the query as sent, and .NET's UrlDecode reads `%uXXXX` as the character",
    evidence:
      "System.Web/HttpRequest.cs QueryStringText (IIS's raw query bytes) and FillInQueryStringCollection; System.Web/Util/HttpEncoder.cs UrlDecode (`%uXXXX`); the legacy host: scripts/legacy-host/AsmxHost.cs (ctx.Request.Url.Query)",
  },
  {
    name: 'mono-host-raw-bytes-latin1',
    features: ['target:raw-non-ascii'],
    reason:
      "raw (unescaped) bytes of 0x80 and above in the request target: the legacy host's HttpListener reads the request line a byte a character (Latin-1) and hands ASP.NET System.Uri's re-escaping of that (each such character two UTF-8 bytes), so ASMX reads mojibake (an Arabic school not found, `®` two characters, `محمد` eight) in a query six times as long (its 400 from 2,048); IIS hands ASP.NET the bytes as sent, decoded as UTF-8 as their %-escapes are (transport/raw-target.ts)",
    evidence:
      'System.Web/HttpRequest.cs QueryStringText and FillInQueryStringCollection (the query bytes IIS received, decoded with ContentEncoding); http.sys reads a raw UTF-8 URL as it reads its %-escapes (FavorUTF8, KB 820129); the legacy host: scripts/legacy-host/AsmxHost.cs (ctx.Request.Url)',
  },
  {
    name: 'mono-host-query-bidi-stripped',
    features: ['value:bidi'],
    applies: (g) => g.binding === 'get' || g.binding === 'page',
    reason:
      "direction marks (U+200E, U+200F, U+202A-U+202E) in a query string: the legacy host hands ASP.NET the query of HttpListener's Request.Url, from which System.Uri takes them out, so a char parameter of a mark and a digit is one character there; IIS hands over the query as sent, and ASP.NET keeps them (docs/fidelity.md, read as written)",
    evidence:
      "System.Web/HttpRequest.cs QueryStringText and FillInQueryStringCollection (the query bytes IIS received); System/net/System/UriHelper.cs StripBidiControlCharacter (System.Uri's IRI reading); the legacy host: scripts/legacy-host/AsmxHost.cs (ctx.Request.Url)",
  },
  {
    name: 'mono-host-query-length-reescaped',
    features: [],
    applies: (g, legacy) => {
      const q = g.c.path.indexOf('?');
      if (q === -1 || legacy.status !== 400 || !isRuntimeErrorPage(legacy)) return false;
      const query = g.c.path.slice(q + 1).replace(/#.*$/, '');
      // System.Uri writes each of these as %XX: three characters where the client sent one
      const escaped = query.length + 2 * (query.match(/["<>\\^`{|}]/g)?.length ?? 0);
      // (the legacy host refuses from 2,048 escaped characters; a query of 2,048 as sent is iis-query-2048's)
      return query.length < 2048 && escaped >= 2048;
    },
    reason:
      "a query string of up to 2,048 characters holding `\"<>\\^`{|}`: the legacy host's query is System.Uri's re-escaped one (each such character three), over maxQueryStringLength, so 400; IIS counts the query as sent",
    evidence:
      'System.Web/HttpRequest.cs ValidateInputIfRequiredByConfig: QueryStringText.Length > httpRuntime.MaxQueryStringLength (2048) throws HttpException(400); QueryStringText is the query as IIS received it',
  },
  {
    name: 'iis-methods',
    features: ['method:not-asmx'],
    applies: (g, legacy, ours) =>
      legacy.status >= 400 &&
      ((ours.status === 200 && ours.body === '' && ours.headers['content-type'] === undefined) ||
        [HostErrors.methodNotAllowed(), HostErrors.notFound(), HostErrors.forbidden()].some((e) => isHostError(g, ours, e))),
    reason:
      "Mono hands every method to ASMX (405 or 500, its runtime error page); IIS answers OPTIONS itself on any path (200, Allow, no body) and gives PUT, DELETE and unknown methods to its static file handler: 405 and IIS's page on an .asmx file or the directory, 404 elsewhere (as accepted.ts's `methods/*`)",
    evidence:
      'applicationHost.config of IIS with ASP.NET 4: OPTIONSVerbHandler path="*" verb="OPTIONS" modules="ProtocolSupportModule"; WebServiceHandlerFactory-Integrated-4.0 path="*.asmx" verb="GET,HEAD,POST,DEBUG"; the last mapping StaticFile path="*" verb="*"; src/app/iis.ts',
  },
  {
    name: 'iis-path-nul',
    features: ['path:nul'],
    applies: (g, legacy, ours) => isMonoErrorPage(g, legacy) && isHostError(g, ours, HostErrors.invalidUrl()),
    reason:
      "`%00` in the path: Mono's runtime error page (500); http.sys refuses an escape decoding to a control character before IIS sees the request: 400 `Bad Request - Invalid URL`",
    evidence:
      'http.sys registry parameters, KB 820129: AllowRestrictedChars 0 (the default) refuses %00-%1F and %7F-%9F in the URL; src/contract/url.ts',
  },
  {
    name: 'iis-path-space',
    features: ['path:percent-20'],
    applies: (g, legacy, ours) => {
      const path = g.c.path.replace(/[?#].*$/, '');
      // `/X.asmx/Op%20`: ASP.NET trims the path's end, the operation answers (checked against Mono without the space)
      if (/\.asmx\/[^/]*%20$/i.test(path)) return isMonoErrorPage(g, legacy);
      if (!isAspNetNotFound(g, ours) && !isHostError(g, ours, HostErrors.notFound())) return false;
      // `/X.asmx%20`: Mono trims it and answers the service (a SOAP call), or its error page
      return /\.asmx%20$/i.test(path) || isMonoErrorPage(g, legacy);
    },
    reason:
      "`%20` next to the service's or the operation's name (`/X%20.asmx`, `/%20X.asmx`, `/X.asmx%20`, `/X.asmx/Op%20`): Mono answers its runtime error page (500), or for `/X.asmx%20` trims the space and answers the service; on IIS a segment ending in a space is ASP.NET's 404 page (Windows would read another name), a script that is none of the five too, `.asmx ` is no script's extension (IIS's 404 page), and ASP.NET trims the end of a path it hands on, so `/X.asmx/Op%20` is the operation",
    evidence:
      'System.Web/VirtualPath.cs Create (String.Trim: the white space at the path\'s end taken off), System.Web/CachedPathData.cs GetConfigPathData and System.Web/Util/FileUtil.cs IsSuspiciousPhysicalPath (a segment ending in a dot or a space), System.Web/ErrorFormatter.cs PageNotFoundErrorFormatter; applicationHost.config: WebServiceHandlerFactory-Integrated-4.0 path="*.asmx", StaticFile path="*" (404.0)',
  },
  {
    name: 'iis-path-outside',
    features: ['path:outside'],
    applies: (g, legacy, ours) =>
      legacy.status >= 400 &&
      (isAspNetNotFound(g, ours) ||
        [HostErrors.notFound(), HostErrors.forbidden(), HostErrors.methodNotAllowed()].some((e) => isHostError(g, ours, e))),
    reason:
      "a path that names no service: Mono answers its own 404 page (or hands `X.asmx.cs` to ASMX); IIS with ASP.NET answers ASP.NET's 404 page for a script that is none of the five, its own 404 page for any other file, 403 for the application's directory (405 for a POST to it)",
    evidence:
      'System.Web/ErrorFormatter.cs PageNotFoundErrorFormatter (System.Web/HttpApplication.cs MapHttpHandler: no such file); applicationHost.config: StaticFile path="*" (404.0, 403.14 with no default document and directoryBrowse off, 405 for POST)',
  },
  {
    name: 'iis-query-2048',
    features: ['query:near-2048'],
    applies: (g, legacy, ours) => {
      const query = queryOf(g);
      if (query.length > MAX_QUERY && isHostError(g, ours, HostErrors.filtered())) {
        // Mono's host counts the query System.Uri gave it, direction marks taken out: shorter, so served
        return (legacy.status === 400 && isMonoErrorPage(g, legacy)) || /%E2%80%(8[EF]|A[A-E])/i.test(query);
      }
      return query.length === MAX_QUERY && legacy.status === 400 && isMonoErrorPage(g, legacy) && !isMonoErrorPage(g, ours);
    },
    reason:
      "a query string of 2,048 characters or more: Mono refuses from 2,048 (400, its runtime error page), counting the query its HttpListener's System.Uri gave it (direction marks taken out); IIS's request filtering refuses the query as sent over 2,048 (404.15, its 404 page), so a query of exactly 2,048 is served",
    evidence:
      'applicationHost.config: requestFiltering requestLimits maxQueryString="2048" (refused when the query is longer); System.Web/HttpRequest.cs ValidateInputIfRequiredByConfig (QueryStringText.Length > MaxQueryStringLength, 2048, is never reached past request filtering)',
  },
  {
    name: 'httpsys-url-too-long',
    features: ['query:near-2048'],
    applies: (g, _legacy, ours) =>
      `${g.c.method} ${g.c.path} HTTP/1.1`.length > MAX_REQUEST_BYTES - 64 &&
      (isHostError(g, ours, HostErrors.urlTooLong()) || isHostError(g, ours, HostErrors.headersTooLong())),
    reason:
      "a request line of about 16 KB (a long value, %-escaped): http.sys refuses a request whose line and headers pass MaxRequestBytes: 414 when the URL is what overflows, 400 Request Too Long when the headers after it do; Mono's HttpListener reads it (200, or its 400 for a query over 2,048)",
    evidence:
      'http.sys registry parameters, KB 820129: MaxRequestBytes and MaxFieldLength 16384 (the defaults); MAX_HEADER_BYTES, docs/security.md',
  },
  {
    name: 'aspnet-operation-name-not-valid',
    features: ['operation:non-ascii'],
    applies: (g, legacy, ours) =>
      isMethodNameNotValid(ours) &&
      // Mono: its runtime error page; or, a direction mark in the name, the operation (System.Uri strips the mark)
      (isMonoErrorPage(g, legacy) || /%E2%80%(8[EF]|A[A-E])|[\u200e\u200f\u202a-\u202e]/i.test(g.c.path.replace(/\?.*$/, ''))),
    reason:
      "a non-ASCII operation name on HTTP GET or POST: .NET reads it from the decoded path and answers `... Web Service method name is not valid.` (500); Mono answers its runtime error page, or, for a name ending in a direction mark, as the operation (its HttpListener's System.Uri took the mark out)",
    evidence:
      'System.Web.Services/System/Web/Services/Protocols/HttpServerProtocol.cs Initialize (Request.PathInfo; WebInvalidMethodName when no method has the name), System.Web/HttpRequest.cs PathInfo (the path http.sys decoded)',
  },
  {
    name: 'mono-dot-segments',
    features: ['path:dot-segments'],
    applies: (g, legacy, ours) =>
      // `/X.asmx//Op`: Mono's operation is `/Op`
      (/\.asmx\/\//i.test(g.c.path) && legacy.status === 500 && /^\{0\} Web Service method name is not valid\.\n$/.test(legacy.body)) ||
      // a service page's addresses: Mono writes the path as asked, .NET the canonical one
      (legacy.status === 200 &&
        ours.status === 200 &&
        legacy.body.includes('{PATH}') &&
        legacy.body.split('{PATH}').join(canonicalPath(g.c.path)) === ours.body),
    reason:
      "a path with `//`, `/./` or `/x/../`: Mono reads `/X.asmx//Op` as the operation `/Op` and writes the path as asked (`//` and all) in the WSDL's and disco's addresses; ASP.NET collapses `//` (http.sys resolved the dots) before the path is read, so the operation is `Op` and the addresses canonical",
    evidence:
      'System.Web/Util/UrlPath.cs FixVirtualPathSlashes and System.Web/VirtualPath.cs Create (`//` collapsed); System.Web.Services/System/Web/Services/Protocols/ServerProtocol.cs (addresses from Request.Url, built on the canonical Path)',
  },
];

export function describeMonoOwn(): string {
  const lines = ["Mono's own differences for generated requests (scripts/legacy/accepted-generated.ts):"];
  for (const r of MONO_OWN)
    lines.push(`  - ${r.name}${r.features.length > 0 ? ` [${r.features.join(', ')}]` : ''}: ${r.reason}\n      reference: ${r.evidence}`);
  return `${lines.join('\n')}\n`;
}
