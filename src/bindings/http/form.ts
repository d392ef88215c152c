import type { Request } from '../../transport/types';
import { Errors } from '../../basics/errors';
import { type Charset, charsetNamed, UTF8 } from '../../basics/charset';
import { ValueCollection } from './values';
import { targetOf } from '../../contract/url';

/**
 * The parameters of HTTP GET (the query string) and HTTP POST (a form body) as ASP.NET reads them
 * into Request.QueryString and Request.Form, each validated as it is first read.
 */

/** GET reads the query string; POST reads only a form body. */
export function parametersOf(req: Request, maxKeys: number): ValueCollection {
  if (req.method === 'GET') return queryStringOf(req, maxKeys);
  const contentType = req.headers['content-type'] ?? '';
  // ContentType.MatchesBase (Scalars.cs): what precedes the first `;`, untrimmed, without regard to
  // case; so `application/x-www-form-urlencoded ; charset=utf-8` is no form.
  const semi = contentType.indexOf(';');
  const media = semi === -1 ? contentType : contentType.slice(0, semi);
  if (media.toLowerCase() !== 'application/x-www-form-urlencoded') throw Errors.requestFormatInvalid(contentType);
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  return ValueCollection.parse(body, contentEncoding(req), 'Form', maxKeys).validate('Form');
}

/** Request.QueryString, validated: what an operation's GET and the service page read. */
export function queryStringOf(req: Request, maxKeys: number): ValueCollection {
  const encoding = contentEncoding(req);
  // The query string is never read as UTF-16: UTF-8 instead (HttpRequest.QueryStringEncoding).
  const queryEncoding = encoding.name === 'utf-16le' ? UTF8 : encoding;
  // Node hands the request line over byte for byte as latin1 characters; http.sys drops a fragment.
  const query = Buffer.from(targetOf(req).query, 'latin1');
  return ValueCollection.parse(query, queryEncoding, 'QueryString', maxKeys).validate('QueryString');
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
