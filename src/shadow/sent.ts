import zlib from 'node:zlib';
import type { AnswerSink, WireAnswer } from './answer';
import { ANSWER_HEADERS, type Answer, compareLive, type Difference, sameAnswer } from './compare';
import type { SentAnswer } from './frames';

/**
 * Answers as they went out (a SentAnswer: the body's bytes, their content coding) compared: the
 * legacy host's as it is read, against the client's (ReadAgainst), and two whole ones (compareSent).
 * Equal bytes decide a match without decoding or parsing; only answers that differ are read as text
 * and compared by meaning (compare.ts).
 */

/** The headers the comparison reads, and the content coding, of an answer as the wire read it. */
export function sentOf(answer: Pick<WireAnswer, 'status' | 'headers'> & { body: Buffer }): SentAnswer {
  const headers: SentAnswer['headers'] = {};
  for (const k of ANSWER_HEADERS) headers[k] = answer.headers[k];
  return { status: answer.status, headers, body: answer.body, encoding: answer.headers['content-encoding'] };
}

/**
 * An answer compared with another (the client's) as it is read: while its head and every byte so far
 * equal the other's, nothing of it is kept, so that an equal answer, nearly every copy's, costs one
 * comparison of its bytes as they pass and no memory. From the first that differs it is kept (the
 * equal part taken from the other), to be compared by meaning (compareSent) and reported.
 */
export class ReadAgainst implements AnswerSink {
  private head_: Pick<WireAnswer, 'status' | 'headers'> = { status: 0, headers: {} };
  private readonly other: Buffer;
  /** Bytes of the body read so far, all equal to the other's while `kept` is null. */
  private at = 0;
  private kept: Buffer[] | null = null;

  constructor(private readonly expected: SentAnswer) {
    this.other = bytesOf(expected.body);
  }

  head(status: number, headers: Record<string, string>): void {
    this.head_ = { status, headers };
    const sent = sentOf({ status, headers, body: EMPTY });
    if (!sameAnswer(sent, this.expected) || sent.encoding !== this.expected.encoding) this.kept = [];
  }

  data(bytes: Buffer): void {
    if (this.kept === null) {
      const end = this.at + bytes.length;
      if (end <= this.other.length && bytes.equals(this.other.subarray(this.at, end))) {
        this.at = end;
        return;
      }
      this.kept = [this.other.subarray(0, this.at)];
    }
    this.kept.push(Buffer.from(bytes));
    this.at += bytes.length;
  }

  /** Whether the answer read is the other, byte for byte, with the same head. */
  get equal(): boolean {
    return this.kept === null && this.at === this.other.length;
  }

  get answer(): SentAnswer {
    return sentOf({ ...this.head_, body: this.kept === null ? this.other.subarray(0, this.at) : Buffer.concat(this.kept, this.at) });
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * Two answers as they went out, compared: null when they agree, else both as text and what differs.
 * Equal bytes (with the same content coding, status and compared headers) are equal answers, the
 * common case, decided without decoding or parsing either; only answers whose bytes differ are read
 * as text and compared by meaning (compareLive). test/shadow-compare.test.ts holds the two ways to
 * the same verdict on a corpus of pairs.
 */
export function compareSent(
  method: string,
  url: string,
  legacy: SentAnswer,
  ours: SentAnswer,
): { legacy: Answer; ours: Answer; found: Difference[] } | null {
  if (sameAnswer(legacy, ours) && legacy.encoding === ours.encoding && sameBytes(legacy.body, ours.body)) return null;
  const [l, o] = [asText(legacy), asText(ours)];
  const found = compareLive(method, url, l, o);
  return found.length === 0 ? null : { legacy: l, ours: o, found };
}

const bytesOf = (body: string | Uint8Array): Buffer =>
  typeof body === 'string'
    ? Buffer.from(body, 'utf8')
    : Buffer.isBuffer(body)
      ? body
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength);

function sameBytes(a: string | Uint8Array, b: string | Uint8Array): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  return Buffer.compare(bytesOf(a), bytesOf(b)) === 0;
}

export function asText(a: SentAnswer): Answer {
  return { status: a.status, headers: a.headers, body: typeof a.body === 'string' ? a.body : readable(a.body, a.encoding) };
}

/** Inflated no further than this: a body is read for a comparison, and a hostile one must not cost more. */
const INFLATE_LIMIT = 16 * 1024 * 1024;

/** A body as text, undoing a content coding first (a legacy host may compress what its client accepts). */
export function readable(bytes: Uint8Array, encoding: string | undefined): string {
  // A view, not a copy: bytes that crossed a process boundary may come back as a plain Uint8Array.
  const body = bytesOf(bytes);
  try {
    switch (encoding?.trim().toLowerCase()) {
      case 'gzip':
      case 'x-gzip':
        return zlib.gunzipSync(body, { maxOutputLength: INFLATE_LIMIT }).toString('utf8');
      case 'deflate':
        return zlib.inflateSync(body, { maxOutputLength: INFLATE_LIMIT }).toString('utf8');
      case 'br':
        return zlib.brotliDecompressSync(body, { maxOutputLength: INFLATE_LIMIT }).toString('utf8');
      default:
        return body.toString('utf8');
    }
  } catch {
    return body.toString('utf8');
  }
}
