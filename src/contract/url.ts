/**
 * A request's URL as IIS hands it to ASP.NET: what http.sys makes of the request target before
 * anything else sees it. Routing, the service pages, the query string's reader and the WSDL's
 * addresses all read this one reading, so that `//X.asmx`, `/x/../X.asmx` or `/X%2Easmx` is the same
 * request everywhere, as on IIS.
 *
 * http.sys (HTTP.sys registry settings, KB 820129, defaults; KB 896287 for backslashes and dot
 * segments) drops a fragment, decodes %XX escapes as UTF-8 (FavorUTF8), or as the system's ANSI code
 * page when they are not UTF-8 (EnableNonUTF8; windows-1252 here, an en-US server's), and %uXXXX
 * (PercentUAllowed); refuses an escape that decodes to U+0000-U+001F or U+007F-U+009F
 * (AllowRestrictedChars off), a segment over 260 characters (UrlSegmentMaxLength) and a `..` above the
 * root; turns `\` into `/` and resolves `.` and `..`. ASP.NET then collapses `//`
 * (VirtualPath.Create, UrlPath.FixVirtualPathSlashes) and trims the path (VirtualPath.Create).
 */

export interface Target {
  /** The request target this was read from. */
  url: string;
  /** The path decoded and made canonical (not yet trimmed: IIS maps handlers on it as it is). */
  path: string;
  /** The query string as sent, after the `?` and without a fragment ('' when there is none). */
  query: string;
  /** The path as sent (but for raw bytes the front %-escaped: see pathBytes). */
  rawPath: string;
  /** The path's and the query's lengths as the client sent them, for request filtering's limits. */
  pathBytes: number;
  queryBytes: number;
  /** Why http.sys refuses the URL (it answers 400 Invalid URL), for the log; undefined when it does not. */
  invalid?: string;
}

/** UrlSegmentMaxLength's default. */
const MAX_SEGMENT = 260;
/** Anything in a path that makes it other than as sent: escapes, backslashes, doubled slashes, dot segments. */
const NOT_PLAIN = /%|\\|\/\/|\/\.\.?(?:\/|$)/;
const RESTRICTED = /[\u0000-\u001f\u007f-\u009f]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const ansi = new TextDecoder('windows-1252');

/**
 * Raw bytes (0x80 and above) of a request line's path and query that the front %-escaped for node's
 * parser (transport/raw-target.ts), told on the request: each stands for one byte sent, not three.
 */
export const RAW_ESCAPED = Symbol('raw bytes escaped');
export interface RawEscaped {
  readonly path: number;
  readonly query: number;
}

export function readTarget(url: string, escaped?: RawEscaped): Target {
  const hash = url.indexOf('#');
  const target = hash === -1 ? url : url.slice(0, hash);
  const q = target.indexOf('?');
  const query = q === -1 ? '' : target.slice(q + 1);
  let rawPath = q === -1 ? target : target.slice(0, q);
  // Absolute form (a proxy's request line): the path is what follows the authority.
  const authority = rawPath.charCodeAt(0) === 47 ? null : /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(rawPath);
  if (authority !== null) rawPath = rawPath.slice(authority[0].length) || '/';
  const sent = {
    url,
    query,
    rawPath,
    pathBytes: rawPath.length - 2 * (escaped?.path ?? 0),
    queryBytes: query.length - 2 * (escaped?.query ?? 0),
  };
  if (!NOT_PLAIN.test(rawPath)) {
    return longSegment(rawPath) ? { ...sent, path: rawPath, invalid: 'URL path segment over 260 characters' } : { ...sent, path: rawPath };
  }
  const decoded = percentDecode(rawPath);
  if (decoded === null) return { ...sent, path: rawPath, invalid: 'malformed %-escape in the URL path' };
  if (RESTRICTED.test(decoded)) return { ...sent, path: rawPath, invalid: 'control character in the URL path' };
  const path = canonical(decoded);
  if (path === null) return { ...sent, path: rawPath, invalid: 'URL path goes above the root' };
  if (longSegment(path)) return { ...sent, path, invalid: 'URL path segment over 260 characters' };
  return { ...sent, path };
}

function longSegment(path: string): boolean {
  if (path.length <= MAX_SEGMENT) return false;
  let start = 0;
  for (let slash = path.indexOf('/'); ; slash = path.indexOf('/', start)) {
    const end = slash === -1 ? path.length : slash;
    if (end - start > MAX_SEGMENT) return true;
    if (slash === -1) return false;
    start = slash + 1;
  }
}

const hex = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1);

/**
 * %XX and %uXXXX decoded; null for a `%` that starts neither. Node hands the request line over as
 * ASCII (its parser refuses raw bytes above 0x7F), so the bytes are the escapes' and the characters'.
 */
function percentDecode(raw: string): string | null {
  const parts: (number[] | string)[] = [];
  let bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c !== 37) {
      bytes.push(c);
      continue;
    }
    if ((raw[i + 1] === 'u' || raw[i + 1] === 'U') && i + 5 < raw.length) {
      const v = [2, 3, 4, 5].map((k) => hex(raw.charCodeAt(i + k)));
      if (v.every((d) => d >= 0)) {
        parts.push(bytes, String.fromCharCode((v[0] << 12) | (v[1] << 8) | (v[2] << 4) | v[3]));
        bytes = [];
        i += 5;
        continue;
      }
    }
    const hi = hex(raw.charCodeAt(i + 1));
    const lo = hex(raw.charCodeAt(i + 2));
    if (hi < 0 || lo < 0) return null;
    bytes.push((hi << 4) | lo);
    i += 2;
  }
  parts.push(bytes);
  const text = (decoder: TextDecoder) => parts.map((p) => (typeof p === 'string' ? p : decoder.decode(Uint8Array.from(p)))).join('');
  try {
    return text(utf8);
  } catch {
    return text(ansi);
  }
}

/** `\` as `/`, empty and `.` segments dropped, `..` taking one back; null for a `..` above the root. */
function canonical(path: string): string | null {
  const segments = path.replace(/\\/g, '/').split('/');
  const kept: string[] = [];
  // segments[0] is what precedes the leading slash: '' for every path node hands over.
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i];
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (kept.length === 0) return null;
      kept.pop();
      continue;
    }
    kept.push(s);
  }
  const last = segments[segments.length - 1];
  const trailingSlash = kept.length > 0 && (last === '' || last === '.' || last === '..');
  return `${segments[0]}/${kept.join('/')}${trailingSlash ? '/' : ''}`;
}

/** What String.Trim (VirtualPath.Create) takes off a path's end: Char.IsWhiteSpace's characters. */
export const trimEndAsDotNet = (s: string): string =>
  s.length === 0 || (s.charCodeAt(s.length - 1) > 0x20 && s.charCodeAt(s.length - 1) < 0x85) ? s : s.replace(DOTNET_SPACE_AT_END, '');
const DOTNET_SPACE_AT_END = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/;

const TARGET = Symbol('target');

/** The request's URL read once: kept on the request (a WeakMap's lookup costs more than the reading). */
export function targetOf(req: { url?: string }): Target {
  const held = req as { url?: string; [TARGET]?: Target; [RAW_ESCAPED]?: RawEscaped };
  const t = held[TARGET];
  if (t !== undefined && t.url === req.url) return t;
  return (held[TARGET] = readTarget(req.url ?? '', held[RAW_ESCAPED]));
}
