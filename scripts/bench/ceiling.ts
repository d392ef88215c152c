/**
 * The ceiling: plain node `http` answering each benchmark request with the exact bytes the service
 * gave for it (status line, headers in order, body), recorded once from the service. What it
 * measures is the cost of HTTP itself on this machine, which no server can beat.
 *
 *   node .dev-build/scripts/bench/ceiling.js ANSWERS.json     (PORT from the environment)
 */
import '../../src/basics/supported-node';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { BenchRequest } from './workloads';
import { type CommandSpec, parseCommandLine } from '../../src/basics/command-line';

export interface RecordedAnswer {
  key: string;
  status: number;
  reason: string;
  /** In the order sent, without Connection and Keep-Alive, which node's server adds itself. */
  headers: [string, string][];
  keepAliveSeconds: number | null;
  body: string;
}

export const requestKey = (method: string, path: string, body: string) => `${method} ${path}\n${body}`;

/** The raw bytes of a request, as a load generator sends it. */
export function rawRequest(port: number, r: BenchRequest): Buffer {
  const body = Buffer.from(r.body ?? '');
  let head = `${r.method} ${r.path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`;
  for (const [k, v] of Object.entries(r.headers)) head += `${k}: ${v}\r\n`;
  if (r.method === 'POST') head += `Content-Length: ${body.length}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`), body]);
}

/**
 * Where the first answer (or request) in `got` ends, framed by its Content-Length, or its chunks
 * when it has Transfer-Encoding: chunked (node-soap + Express answer so), or else at its head's end;
 * with its head; null while it has not all come.
 */
export function answerEnd(got: Buffer): { end: number; head: string } | null {
  const headEnd = got.indexOf('\r\n\r\n');
  if (headEnd === -1) return null;
  const head = got.subarray(0, headEnd).toString('latin1');
  if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
    // Each chunk: its size in hex (and extensions) on a line, the data, CRLF; a size of 0 and the trailer's empty line end it.
    for (let at = headEnd + 4; ; ) {
      const lineEnd = got.indexOf('\r\n', at);
      if (lineEnd === -1) return null;
      const size = parseInt(got.toString('latin1', at, lineEnd), 16);
      if (Number.isNaN(size)) throw new Error('a chunked answer with a bad chunk size');
      if (size === 0) {
        const end = got.indexOf('\r\n\r\n', lineEnd);
        return end === -1 ? null : { end: end + 4, head };
      }
      at = lineEnd + 2 + size + 2;
      if (got.length < at) return null;
    }
  }
  const end = headEnd + 4 + Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
  return got.length < end ? null : { end, head };
}

/** Sends one request on a new connection and returns the raw answer, framed by its Content-Length. */
export function exchangeRaw(port: number, request: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let got = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (answerEnd(got) === null) return;
      socket.destroy();
      resolve(got);
    });
    socket.once('error', reject);
    socket.once('close', () => resolve(got));
  });
}

export function parseAnswer(key: string, raw: Buffer): RecordedAnswer {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(statusLine);
  if (status === null) throw new Error(`not an HTTP answer: ${statusLine}`);
  const headers: [string, string][] = [];
  let keepAliveSeconds: number | null = null;
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (/^keep-alive$/i.test(name)) keepAliveSeconds = Number(/timeout=(\d+)/.exec(value)?.[1] ?? 5);
    else if (!/^connection$/i.test(name)) headers.push([name, value]);
  }
  return { key, status: Number(status[1]), reason: status[2], headers, keepAliveSeconds, body: raw.subarray(end + 4).toString('latin1') };
}

export async function recordAnswer(port: number, r: BenchRequest): Promise<RecordedAnswer> {
  return parseAnswer(requestKey(r.method, r.path, r.body ?? ''), await exchangeRaw(port, rawRequest(port, r)));
}

export function createCeilingServer(answers: readonly RecordedAnswer[]): http.Server {
  const byKey = new Map(answers.map((a) => [a.key, { ...a, bytes: Buffer.from(a.body, 'latin1'), flat: a.headers.flat() }]));
  // A request recorded with another body on the same path (AuthCode: a new code each request) gets that one's answer.
  const byPath = new Map([...byKey].map(([key, a]) => [key.slice(0, key.indexOf('\n')), a]));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const a =
        byKey.get(requestKey(req.method ?? '', req.url ?? '', Buffer.concat(chunks).toString())) ?? byPath.get(`${req.method} ${req.url}`);
      if (a === undefined) {
        res.writeHead(404).end();
        return;
      }
      // The recorded Date goes out as recorded, so node must not add one.
      res.sendDate = false;
      res.writeHead(a.status, a.reason, a.flat);
      res.end(a.bytes);
    });
  });
  const keepAlive = answers.find((a) => a.keepAliveSeconds !== null)?.keepAliveSeconds;
  if (keepAlive != null) server.keepAliveTimeout = keepAlive * 1000;
  return server;
}

/** Started by the benchmark (index.ts), not by hand. */
const COMMAND = {
  usage: ['PORT=N node .dev-build/scripts/bench/ceiling.js ANSWERS.json'],
  summary: ["The benchmark's ceiling: plain node http answering each request with the recorded answer's bytes, on 127.0.0.1:PORT."],
  options: {},
  positionals: ['ANSWERS.json'],
} as const satisfies CommandSpec;

if (require.main === module) {
  const line = parseCommandLine(COMMAND, process.argv.slice(2));
  if (typeof line === 'number') process.exitCode = line;
  else {
    const answers = JSON.parse(fs.readFileSync(line.positionals[0]!, 'utf8')) as RecordedAnswer[];
    createCeilingServer(answers).listen(Number(process.env.PORT), '127.0.0.1');
    process.on('SIGTERM', () => process.exit(0));
  }
}
