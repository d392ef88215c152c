/**
 * Puts the same corpus of requests to the legacy ASMX host and to ours and reports every difference.
 *
 *   npm run compare-legacy -- LEGACY_URL OURS_URL [--only SUBSTRING]... [--verbose] [--concurrency N]
 *   npm run compare-legacy -- --from test/fixtures/legacy/root-tempuri-all.json OURS_URL [--only SUBSTRING]...
 *   npm run compare-legacy -- --list [--only SUBSTRING]
 *
 * Compared per case: status; Content-Type (exact); framing (Content-Length vs chunked); Cache-Control;
 * the body, by XML meaning when both bodies are XML (expanded names, attributes without namespace
 * declarations, text; white space between elements ignored), exactly otherwise.
 *
 * How the comparison reads the legacy host (Mono), and the differences accepted because Mono is not
 * .NET there, are one list, scripts/legacy/accepted.ts; a report ends with it. The site configurations
 * (namespaces, virtual directory, protocols) are recorded and replayed by `npm run record-legacy` and
 * test/legacy-matrix.test.ts; this command compares one live pair of hosts.
 * `?wsdl`/`?disco` documents are compared after each server's own base URL (and the requested path) is
 * replaced by a placeholder.
 *
 * `--namespace NS` builds the corpus for a service namespace NS (the legacy host and ours must both
 * serve it). Recordings are made by `npm run record-legacy` (scripts/record-legacy.ts), one per site
 * configuration.
 * The legacy base URL in bodies is replaced by `{BASE_URL}`, so the answers can be replayed without the host.
 *
 * This file is the command line. The corpus is scripts/legacy/corpus.ts (and the corpus-*.ts it
 * gathers), the runner scripts/legacy/run.ts (both hosts asked, the recording, the report) with
 * ask.ts (shadow traffic's HTTP client), and the comparison src/shadow/compare.ts, which shadow
 * traffic uses too.
 */
import '../src/basics/supported-node';
import fs from 'node:fs';
import { type CommandSpec, parseCommandLine, usageError } from '../src/basics/command-line';
import { NS } from './legacy/corpus-kit';
import { buildCorpus } from './legacy/corpus';
import { describeAccepted } from './legacy/accepted';
import { askBoth, type Recorded, report } from './legacy/run';

const COMMAND = {
  usage: [
    'npm run compare-legacy -- LEGACY_URL OURS_URL [--only SUBSTRING]... [--verbose] [--concurrency N] [--namespace NS]',
    'npm run compare-legacy -- --from test/fixtures/legacy/root-tempuri-all.json OURS_URL [--only SUBSTRING]...',
    'npm run compare-legacy -- --list [--only SUBSTRING]...',
  ],
  summary: [
    'Puts the same corpus of requests to the legacy ASMX host and to ours and reports every difference,',
    'then the differences accepted (docs/fidelity.md).',
  ],
  options: {
    only: { type: 'string', multiple: true, value: 'SUBSTRING', help: 'only the cases whose name holds it (repeatable)' },
    verbose: { type: 'boolean', help: 'both answers of each case that differs, in full' },
    list: { type: 'boolean', help: "the cases' names, nothing asked" },
    from: { type: 'string', value: 'FILE.json', help: "a recording's answers instead of a live legacy host" },
    namespace: { type: 'string', value: 'NS', help: 'the corpus for this service namespace (both hosts must serve it)' },
    concurrency: { type: 'integer', min: 1, help: 'cases asked at once (default 4)' },
  },
  positionals: ['[LEGACY_URL]', '[OURS_URL]'],
  notes: ['exit codes: 0 no difference, 1 differences, 2 usage'],
} as const satisfies CommandSpec;

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const { values } = line;
  const o = {
    positional: line.positionals,
    only: values.only ?? [],
    verbose: values.verbose === true,
    from: values.from ?? null,
    namespace: values.namespace ?? null,
    concurrency: values.concurrency ?? 4,
    list: values.list === true,
  };
  const all = buildCorpus(o.namespace ?? NS);
  const chosen = (c: { name: string }) => o.only.length === 0 || o.only.some((s) => c.name.includes(s));
  if (o.list) {
    for (const c of all.filter(chosen)) process.stdout.write(`${c.name}\n`);
    return 0;
  }
  // With --from, the recorded cases are replayed as recorded, even if the corpus has changed since.
  const recorded =
    o.from === null ? null : new Map((JSON.parse(fs.readFileSync(o.from, 'utf8')) as { cases: Recorded[] }).cases.map((r) => [r.name, r]));
  const [legacyUrl, oursUrl] = recorded === null ? o.positional : [null, o.positional[0]];
  if ((!legacyUrl && !recorded) || !oursUrl)
    return usageError(COMMAND, recorded === null ? 'give LEGACY_URL and OURS_URL' : 'give OURS_URL');
  if (recorded !== null && o.positional.length > 1)
    return usageError(COMMAND, `unexpected argument "${o.positional[1]}" (with --from, only OURS_URL)`);
  const cases = recorded === null ? all.filter(chosen) : [...recorded.values()].filter(chosen);
  const results = await askBoth(cases, { legacyUrl: legacyUrl ?? null, recorded, oursUrl: oursUrl ?? null, concurrency: o.concurrency });
  const differ = report(results, o.verbose);
  process.stdout.write(`\n${describeAccepted()}`);
  return differ === 0 ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
