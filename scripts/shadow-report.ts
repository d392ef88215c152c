/**
 * Summarises a shadow differences log (SHADOW_LOG, JSON lines):
 *
 *   npm run shadow-report -- FILE [--json]
 *
 * Totals per operation and binding, then each distinct kind of difference with how many requests
 * showed it and one example (the request and what differed). Read as a stream: a week's log is fine.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import type { DifferenceLine } from '../src/shadow/report';

interface Kind {
  kind: string;
  count: number;
  example: { requestId: string; time: string; request: string; detail: string };
}

export interface Summary {
  lines: number;
  /** Of those, the differences the second legacy site showed too (SHADOW_URL_SECONDARY): noise, not this service's doing. */
  noise: number;
  unreadable: number;
  /** `operation binding` (an empty name as `-`) to the number of requests that differed. */
  byOperation: Record<string, number>;
  kinds: Kind[];
}

export async function summarise(input: NodeJS.ReadableStream): Promise<Summary> {
  const summary: Summary = { lines: 0, noise: 0, unreadable: 0, byOperation: {}, kinds: [] };
  const kinds = new Map<string, Kind>();
  for await (const text of readline.createInterface({ input, crlfDelay: Infinity })) {
    if (text.trim() === '') continue;
    let line: DifferenceLine;
    try {
      line = JSON.parse(text) as DifferenceLine;
      if (!Array.isArray(line.differences)) throw new Error('no differences');
    } catch {
      summary.unreadable++;
      continue;
    }
    summary.lines++;
    if (line.noise === true) summary.noise++;
    const key = `${line.operation || '-'} ${line.binding || '-'}`;
    summary.byOperation[key] = (summary.byOperation[key] ?? 0) + 1;
    // A request counts once per kind, however often the kind occurs in it.
    for (const d of new Map(line.differences.map((x) => [x.kind, x])).values()) {
      const k = kinds.get(d.kind);
      if (k !== undefined) k.count++;
      else kinds.set(d.kind, { kind: d.kind, count: 1, example: { requestId: line.requestId, time: line.time, request: `${line.request.method} ${line.request.url}`, detail: d.detail } });
    }
  }
  summary.kinds = [...kinds.values()].sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
  return summary;
}

export function format(s: Summary): string {
  const noise = s.noise > 0 ? `, ${s.noise} of them noise (the second legacy site differed the same way)` : '';
  const out: string[] = [`${s.lines} requests with differences${noise}${s.unreadable > 0 ? ` (${s.unreadable} unreadable lines skipped)` : ''}`, ''];
  if (s.lines === 0) return out.join('\n');
  out.push('By operation and binding:');
  for (const [key, n] of Object.entries(s.byOperation).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) out.push(`  ${String(n).padStart(7)}  ${key}`);
  out.push('', `${s.kinds.length} kinds of difference:`);
  for (const k of s.kinds) {
    out.push(`  ${String(k.count).padStart(7)}  ${k.kind}`);
    out.push(`           e.g. ${k.example.request}  (${k.example.requestId}, ${k.example.time})`);
    out.push(`                ${k.example.detail}`);
  }
  return out.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const files = argv.filter((a) => a !== '--json');
  if (files.length !== 1) {
    process.stderr.write('usage: npm run shadow-report -- FILE [--json]   (FILE: the SHADOW_LOG of a shadowing service)\n');
    return 2;
  }
  let input: fs.ReadStream;
  try {
    input = fs.createReadStream(files[0]);
    await new Promise((resolve, reject) => input.once('open', resolve).once('error', reject));
  } catch (e) {
    process.stderr.write(`error: cannot read ${files[0]}: ${(e as Error).message}\n`);
    return 1;
  }
  const summary = await summarise(input);
  process.stdout.write(json ? `${JSON.stringify(summary, null, 1)}\n` : `${format(summary)}\n`);
  return 0;
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => process.exit(code));
