import net from 'node:net';
import sax from 'sax';

/**
 * Raw HTTP for the fuzzer and the security tests: send bytes exactly as given, read what comes back,
 * and judge it: a complete response, well-formed where it is XML, and free of internals.
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type Outcome =
  | { kind: 'response'; response: RawResponse; ms: number }
  /** The server closed the connection without a (complete) response. */
  | { kind: 'closed'; received: Buffer; ms: number }
  /** Nothing complete came before the deadline: the connection was held. */
  | { kind: 'hung'; received: Buffer; ms: number };

/**
 * The first final (non-1xx) response in `data`, or null while it is incomplete. `closed` says the
 * peer has ended, which completes a body framed by the end of the connection.
 */
export function parseResponse(data: Buffer, method: string, closed: boolean): RawResponse | null {
  let offset = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end === -1) return null;
    const lines = data.subarray(offset, end).toString('latin1').split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (status === null) return null;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const code = Number(status[1]);
    const bodyStart = end + 4;
    if (code >= 100 && code < 200) {
      offset = bodyStart;
      continue;
    }
    if (method === 'HEAD' || code === 204 || code === 304) return { status: code, headers, body: Buffer.alloc(0) };
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (data.length - bodyStart < length) return null;
      return { status: code, headers, body: data.subarray(bodyStart, bodyStart + length) };
    }
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const body = dechunk(data.subarray(bodyStart));
      return body === null ? null : { status: code, headers, body };
    }
    return closed ? { status: code, headers, body: data.subarray(bodyStart) } : null;
  }
}

function dechunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd === -1) return null;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < lineEnd + 2 + size + 2) return null;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** Sends `bytes` on a new connection and waits for the first complete response, at most `deadlineMs`. */
export function exchange(host: string, port: number, bytes: Buffer, method: string, deadlineMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, host);
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: 'hung', received, ms: Date.now() - started }), deadlineMs);
    const settle = (closed: boolean) => {
      const response = parseResponse(received, method, closed);
      if (response !== null) finish({ kind: 'response', response, ms: Date.now() - started });
      else if (closed) finish({ kind: 'closed', received, ms: Date.now() - started });
    };
    socket.on('connect', () => socket.write(bytes, () => undefined));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      settle(false);
    });
    // A reset after a complete answer is the server refusing more of a request it already answered.
    socket.on('error', () => settle(true));
    socket.on('close', () => settle(true));
  });
}

/** Things no answer may show: stack frames, paths, SQL, runtime error type names. */
const INTERNALS =
  /\bat [\w$.<>]+ \(|\bat (?:async )?[\w$.]+ \(?\/|node_modules|\/(?:work|home|root|usr|tmp)\/|[\w-]+\.(?:ts|js):\d+|\b(?:SELECT|INSERT|UPDATE|DELETE) [\w*]+ (?:FROM|INTO|SET)\b|SQLITE_\w+|\b(?:Type|Range|Reference|Syntax|URI|Eval)Error\b|\bECONN\w+|\bERR_[A-Z_]+/;

/**
 * What is wrong with an outcome; empty when it is a proper answer. Text the request itself holds is
 * the client's own, echoed as the legacy echoes a value it cannot convert: not a leak.
 */
export function problems(outcome: Outcome, request?: Buffer): string[] {
  if (outcome.kind === 'hung') return [`no complete response within ${outcome.ms} ms`];
  if (outcome.kind === 'closed') {
    return [
      outcome.received.length === 0
        ? `closed without an answer after ${outcome.ms} ms`
        : `closed inside an answer after ${outcome.ms} ms: ${outcome.received.subarray(0, 80).toString('latin1')}`,
    ];
  }
  const found: string[] = [];
  const { response } = outcome;
  const text = response.body.toString('utf8');
  const leak = INTERNALS.exec(text) ?? INTERNALS.exec(Object.values(response.headers).join('\n'));
  const echoed = leak !== null && request !== undefined && decodeURIComponentSafe(request.toString('latin1')).includes(leak[0]);
  if (leak !== null && !echoed) found.push(`internals in the answer: "${leak[0]}"`);
  const type = response.headers['content-type'] ?? '';
  if (/xml/i.test(type) && response.body.length > 0) {
    const error = xmlError(text);
    if (error !== null) found.push(`malformed XML answer: ${error}`);
  }
  // IIS answers TRACE 501 itself (its TRACEVerbHandler does not echo a request): src/app/iis.ts.
  const iisTrace = response.status === 501 && request?.subarray(0, 6).toString('latin1') === 'TRACE ';
  if (response.status >= 500 && response.status !== 500 && !iisTrace) found.push(`status ${response.status}`);
  return found;
}

/**
 * Characters XML does not allow, as .NET's XmlTextWriter writes them (XmlTextEncoder: `&#x1;`): a
 * reader's message in a fault can hold one, and ASMX writes it so. Not well-formed XML 1.0, but
 * what the client of the legacy host gets; taken out before the check.
 */
const WRITER_REFERENCES = /&#x(?:[0-8BCEF]|1[0-9A-F]|FFF[EF]);/g;

function xmlError(text: string): string | null {
  text = text.replace(WRITER_REFERENCES, '?');
  const parser = sax.parser(true);
  let error: string | null = null;
  parser.onerror = (e) => {
    error ??= e.message.split('\n')[0];
    parser.resume();
  };
  parser.write(text).close();
  return error;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s.replace(/%20|\+/g, ' ');
  }
}
