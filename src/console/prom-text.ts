/**
 * Prometheus's text format read back into samples. The console reads the very text /metrics serves
 * (summed over the workers by the cluster primary), so the page and a Prometheus scraping the same
 * listener see the same numbers, and one worker's share is never taken for the whole service.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

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

/** The metric names a text declares (its `# TYPE` lines), with their types. */
export function declaredMetrics(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1], m[2]);
  return out;
}

/** The sum of every sample of `name` whose labels include `match`. */
export function total(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  return sum;
}
