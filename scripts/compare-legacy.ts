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
import fs from 'node:fs';
import { NS } from './legacy/corpus-kit';
import { buildCorpus } from './legacy/corpus';
import { describeAccepted } from './legacy/accepted';
import { askBoth, type Recorded, report } from './legacy/run';

const USAGE =
  'usage: npm run compare-legacy -- LEGACY_URL OURS_URL [--only SUBSTRING]... [--verbose] [--concurrency N]\n' +
  '       npm run compare-legacy -- --from test/fixtures/legacy/root-tempuri-all.json OURS_URL [--only SUBSTRING]...\n' +
  '       npm run compare-legacy -- --list [--only SUBSTRING]\n';

interface Options {
  positional: string[];
  only: string[];
  verbose: boolean;
  from: string | null;
  namespace: string | null;
  concurrency: number;
  list: boolean;
}

function parse(argv: string[]): Options | string {
  const o: Options = { positional: [], only: [], verbose: false, from: null, namespace: null, concurrency: 4, list: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string | undefined => argv[++i];
    if (a === '--only') o.only.push(value() ?? '');
    else if (a === '--verbose') o.verbose = true;
    else if (a === '--list') o.list = true;
    else if (a === '--from') o.from = value() ?? null;
    else if (a === '--namespace') o.namespace = value() ?? null;
    else if (a === '--concurrency') o.concurrency = Number(value());
    else if (a.startsWith('--')) return `unknown option ${a}`;
    else o.positional.push(a);
  }
  if (!(Number.isInteger(o.concurrency) && o.concurrency >= 1)) return '--concurrency takes a whole number from 1';
  return o;
}

async function main(argv: string[]): Promise<number> {
  const o = parse(argv);
  if (typeof o === 'string') {
    process.stderr.write(`${o}\n${USAGE}`);
    return 2;
  }
  const all = buildCorpus(o.namespace ?? NS);
  const chosen = (c: { name: string }) => o.only.length === 0 || o.only.some((s) => c.name.includes(s));
  if (o.list) {
    for (const c of all.filter(chosen)) process.stdout.write(`${c.name}\n`);
    return 0;
  }
  // With --from, the recorded cases are replayed as recorded, even if the corpus has changed since.
  const recorded = o.from === null ? null : new Map((JSON.parse(fs.readFileSync(o.from, 'utf8')) as { cases: Recorded[] }).cases.map((r) => [r.name, r]));
  const [legacyUrl, oursUrl] = recorded === null ? o.positional : [null, o.positional[0]];
  if ((!legacyUrl && !recorded) || !oursUrl) {
    process.stderr.write(USAGE);
    return 2;
  }
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
      process.exit(2);
    },
  );
}
