import { isAscii } from 'node:buffer';
import { RAW_ESCAPED, type RawEscaped } from '../contract/url';

/**
 * Raw bytes of 0x80 and above in a request's target (an Arabic value a client did not %-escape).
 * http.sys takes them, reading the URL as UTF-8 (else the ANSI code page) as it reads %-escapes, and
 * ASP.NET reads a query string's raw bytes as it reads its escapes; node's parser refuses them (400
 * "Invalid URL"). So each such byte of a request line, after its method, is %-escaped before the
 * parser sees it: the same bytes, written as the URL reader (request-url.ts) reads them anyway.
 *
 * Only a request line is touched, never a header or a body: a message's first line starts where the
 * message before it ended, and node's parser says when a message begins, how much body it read and
 * when the message is complete (the callbacks it looks up on itself by number: kOnMessageBegin, which
 * node leaves unset, and kOnBody and kOnMessageComplete, node's own, called through). Only what the
 * parser is given once a message has ended is looked at, up to its first line's end; a slice that
 * holds raw bytes is given a line at a time, and a body of a given length up to its end. One case
 * stays as node has it (400): a request line right behind a chunked body in the same slice.
 */

interface ParserClass {
  readonly kOnMessageBegin?: unknown;
  readonly kOnBody?: unknown;
  readonly kOnMessageComplete?: unknown;
}
type Parser = Record<number, unknown> & { constructor: ParserClass };
type Callback = (this: Parser, ...args: unknown[]) => unknown;

enum Part {
  Method,
  Path,
  Query,
  Version,
}

/** The part of a request line a byte leaves it in: the method ends at a space, the path at `?`, the target at a space. */
function partAfter(part: Part, byte: number): Part {
  if (byte === SP) return part === Part.Method ? Part.Path : part === Part.Version ? part : Part.Version;
  return byte === QUESTION && part === Part.Path ? Part.Query : part;
}

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const QUESTION = 0x3f;

/** Which connection's lines each parser is reading (parsers are pooled and reused by node). */
const owners = new WeakMap<object, RequestLines>();

/**
 * On each of our callbacks: node's callback it calls through, once the first parser is hooked (none
 * for kOnMessageBegin). Node pools parsers per process, and a second copy of this module (jest loads
 * one per test file; an app that mounts the service may hold two) finds the first copy's callbacks
 * on them: it recognises them by this mark, shared by every copy, and puts its own in their place.
 */
const CALLS_THROUGH = Symbol.for('student-info-service: raw-target callback');
type Ours = Callback & { [CALLS_THROUGH]: Callback | null };
const isOurs = (f: unknown): f is Ours => typeof f === 'function' && CALLS_THROUGH in f;
/** `f` with the mark, calling through to nothing until a parser is hooked. */
const ours = (f: Callback): Ours => Object.assign(f, { [CALLS_THROUGH]: null });

const onMessageBegin: Ours = ours(function (this: Parser) {
  owners.get(this)?.begun();
});

const onBody: Ours = ours(function (this: Parser, ...args: unknown[]) {
  const chunk = args[0];
  if (Buffer.isBuffer(chunk)) owners.get(this)?.body(chunk.length);
  return onBody[CALLS_THROUGH]!.apply(this, args);
});

const onMessageComplete: Ours = ours(function (this: Parser, ...args: unknown[]) {
  owners.get(this)?.completed();
  return onMessageComplete[CALLS_THROUGH]!.apply(this, args);
});

export class RequestLines {
  /** The parser has finished a message and not begun another: what it is given next starts a request line. */
  private between = true;
  /** A request line is being given to the parser, its end not yet seen. */
  private inLine = false;
  /** Where in its request line the parser is being given bytes. */
  private part = Part.Method;
  /** The raw bytes of the line's path and of its query escaped, told to the request (contract/url.ts counts them as sent). */
  private escapedInPath = 0;
  private escapedInQuery = 0;
  /** What the body being parsed still holds, by its Content-Length (-1: no such body, or not known). */
  private bodyLeft = -1;
  private readonly parser: Parser | null;

  constructor(parser: unknown) {
    this.parser = hook(parser, this) ? (parser as Parser) : null;
  }

  begun(): void {
    this.between = false;
  }

  /** A message has begun and not ended: its head or body is still coming (never, with a parser not hooked). */
  get midMessage(): boolean {
    return !this.between;
  }

  completed(): void {
    this.between = true;
    this.bodyLeft = -1;
  }

  /** A request's head was parsed (pacing.ts is handed each as node parses it): the body that follows. */
  headers(req: { complete: boolean; headers: Record<string, string | string[] | undefined>; [RAW_ESCAPED]?: RawEscaped }): void {
    // Only a line that had raw bytes tells anything (no object made for the others).
    if (this.escapedInPath + this.escapedInQuery > 0) {
      req[RAW_ESCAPED] = { path: this.escapedInPath, query: this.escapedInQuery };
      this.escapedInPath = 0;
      this.escapedInQuery = 0;
    }
    const length = Number(req.headers['content-length']);
    this.bodyLeft = req.complete || req.headers['transfer-encoding'] !== undefined || !(length > 0) ? -1 : length;
  }

  body(bytes: number): void {
    if (this.bodyLeft > 0) this.bodyLeft = Math.max(0, this.bodyLeft - bytes);
  }

  /**
   * How much of `candidate` to give the parser now: all of it, but where it holds raw bytes, one line
   * at a time (a request line by itself, and what goes before a raw byte mid-message apart from it),
   * so that the parser says whether a message has ended before the next line is looked at.
   */
  size(candidate: Buffer): number {
    if (this.parser === null || isAscii(candidate)) return candidate.length;
    let from = 0;
    if (this.between && !this.inLine) while (from < candidate.length && (candidate[from] === CR || candidate[from] === LF)) from++;
    if (!this.between && !this.inLine) {
      // A body by its length: up to its end, where the parser ends the message.
      if (this.bodyLeft > 0) return Math.min(candidate.length, this.bodyLeft);
      const raw = candidate.findIndex((byte) => byte >= 0x80);
      const before = candidate.lastIndexOf(LF, raw);
      if (before !== -1) return before + 1;
      from = raw;
    }
    const lf = candidate.indexOf(LF, from);
    return lf === -1 ? candidate.length : lf + 1;
  }

  /** `slice` (as size() cut it), with the raw bytes of a request line that starts or goes on in it %-escaped. */
  prepare(slice: Buffer): Buffer {
    if (this.parser === null || (!this.between && !this.inLine)) return slice;
    let start = 0;
    if (!this.inLine) {
      // Line ends between messages are skipped by the parser.
      while (start < slice.length && (slice[start] === CR || slice[start] === LF)) start++;
      if (start === slice.length) return slice;
      this.part = Part.Method;
      this.escapedInPath = 0;
      this.escapedInQuery = 0;
    }
    const lf = slice.indexOf(LF, start);
    const end = lf === -1 ? slice.length : lf;
    this.inLine = lf === -1;
    const line = slice.subarray(start, end);
    if (isAscii(line)) {
      // Where the line stands matters only if it goes on in the next slice.
      if (this.inLine) for (const byte of line) this.part = partAfter(this.part, byte);
      return slice;
    }
    const out: number[] = [];
    for (const byte of line) {
      this.part = partAfter(this.part, byte);
      if (byte < 0x80 || this.part === Part.Method) out.push(byte);
      else {
        out.push(0x25, hexDigit(byte >> 4), hexDigit(byte & 15));
        if (this.part === Part.Path) this.escapedInPath += 1;
        else if (this.part === Part.Query) this.escapedInQuery += 1;
      }
    }
    return Buffer.concat([slice.subarray(0, start), Buffer.from(out), slice.subarray(end)]);
  }

  /** The connection is gone: its parser goes back to node's pool. */
  release(): void {
    if (this.parser !== null && owners.get(this.parser) === this) owners.delete(this.parser);
  }
}

/** Node's callback at `index` (behind a callback of ours, from any copy of this module), the one seen before if any; null if it is not one. */
function wrapped(p: Parser, index: number, seen: Callback | null): Callback | null {
  const found = p[index];
  const current = isOurs(found) ? found[CALLS_THROUGH] : found;
  if (typeof current !== 'function' || (seen != null && current !== seen)) return null;
  return current as Callback;
}

const hexDigit = (n: number): number => (n < 10 ? 0x30 + n : 0x41 + n - 10);

/** Puts our callbacks on `parser`, if it is the parser this was written against (else nothing is escaped). */
function hook(parser: unknown, lines: RequestLines): boolean {
  if (typeof parser !== 'object' || parser === null) return false;
  const p = parser as Parser;
  const { kOnMessageBegin: begin, kOnBody: body, kOnMessageComplete: complete } = p.constructor ?? {};
  if (typeof begin !== 'number' || typeof body !== 'number' || typeof complete !== 'number') return false;
  if (p[begin] != null && !isOurs(p[begin])) return false;
  const nodeBody = wrapped(p, body, onBody[CALLS_THROUGH]);
  const nodeComplete = wrapped(p, complete, onMessageComplete[CALLS_THROUGH]);
  if (nodeBody === null || nodeComplete === null) return false;
  onBody[CALLS_THROUGH] = nodeBody;
  onMessageComplete[CALLS_THROUGH] = nodeComplete;
  p[body] = onBody;
  p[complete] = onMessageComplete;
  p[begin] = onMessageBegin;
  owners.set(p, lines);
  return true;
}
