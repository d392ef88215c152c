import type { Request } from '../../transport/types';
import { Errors } from '../../basics/errors';
import { type Charset, charsetNamed, UTF8 } from '../../basics/charset';
import { urlDecodeBytes } from '../../basics/url-decode';
import { targetOf } from '../../contract/url';

/**
 * The parameters of HTTP GET (the query string) and HTTP POST (a form body) as ASP.NET reads them
 * into Request.QueryString and Request.Form.
 */

export type Pairs = readonly (readonly [string, string])[];

/** GET reads the query string; POST reads only a form body. Both pass ASP.NET's request validation. */
export function parametersOf(req: Request, maxKeys: number): Pairs {
  const encoding = contentEncoding(req);
  if (req.method === 'GET') {
    // The query string is never read as UTF-16: UTF-8 instead (HttpRequest.QueryStringEncoding).
    const queryEncoding = encoding.name === 'utf-16le' ? UTF8 : encoding;
    // Node hands the request line over byte for byte as latin1 characters; http.sys drops a fragment.
    const query = Buffer.from(targetOf(req).query, 'latin1');
    return validated('QueryString', parseForm(query, queryEncoding, 'QueryString', maxKeys));
  }
  const contentType = req.headers['content-type'] ?? '';
  // ContentType.MatchesBase (Scalars.cs): what precedes the first `;`, untrimmed, without regard to
  // case; so `application/x-www-form-urlencoded ; charset=utf-8` is no form.
  const semi = contentType.indexOf(';');
  const media = semi === -1 ? contentType : contentType.slice(0, semi);
  if (media.toLowerCase() !== 'application/x-www-form-urlencoded') throw Errors.requestFormatInvalid(contentType);
  return validated('Form', parseForm(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), encoding, 'Form', maxKeys));
}

/**
 * HttpRequest.ContentEncoding: the charset of a request that has a body, if .NET knows it and it
 * is not UTF-7 (refused since .NET 4.5: it can hide markup from request validation); a WAP
 * browser's `x-up-devcap-post-charset` first; otherwise the configured requestEncoding, UTF-8.
 */
function contentEncoding(req: Request): Charset {
  const userAgent = req.headers['user-agent'];
  const wapCharset = header(req, 'x-up-devcap-post-charset');
  if (userAgent?.startsWith('UP') && wapCharset) {
    const named = charsetNamed(wapCharset);
    if (named !== null) return named;
  }
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  const charset = hasBody ? charsetParameter(req.headers['content-type']) : undefined;
  const named = charset ? charsetNamed(charset) : null;
  return named === null || named.name === 'utf-7' ? UTF8 : named;
}

/** The charset parameter of a Content-Type, as HttpRequest reads an attribute from a header. */
function charsetParameter(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*("[^"]*"|[^;\s]*)/i.exec(contentType ?? '');
  return match?.[1].replace(/^"(.*)"$/, '$1');
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * `a=1&b=2` as HttpValueCollection reads it, byte by byte: a segment without `=` has no name (so it
 * names no parameter), and names and values are URL-decoded with the request's encoding. Distinct
 * names are counted as the collection counts them (without regard to case), so that a flood of
 * names is refused (MaxHttpCollectionKeys) before the rest is decoded.
 */
function parseForm(bytes: Buffer, encoding: Charset, collection: 'QueryString' | 'Form', maxKeys: number): Pairs {
  const pairs: [string, string][] = [];
  const names = new Set<string>();
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x26, start);
    if (end === -1) end = bytes.length;
    const eq = bytes.indexOf(0x3d, start);
    if (eq !== -1 && eq < end) {
      const name = urlDecodeBytes(bytes.subarray(start, eq), encoding);
      names.add(name.toLowerCase());
      if (names.size > maxKeys) throw Errors.tooManyKeys(collection);
      pairs.push([name, urlDecodeBytes(bytes.subarray(eq + 1, end), encoding)]);
    }
    start = end + 1;
  }
  return pairs;
}

/**
 * ASP.NET refuses a value that looks like markup or a character reference: `<` followed by a letter,
 * `!`, `/` or `?`, or `&#`.
 */
function validated(collection: 'QueryString' | 'Form', pairs: Pairs): Pairs {
  for (const [name, value] of pairs) {
    if (/<[A-Za-z!/?]|&#/.test(value)) throw Errors.dangerousValue(collection, name, value);
  }
  return pairs;
}

/**
 * Parameter names are matched without regard to case, and a repeated name gives its values joined
 * by commas, as ASP.NET's NameValueCollection reads a query string or form.
 */
export function lookup(pairs: Pairs, name: string): string | undefined {
  const lower = name.toLowerCase();
  const values: string[] = [];
  for (const [k, v] of pairs) if (k.toLowerCase() === lower) values.push(v);
  return values.length === 0 ? undefined : values.join(',');
}
