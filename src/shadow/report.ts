import fs from 'node:fs';
import path from 'node:path';
import { log } from '../basics/log';
import type { Answer, Difference } from './compare';

/**
 * The differences log: one JSON line per request whose two answers differ, appended to SHADOW_LOG.
 * A line holds the request and both answers, so a difference can be understood without the traffic,
 * but no secret: AuthCode's code is removed wherever it appears and phone numbers are masked but for
 * their last two digits (the service's own log keeps the prefix and three: basics/log.ts maskPhone).
 */
export interface ReportedRequest {
  method: string;
  url: string;
  /** Content-Type and SOAPAction, the headers that choose what a request means. */
  headers: Record<string, string>;
  body: string;
}

export interface DifferenceLine {
  time: string;
  requestId: string;
  mode: string;
  endpoint: string;
  operation: string;
  binding: string;
  request: ReportedRequest;
  legacy: Answer;
  ours: Answer;
  differences: Difference[];
  /** The second legacy site differed from the first the same way (SHADOW_URL_SECONDARY): not the new service's doing. */
  noise?: boolean;
}

const maskDigits = (value: string) => {
  const digits = value.replace(/\P{Nd}/gu, '').length;
  let seen = 0;
  return value.replace(/\p{Nd}/gu, (d) => (++seen > digits - 2 ? d : '*'));
};

/**
 * Codes out and phones masked, in XML (`<code>`, `<x:phone>`), in a query or form (`code=`, `PHONE=`:
 * ASP.NET matches names without regard to case) and, for a number echoed anywhere else, any run of
 * seven or more digits. Every pattern here runs in linear time: the text may be a hostile request.
 */
export function mask(text: string): string {
  const xml = maskElements(maskElements(text, 'code', () => '[removed]'), 'phone', maskDigits);
  return xml
    .replace(/((?:^|[?&])code=)[^&#\s]*/gi, '$1[removed]')
    .replace(/((?:^|[?&])phone=)([^&#\s]*)/gi, (_m, name: string, value: string) => name + encodeURIComponent(maskDigits(decoded(value))))
    .replace(/\p{Nd}(?:[ ().-]?\p{Nd}){6,}/gu, maskDigits);
}

const decoded = (value: string) => {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
};

/** Replaces the content of each element with this local name (any prefix), up to its end tag or the end of the text. */
function maskElements(text: string, local: string, replace: (content: string) => string): string {
  const open = new RegExp(`<(?:[\\w.-]+:)?${local}(?:\\s[^<>]*)?>`, 'gi');
  const close = new RegExp(`</(?:[\\w.-]+:)?${local}\\s*>`, 'gi');
  let out = '';
  let at = 0;
  for (let m = open.exec(text); m !== null; m = open.exec(text)) {
    if (m[0].endsWith('/>')) continue;
    const start = m.index + m[0].length;
    close.lastIndex = start;
    const end = close.exec(text);
    const stop = end === null ? text.length : end.index;
    out += text.slice(at, start) + replace(text.slice(start, stop));
    at = stop;
    if (end === null) break;
    open.lastIndex = stop;
  }
  return out + text.slice(at);
}

/** A body kept in the log: at most this many characters (a line per difference, not a copy of the traffic). */
const KEPT = 64 * 1024;
const kept = (s: string) => (s.length > KEPT ? `${s.slice(0, KEPT)}…(${s.length} characters)` : s);

const maskAnswer = (a: Answer): Answer => ({ ...a, body: mask(kept(a.body)) });

export interface Report {
  write(line: DifferenceLine): void;
  close(): Promise<void>;
}

/** Appends to `file` (its directory created); a file that cannot be written is logged once, never fatal. */
export function openReport(file: string | null): Report {
  if (file === null) return { write: () => undefined, close: async () => undefined };
  let failed = false;
  let stream: fs.WriteStream | null = null;
  try {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    stream = fs.createWriteStream(file, { flags: 'a' });
  } catch (error) {
    failed = true;
    log.error('shadow differences log cannot be written; differences are counted only', { file, error });
  }
  stream?.on('error', (error) => {
    if (!failed) log.error('shadow differences log cannot be written; differences are counted only', { file, error });
    failed = true;
  });
  return {
    write(line) {
      if (failed || stream === null) return;
      const masked: DifferenceLine = {
        ...line,
        request: { ...line.request, url: mask(line.request.url), body: mask(kept(line.request.body)) },
        legacy: maskAnswer(line.legacy),
        ours: maskAnswer(line.ours),
        differences: line.differences.map((d) => ({ kind: mask(d.kind), detail: mask(d.detail) })),
      };
      // One write per line: with several workers appending to the one file, lines do not interleave.
      stream.write(`${JSON.stringify(masked)}\n`);
    },
    close: () => new Promise((resolve) => (stream === null || failed ? resolve() : stream.end(resolve))),
  };
}
