import fs from 'node:fs';
import path from 'node:path';
import { log } from '../basics/log';
import { maskText } from '../basics/mask';
import type { Answer, Difference } from './compare';

/**
 * The differences log: one JSON line per request whose two answers differ, appended to SHADOW_LOG.
 * A line holds the request and both answers, so a difference can be understood without the traffic,
 * but no secret: every text of it is masked by the rule the service's own log uses (basics/mask.ts
 * maskText): AuthCode's code removed wherever a field names it, phones masked in any spelling.
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

/** A body kept in the log: at most this many characters (a line per difference, not a copy of the traffic). */
const KEPT = 64 * 1024;
// The count with its thousands separated: a run of seven digits would read as a phone and be masked.
const kept = (s: string) => (s.length > KEPT ? `${s.slice(0, KEPT)}…(${s.length.toLocaleString('en-US')} characters)` : s);

const maskHeaders = <T extends Record<string, string | undefined>>(h: T): T =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k, v === undefined ? v : maskText(v)])) as T;
const maskAnswer = (a: Answer): Answer => ({
  ...a,
  headers: maskHeaders(a.headers),
  body: maskText(kept(a.body)),
  ...(a.error === undefined ? {} : { error: maskText(a.error) }),
});

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
        request: { ...line.request, url: maskText(line.request.url), headers: maskHeaders(line.request.headers), body: maskText(kept(line.request.body)) },
        legacy: maskAnswer(line.legacy),
        ours: maskAnswer(line.ours),
        differences: line.differences.map((d) => ({ kind: maskText(d.kind), detail: maskText(d.detail) })),
      };
      // One write per line: with several workers appending to the one file, lines do not interleave.
      stream.write(`${JSON.stringify(masked)}\n`);
    },
    close: () => new Promise((resolve) => (stream === null || failed ? resolve() : stream.end(resolve))),
  };
}
