/**
 * Writes a large students CSV for measuring the import (never committed: write it under /tmp).
 *
 *   node dist/scripts/gen-students.js /tmp/students-1m.csv 1000000
 *
 * 1,000 schools, Arabic and quoted names, some empty devices: the shapes the import meets in real files.
 */
import '../src/basics/supported-node';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { type CommandSpec, parseCommandLine, usageError } from '../src/basics/command-line';
import { STUDENT_COLUMNS } from '../src/store/import';
import { runMain } from './run-main';

const COMMAND = {
  usage: ['node dist/scripts/gen-students.js OUT.csv [ROWS]'],
  summary: ['Writes a synthetic students CSV of ROWS rows (default 1000000) to OUT.csv, for sizing an import.'],
  options: {},
  positionals: ['OUT.csv', '[ROWS]'],
  notes: ['exit codes: 0 written, 2 usage'],
} as const satisfies CommandSpec;

export async function main(argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const [path, count = '1000000'] = line.positionals as [string, string?];
  if (!/^\d{1,9}$/.test(count)) return usageError(COMMAND, `ROWS must be a whole number, not "${count}"`);
  const out = createWriteStream(path);
  out.write(`${STUDENT_COLUMNS.join(',')}\n`);
  for (let i = 0; i < Number(count); i += 1) {
    const name = i % 3 === 0 ? `"طالب ${i}, ""${i % 7}"""` : `Student ${i}`;
    const device = i % 10 === 0 ? '' : `dev-${i}`;
    if (!out.write(`http://school-${i % 1000}.example,${i},${name},${device},${i % 4 === 0 ? '0' : '1'}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return 0;
}

if (require.main === module) runMain(main);
