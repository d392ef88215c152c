import { exchangeOf } from '../transport/exchange';
import type { Response } from '../transport/types';

/**
 * The one way an answer leaves the service: status, headers and the whole body at once, with a
 * Content-Length, as IIS frames every ASMX answer. Node frames a body of unknown length by the
 * request's HTTP version (chunked for 1.1, read-until-close for 1.0, which is what nginx speaks to
 * its upstream by default), so the length is always given. A HEAD request gets the same headers
 * and no body (Node drops it).
 *
 * A short string body is handed to node as a string: node then writes headers and body in one piece
 * (one write call), where a Buffer goes out as two (a writev). A long one is encoded here, once:
 * measuring its length and then letting node encode it would read it twice (a 500-student roster in
 * Arabic: 60 µs more), and the bytes are what shadow traffic hands on without another copy. The body
 * is left on the request's Exchange for shadow traffic (src/shadow), which compares it.
 */
export function send(res: Response, status: number, headers: Readonly<Record<string, string>>, body: string | Buffer = ''): void {
  res.statusCode = status;
  for (const name in headers) res.setHeader(name, headers[name]);
  const payload = typeof body === 'string' && body.length > LONG_BODY ? Buffer.from(body, 'utf8') : body;
  res.setHeader('Content-Length', typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.length);
  exchangeOf(res).body = payload;
  res.end(payload);
}

/**
 * ASMX's plain-text error answer, given where no SOAP fault can be (HTTP GET/POST, a discovery
 * request, a failure nothing foresaw): 500, the message and CRLF. A service page's says max-age=0.
 */
export function sendErrorText(res: Response, message: string, cacheControl: 'private' | 'private, max-age=0' = 'private'): void {
  send(res, 500, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': cacheControl }, `${message}\r\n`);
}

/** Characters beyond which a body is sent as bytes (see above). */
const LONG_BODY = 16 * 1024;
