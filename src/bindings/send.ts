import type { Response } from 'express';

/**
 * The one way an answer leaves the service: status, headers and the whole body at once, with a
 * Content-Length, as IIS frames every ASMX answer. Node frames a body of unknown length by the
 * request's HTTP version (chunked for 1.1, read-until-close for 1.0, which is what nginx speaks to
 * its upstream by default), so the length is always given. A HEAD request gets the same headers
 * and no body (Node drops it).
 */
export function send(res: Response, status: number, headers: Readonly<Record<string, string>>, body: string | Buffer = ''): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.statusCode = status;
  // setHeader, not Express's res.set, which would add a charset to a bare media type.
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}
