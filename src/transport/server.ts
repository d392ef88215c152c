import http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Limits } from '../config';
import { type HostError, HostErrors } from '../basics/errors';
import { declaredTooLarge } from './body';
import { closedConnections } from './closed';
import { midRequest, paceConnections } from './pacing';
import { hasTwoHosts } from './request-url';

/**
 * The HTTP listener, with the limits IIS's kernel listener (http.sys) enforces before a request
 * reaches ASP.NET: header size, time to send the headers and the whole request, idle keep-alive
 * time. A request the parser refuses gets http.sys's answer, complete, and its connection is closed
 * without a reset; so does one with two Host headers, which node's parser lets through.
 */

/** How long a refused connection keeps draining what the client still sends, so it reads our answer. */
const LINGER_MS = 2000;

const answered = new WeakSet<Duplex>();

/** What node reports when a request is not whole within REQUEST_TIMEOUT_MS. */
const REQUEST_TIMED_OUT: ParserError = Object.assign(new Error('request timed out'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });

/** Connections being closed after a refusal (answerAndClose): what node parses behind it is never run. */
const closing = new WeakSet<object>();

/**
 * Whether `req` came on a connection already refused and closing: pipelined behind the refused
 * request, or sent while its body drained. http.sys reads nothing after a request it refused, and
 * node would run such a request (an AuthCode, say) and drop its answer when the connection ends. Its
 * body is read and dropped; it gets no answer.
 */
export function behindRefusal(req: http.IncomingMessage): boolean {
  if (!closing.has(req.socket)) return false;
  req.resume();
  return true;
}

/**
 * What to answer a request whose method node's parser does not know (DEBUG, any other token), from
 * the bytes refused and where the parser stopped in them; null: http.sys's 400.
 */
export type UnknownMethodAnswer = (raw: Buffer, at: number) => HostError | null;

export function createServer(limits: Limits, handler: http.RequestListener, unknownMethod?: UnknownMethodAnswer): http.Server {
  // Refused before anything else sees it (the app, shadowing's copies, the request log), as http.sys
  // refuses it before IIS does: what the parser would have refused had it counted Host lines.
  const listener: http.RequestListener = (req, res) => {
    if (behindRefusal(req)) return;
    if (!hasTwoHosts(req)) return handler(req, res);
    const page = HostErrors.invalidHeader();
    answerAndClose(req, res, () => {
      res.writeHead(page.status, { 'Content-Type': page.contentType, 'Content-Length': Buffer.byteLength(page.body) });
      res.end(page.body);
    });
  };
  const server = http.createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    requestTimeout: limits.requestTimeoutMs,
    // Sooner than the whole request: a client dribbling its headers a byte at a time holds a
    // connection (and a file descriptor) this long at most, and gets the same 408.
    headersTimeout: limits.headersTimeoutMs,
    // The time-outs are checked on this period; the default (30 s) would let them overrun by as much.
    connectionsCheckingInterval: Math.max(100, Math.min(1000, limits.headersTimeoutMs / 4)),
  });
  server.on('request', paceConnections(server, listener, limits.maxUnsentBytes));
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // A client that takes none of our answer (and, its reading stopped, sends nothing more) is closed
  // once nothing has moved for this long.
  server.timeout = limits.sendTimeoutMs;
  server.on('timeout', (socket: net.Socket) => {
    // A request half sent is the request time-out's, whichever fires first: node checks that one only
    // every connectionsCheckingInterval, so on a busy loop (or a SEND_TIMEOUT_MS shorter than
    // REQUEST_TIMEOUT_MS) this one can come first, and the client would be cut off with no answer.
    if (socket.writableLength === 0 && midRequest(socket)) return answerClientError(REQUEST_TIMED_OUT, socket);
    closedConnections[socket.writableLength > 0 ? 'send_timeout' : 'idle'] += 1;
    socket.destroy();
  });

  // A body that will be refused is not invited: no 100 Continue, so the client need not send it.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!declaredTooLarge(req, limits.maxBodyBytes) && !hasTwoHosts(req)) res.writeContinue();
    server.emit('request', req, res);
  });
  server.on('clientError', (err: ParserError, socket: Duplex) => answerClientError(err, socket, unknownMethod));
  // CONNECT asks for a tunnel, which this server is not: http.sys's answer to a request it will not serve.
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) =>
    answerClientError(Object.assign(new Error('CONNECT'), { code: 'CONNECT' }), socket),
  );
  return server;
}

interface ParserError extends Error {
  code?: string;
  /** The bytes being parsed when the parser gave up. */
  rawPacket?: Buffer;
  /** How far into them it got. */
  bytesParsed?: number;
}

/**
 * Whether the request line was still being read when the head passed its limit: the URL is what is
 * too long. The parser is given a connection's bytes in slices (pacing.ts), and stops at the end of
 * the part it was reading: a URL that ends in this slice stops where ` HTTP/` follows; otherwise the
 * URL is still going only if no line ended in the slice before that point.
 */
function overflowedInUrl(err: ParserError): boolean {
  const packet = err.rawPacket;
  if (packet === undefined) return false;
  const at = Math.min(err.bytesParsed ?? packet.length, packet.length);
  if (packet.subarray(0, at).includes(0x0a)) return false;
  return at === packet.length || packet.toString('latin1', at, at + 6) === ' HTTP/';
}

function hostErrorFor(err: ParserError, unknownMethod: UnknownMethodAnswer | undefined): HostError {
  switch (err.code) {
    case 'HPE_INVALID_METHOD':
      // http.sys takes any method that is a token; IIS's handlers decide what it gets.
      return (err.rawPacket !== undefined && unknownMethod?.(err.rawPacket, err.bytesParsed ?? 0)) || HostErrors.badRequest();
    case 'HPE_HEADER_OVERFLOW':
      return overflowedInUrl(err) ? HostErrors.urlTooLong() : HostErrors.headersTooLong();
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return HostErrors.timeout();
    case 'HPE_INVALID_URL':
      return HostErrors.invalidUrl();
    default:
      return HostErrors.badRequest();
  }
}

function answerClientError(err: ParserError, socket: Duplex, unknownMethod?: UnknownMethodAnswer): void {
  // The parser reports every later chunk of a refused connection again; it is answered once.
  if (answered.has(socket)) return;
  answered.add(socket);
  const inFlight = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const page = hostErrorFor(err, unknownMethod);
  const extra = Object.entries(page.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const head =
    `HTTP/1.1 ${page.status} ${http.STATUS_CODES[page.status] ?? ''}\r\n` +
    `Content-Type: ${page.contentType}\r\n${extra}Date: ${new Date().toUTCString()}\r\nConnection: close\r\n` +
    `Content-Length: ${Buffer.byteLength(page.body)}\r\n\r\n`;
  socket.end(head + page.body);
  linger(socket);
}

/**
 * Closing a connection while the client is still sending makes the kernel reset it, and a reset can
 * destroy our answer before the client reads it. So the write side is closed first, and what the
 * client still sends is read and dropped until it closes its side or LINGER_MS have passed.
 */
export function linger(socket: Duplex): void {
  socket.on('data', () => undefined);
  socket.once('end', () => socket.destroy());
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/**
 * Sends an answer for a request whose body is refused unread, then closes the connection without a
 * reset. Node stops reading a connection as soon as it has sent `Connection: close` (its `_last`),
 * and closing a connection the client is still sending on resets it, which can destroy the answer
 * before the client reads it. So once the answer is written, node is told to go on reading (it drains
 * and drops the rest of the body), and the connection is ended when the body is done, or destroyed
 * after LINGER_MS; a request node parses meanwhile is not run (behindRefusal). The security tests
 * hold this to account.
 */
export function answerAndClose(req: http.IncomingMessage, res: http.ServerResponse, answer: () => void): void {
  closing.add(req.socket);
  res.setHeader('Connection', 'close');
  answer();
  (res as { _last?: boolean })._last = false;
  res.once('finish', () => {
    const socket = req.socket;
    if (req.complete) return void socket.end();
    req.once('end', () => socket.end());
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
