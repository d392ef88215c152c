/**
 * Summarises a shadow differences log (SHADOW_LOG, JSON lines):
 *
 *   npm run shadow-report -- FILE [--json]
 *
 * FILE and the files rotated out of it (FILE.3 ... FILE.1, oldest first). Totals per operation and
 * binding, then each distinct kind of difference with how many requests showed it and one example
 * (the request and what differed). The requests whose line was not written (past their kind's
 * examples an hour, under the disk floor...) are counted from the log's tally lines, and said.
 * Read as a stream: a week's log is fine.
 */
import '../src/basics/supported-node';
import fs from 'node:fs';
import readline from 'node:readline';
import { type CommandSpec, parseCommandLine } from '../src/basics/command-line';
import { logFiles } from '../src/shadow/log-file';
import { type DifferenceLine, isTally, type NotWrittenLine } from '../src/shadow/report';
import { runMain } from './run-main';

interface Kind {
  kind: string;
  count: number;
  example: { requestId: string; time: string; request: string; detail: string };
}

export interface Summary {
  /** Difference lines read (requests with their line written). */
  lines: number;
  /** Requests that differed without a line, by why (the tally lines' counts): `examples`, `disk_floor`, `budget`, `busy`, `error`. */
  notWritten: Record<string, number>;
  /** Of those, the differences the second legacy site showed too (SHADOW_URL_SECONDARY): noise, not this service's doing. */
  noise: number;
  unreadable: number;
  /** `operation binding` (an empty name as `-`) to the number of requests that differed. */
  byOperation: Record<string, number>;
  kinds: Kind[];
}

/** The lines of each input in turn: a log and its rotated files, oldest first, read as one. */
async function* linesOf(inputs: NodeJS.ReadableStream[]): AsyncGenerator<string> {
  for (const input of inputs) yield* readline.createInterface({ input, crlfDelay: Infinity });
}

export async function summarise(input: NodeJS.ReadableStream | NodeJS.ReadableStream[]): Promise<Summary> {
  const summary: Summary = { lines: 0, notWritten: {}, noise: 0, unreadable: 0, byOperation: {}, kinds: [] };
  const kinds = new Map<string, Kind>();
  const add = (operation: string, binding: string, n: number) => {
    const key = `${operation || '-'} ${binding || '-'}`;
    summary.byOperation[key] = (summary.byOperation[key] ?? 0) + n;
  };
  for await (const text of linesOf(Array.isArray(input) ? input : [input])) {
    if (text.trim() === '') continue;
    let line: DifferenceLine | NotWrittenLine;
    try {
      line = JSON.parse(text) as DifferenceLine | NotWrittenLine;
      if (isTally(line) ? !Array.isArray(line.kinds) : !Array.isArray(line.differences)) throw new Error('no differences');
    } catch {
      summary.unreadable++;
      continue;
    }
    if (isTally(line)) {
      const n = tally(summary, line);
      if (line.noise === true) summary.noise += n;
      add(line.operation, line.binding, n);
      for (const kind of new Set(line.kinds)) {
        const k = kinds.get(kind);
        if (k !== undefined) k.count += n;
        else kinds.set(kind, { kind, count: n, example: { requestId: '-', time: line.time, request: '(no line written)', detail: '' } });
      }
      continue;
    }
    summary.lines++;
    if (line.noise === true) summary.noise++;
    add(line.operation, line.binding, 1);
    // A request counts once per kind, however often the kind occurs in it.
    for (const d of new Map(line.differences.map((x) => [x.kind, x])).values()) {
      const k = kinds.get(d.kind);
      const example = {
        requestId: line.requestId,
        time: line.time,
        request: `${line.request.method} ${line.request.url}`,
        detail: d.detail,
      };
      if (k === undefined) kinds.set(d.kind, { kind: d.kind, count: 1, example });
      else {
        k.count++;
        // A kind first met in a tally gets the first line that shows it as its example.
        if (k.example.requestId === '-') k.example = example;
      }
    }
  }
  summary.kinds = [...kinds.values()].sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
  return summary;
}

/** A tally line's counts added to the summary's: the requests it stands for. */
function tally(summary: Summary, line: NotWrittenLine): number {
  let n = 0;
  for (const [why, count] of Object.entries(line.notWritten)) {
    if (typeof count !== 'number' || !(count > 0)) continue;
    summary.notWritten[why] = (summary.notWritten[why] ?? 0) + count;
    n += count;
  }
  return n;
}

/** Why lines were not written, as the report says it. */
const WHY: Record<string, string> = {
  examples: 'past SHADOW_LOG_EXAMPLES of their kind an hour',
  disk_floor: 'under the disk floor, SHADOW_LOG_KEEP_FREE',
  budget: 'longer than a quarter of SHADOW_LOG_MAX_BYTES',
  busy: 'the disk behind',
  error: 'the file not writable',
};

export function format(s: Summary): string {
  const unwritten = Object.values(s.notWritten).reduce((a, b) => a + b, 0);
  const noise = s.noise > 0 ? `, ${s.noise} of them noise (the second legacy site differed the same way)` : '';
  const why = Object.entries(s.notWritten)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${n} ${WHY[reason] ?? reason}`);
  const notWritten = unwritten > 0 ? `; ${s.lines} written to the log, ${unwritten} not (${why.join(', ')}): counted only` : '';
  const out: string[] = [
    `${s.lines + unwritten} requests with differences${noise}${notWritten}${s.unreadable > 0 ? ` (${s.unreadable} unreadable lines skipped)` : ''}`,
    '',
  ];
  if (s.lines + unwritten === 0) return out.join('\n');
  out.push('By operation and binding:');
  for (const [key, n] of Object.entries(s.byOperation).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])))
    out.push(`  ${String(n).padStart(7)}  ${key}`);
  out.push('', `${s.kinds.length} kinds of difference:`);
  for (const k of s.kinds) {
    out.push(`  ${String(k.count).padStart(7)}  ${k.kind}`);
    out.push(`           e.g. ${k.example.request}  (${k.example.requestId}, ${k.example.time})`);
    out.push(`                ${k.example.detail}`);
  }
  return out.join('\n');
}

const COMMAND = {
  usage: ['npm run shadow-report -- FILE [--json]'],
  summary: [
    "Summarises a shadowing service's differences log (FILE: its SHADOW_LOG, with the files rotated out of it):",
    'totals per operation and binding, then each kind of difference with how many requests showed it and one example.',
  ],
  options: { json: { type: 'boolean', help: 'the summary as JSON' } },
  positionals: ['FILE'],
  notes: ['exit codes: 0 summarised, 1 FILE cannot be read, 2 usage'],
} as const satisfies CommandSpec;

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const json = line.values.json === true;
  const args = line.positionals;
  const files = logFiles(args[0]!);
  let inputs: fs.ReadStream[];
  try {
    if (files.length === 0) throw new Error('no such file');
    inputs = files.map((f) => fs.createReadStream(f));
    await Promise.all(inputs.map((input) => new Promise((resolve, reject) => input.once('open', resolve).once('error', reject))));
  } catch (e) {
    process.stderr.write(`error: cannot read ${args[0]}: ${(e as Error).message}\n`);
    return 1;
  }
  const summary = await summarise(inputs);
  process.stdout.write(json ? `${JSON.stringify(summary, null, 1)}\n` : `${format(summary)}\n`);
  return 0;
}

if (require.main === module) runMain(main);
