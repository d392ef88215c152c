import fs from 'node:fs';
import { maskText as mask } from '../basics/mask';
import { GENERATIONS, generation } from '../shadow/log-file';
import type { DifferenceLine } from '../shadow/report';

/**
 * Enough of the end of the differences log for a few lines: a line holds at most three bodies of
 * 64 KB (the request and both answers, shadow/report.ts) and some fields.
 */
const TAIL_BYTES = 1024 * 1024;

/**
 * The newest `n` differences of the log, newest first, read from the end of its files only (the
 * log grows for weeks): the file written, then the rotated ones as far as needed (one just rotated
 * holds little). The log is shared by the workers and survives restarts, so this is the whole
 * service's latest. Tally lines (counts of lines not written) are not differences and are passed
 * over. Its lines were masked when written; they are masked again here, in case the file was
 * written by hand or by an older version.
 */
export function latestDifferences(file: string | null, n: number): DifferenceLine[] {
  if (file === null) return [];
  const out: DifferenceLine[] = [];
  for (let g = 0; g < GENERATIONS && out.length < n; g++) out.push(...latestIn(generation(file, g), n - out.length));
  return out;
}

function latestIn(file: string, n: number): DifferenceLine[] {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fs.fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    fs.readSync(fd, buffer, 0, length, size - length);
    // The first line may be cut by the tail, the last may be half written: only whole lines count.
    const lines = buffer
      .toString('utf8')
      .split('\n')
      .slice(length < size ? 1 : 0, -1);
    const out: DifferenceLine[] = [];
    for (let i = lines.length - 1; i >= 0 && out.length < n; i--) {
      const line = parse(lines[i]);
      if (line !== null) out.push(line);
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

const headers = (h: unknown): Record<string, string> =>
  typeof h === 'object' && h !== null
    ? Object.fromEntries(Object.entries(h).map(([k, v]) => [mask(k), mask(typeof v === 'string' ? v : '')]))
    : {};

function parse(text: string): DifferenceLine | null {
  try {
    const l = JSON.parse(text) as DifferenceLine;
    if (typeof l !== 'object' || l === null || typeof l.legacy !== 'object' || typeof l.ours !== 'object') return null;
    const s = (v: unknown) => mask(typeof v === 'string' ? v : '');
    return {
      ...l,
      operation: s(l.operation),
      binding: s(l.binding),
      request: { method: s(l.request?.method), url: s(l.request?.url), headers: {}, body: s(l.request?.body) },
      legacy: { status: Number(l.legacy.status), headers: headers(l.legacy.headers), body: s(l.legacy.body) },
      ours: { status: Number(l.ours.status), headers: headers(l.ours.headers), body: s(l.ours.body) },
      differences: Array.isArray(l.differences) ? l.differences.map((d) => ({ kind: s(d?.kind), detail: s(d?.detail) })) : [],
      noise: l.noise === true,
    };
  } catch {
    return null;
  }
}
