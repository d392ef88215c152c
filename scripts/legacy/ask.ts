import { ANSWER_HEADERS, type Answer } from '../../src/shadow/compare';
import type { WireAnswer } from '../../src/shadow/answer';
import { Wire } from '../../src/shadow/wire';
import type { Case } from './corpus-kit';

export type { Case } from './corpus-kit';

/**
 * Puts one case to a host and reads its answer with the project's own HTTP client, shadow
 * traffic's (src/shadow/wire.ts): the request goes out as the bytes below, the answer is read by its
 * framing (length, chunks or the connection's end), HTTP/1.0 as well as 1.1.
 */

/** The request as it goes out: the case's path under `base`'s path (the legacy host may be asked `legacyPath`). */
export function requestBytes(base: string, c: Case, legacy: boolean): Buffer {
  const url = new URL(base);
  const path = url.pathname.replace(/\/$/, '') + ((legacy && c.legacyPath) || c.path) || '/';
  const body = c.bodyBase64 !== undefined ? Buffer.from(c.bodyBase64, 'base64') : c.body !== undefined ? Buffer.from(c.body, 'utf8') : null;
  const headers: Record<string, string> = { Host: url.host, ...c.headers };
  if (body !== null || c.method === 'POST') headers['Content-Length'] = String(body?.length ?? 0);
  // One connection per case, as the corpus was recorded: no answer depends on an earlier one's connection.
  if (c.httpVersion !== '1.0') headers.Connection = 'close';
  const head = [`${c.method} ${path} HTTP/${c.httpVersion ?? '1.1'}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body ?? Buffer.alloc(0)]);
}

const wires = new Map<string, Wire>();

/** The whole answer (every header, the body's bytes), or why there was none. */
export function exchange(base: string, c: Case, legacy: boolean, timeoutMs = 30000): Promise<WireAnswer | string> {
  const origin = new URL(base).origin;
  let wire = wires.get(origin);
  if (wire === undefined) wires.set(origin, (wire = new Wire(new URL(origin))));
  return wire.ask(c.method, requestBytes(base, c, legacy), timeoutMs);
}

/** The answer as the comparison reads it (src/shadow/compare.ts): status, the headers it compares, the body as text. */
export async function ask(base: string, c: Case, legacy: boolean, timeoutMs = 30000): Promise<Answer> {
  const answer = await exchange(base, c, legacy, timeoutMs);
  if (typeof answer === 'string') return { status: 0, headers: {}, body: '', error: answer };
  const headers: Record<string, string | undefined> = {};
  for (const name of ANSWER_HEADERS) headers[name] = answer.headers[name];
  return { status: answer.status, headers, body: answer.body.toString('utf8') };
}
