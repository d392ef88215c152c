import '../../src/basics/supported-node';
import fs from 'node:fs';
import { readCsv } from '../../src/store/csv';
import { runMain } from '../run-main';
import { type CommandSpec, parseCommandLine } from '../../src/basics/command-line';

/**
 * `node .dev-build/scripts/legacy/csv2tsv.js FILE.csv > FILE.tsv`: the data rows of an import CSV,
 * tab-separated, as the legacy host's data access (scripts/legacy-host/site/App_Code/Store.cs)
 * reads them. The CSV is read by the import's own reader, so both hosts see the same rows.
 */
const COMMAND = {
  usage: ['node .dev-build/scripts/legacy/csv2tsv.js FILE.csv > FILE.tsv'],
  summary: ["An import CSV's data rows, tab-separated, for the legacy host's data access (scripts/legacy-host/start.sh runs it)."],
  options: {},
  positionals: ['FILE.csv'],
  notes: ['exit codes: 0 written, 1 a row the import would refuse, 2 usage'],
} as const satisfies CommandSpec;

runMain(async (argv) => {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const file = line.positionals[0]!;
  const rows: string[] = [];
  let problems = 0;
  await readCsv(
    fs.createReadStream(file),
    ',',
    async (records) => {
      for (const r of records) rows.push(r.fields.join('\t'));
    },
    (p) => {
      problems++;
      process.stderr.write(`${file}:${p.line}: ${p.reason}\n`);
    },
  );
  if (problems > 0) return 1;
  // the first row is the header
  process.stdout.write(`${rows.slice(1).join('\n')}\n`);
  return 0;
});
