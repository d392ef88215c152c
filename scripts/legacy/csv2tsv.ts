import fs from 'node:fs';
import { readCsv } from '../../src/store/csv';
import { runMain } from '../run-main';

/**
 * `node .dev-build/scripts/legacy/csv2tsv.js FILE.csv > FILE.tsv`: the data rows of an import CSV,
 * tab-separated, as the legacy host's data access (scripts/legacy-host/site/App_Code/Store.cs)
 * reads them. The CSV is read by the import's own reader, so both hosts see the same rows.
 */
runMain(async ([file]) => {
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
