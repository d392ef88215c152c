import type { Response } from '../transport/types';

/**
 * The one way an answer leaves the service: status, headers and the whole body at once, with a
 * Content-Length, as IIS frames every ASMX answer. Node frames a body of unknown length by the
 * request's HTTP version (chunked for 1.1, read-until-close for 1.0, which is what nginx speaks to
 * its upstream by default), so the length is always given. A HEAD request gets the same headers
 * and no body (Node drops it).
 *
 * A string body is handed to node as a string: node then writes headers and body in one piece (one
 * write call), where a Buffer goes out as two (a writev).
 */
export function send(res: Response, status: number, headers: Readonly<Record<string, string>>, body: string | Buffer = ''): void {
  res.statusCode = status;
  for (const name in headers) res.setHeader(name, headers[name]);
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length);
  res.end(body);
}
