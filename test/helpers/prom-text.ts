import type { Sample } from '../../src/basics/sample';

/**
 * Prometheus's text format read back into samples: the tests read /metrics as Prometheus does, over
 * HTTP, and check it by the console's own sums (console/samples.ts total).
 */
const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;
const UNESCAPE: Readonly<Record<string, string>> = { n: '\n', '\\': '\\', '"': '"' };

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    if (m[2] !== undefined) {
      LABEL.lastIndex = 0;
      for (let l = LABEL.exec(m[2]); l !== null; l = LABEL.exec(m[2]))
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => UNESCAPE[c] ?? c);
    }
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    if (!Number.isNaN(value)) out.push({ name: m[1], labels, value });
  }
  return out;
}
