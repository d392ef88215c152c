/**
 * Puts the same corpus of requests to the legacy ASMX host and to ours and reports every difference.
 *
 *   npm run compare-legacy -- LEGACY_URL OURS_URL [--only SUBSTRING]... [--verbose] [--concurrency N]
 *   npm run compare-legacy -- LEGACY_URL [OURS_URL] --record [--out FILE]
 *   npm run compare-legacy -- --from test/fixtures/corpus.json OURS_URL [--only SUBSTRING]...
 *   npm run compare-legacy -- --list [--only SUBSTRING]
 *
 * Compared per case: status; Content-Type (exact); framing (Content-Length vs chunked); Cache-Control;
 * the body, by XML meaning when both bodies are XML (expanded names, attributes without namespace
 * declarations, text; white space between elements ignored), exactly otherwise.
 *
 * Known ways the legacy host (Mono) is not .NET on IIS, and how they are allowed for:
 * - its messages keep `{0}` placeholders unfilled: a legacy text with placeholders is a template, each
 *   `{n}` standing for any text (so the text before the first `{` must match, and what follows too);
 * - it writes LF where .NET writes CRLF: in plain-text bodies each lone LF of the legacy body counts as CRLF;
 * - its help pages are its own design: `GET /X.asmx` and `?op=` compare status and Content-Type only;
 * - so is its runtime error page (what a remote client gets where ASP.NET, not the service, refuses a
 *   request), and it omits the charset ASP.NET appends to its `text/html`: `error` cases compare status,
 *   media type, framing and Cache-Control, and that both bodies are a runtime error page (or both empty);
 * - its paths are case-sensitive: a case may ask ours `path` and the legacy host `legacyPath`;
 * - its own response headers (Server, Connection, ...) are not looked at.
 * `?wsdl`/`?disco` documents are compared after each server's own base URL (and the requested path) is
 * replaced by a placeholder.
 *
 * `--record` writes the corpus with the legacy answers to test/fixtures/corpus.json (or --out FILE);
 * with `--only`, just those cases are recorded again and the rest of the file is kept as it is.
 * `--namespace NS` uses the corpus for a service namespace without a trailing slash instead (recorded
 * to test/fixtures/corpus-namespace.json; the legacy host and ours must both serve NS).
 * The legacy base URL in bodies is replaced by `{BASE_URL}`, so the answers can be replayed without the host.
 *
 * This file is the command line. The corpus is scripts/legacy/corpus.ts (and the corpus-*.ts it
 * gathers), the runner scripts/legacy/run.ts (both hosts asked, the recording, the report) with
 * ask.ts (shadow traffic's HTTP client), and the comparison src/shadow/compare.ts, which shadow
 * traffic uses too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/basics/paths';
import { NS } from './legacy/corpus-kit';
import { buildCorpus, buildNamespaceCorpus } from './legacy/corpus';
import { askBoth, type Recorded, report, writeRecording } from './legacy/run';

const USAGE =
  'usage: npm run compare-legacy -- LEGACY_URL OURS_URL [--only SUBSTRING]... [--verbose] [--concurrency N]\n' +
  '       npm run compare-legacy -- LEGACY_URL [OURS_URL] --record [--out FILE] [--namespace NS]\n' +
  '       npm run compare-legacy -- --from test/fixtures/corpus.json OURS_URL [--only SUBSTRING]...\n' +
  '       npm run compare-legacy -- --list [--only SUBSTRING]\n';

interface Options {
  positional: string[];
  only: string[];
  record: boolean;
  verbose: boolean;
  out: string | null;
  from: string | null;
  namespace: string | null;
  concurrency: number;
  list: boolean;
}

function parse(argv: string[]): Options | string {
  const o: Options = { positional: [], only: [], record: false, verbose: false, out: null, from: null, namespace: null, concurrency: 4, list: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string | undefined => argv[++i];
    if (a === '--only') o.only.push(value() ?? '');
    else if (a === '--record') o.record = true;
    else if (a === '--verbose') o.verbose = true;
    else if (a === '--list') o.list = true;
    else if (a === '--out') o.out = value() ?? null;
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
  const fixture = o.namespace === null ? 'corpus.json' : 'corpus-namespace.json';
  const out = o.out ?? path.join(projectRoot, 'test', 'fixtures', fixture);
  const all = o.namespace === null ? buildCorpus() : buildNamespaceCorpus(o.namespace);
  const chosen = (c: { name: string }) => o.only.length === 0 || o.only.some((s) => c.name.includes(s));
  if (o.list) {
    for (const c of all.filter(chosen)) process.stdout.write(`${c.name}\n`);
    return 0;
  }
  if (o.from !== null && o.record) {
    process.stderr.write('--record needs a live legacy host, not --from\n');
    return 2;
  }
  // With --from, the recorded cases are replayed as recorded, even if the corpus has changed since.
  const recorded = o.from === null ? null : new Map((JSON.parse(fs.readFileSync(o.from, 'utf8')) as { cases: Recorded[] }).cases.map((r) => [r.name, r]));
  const [legacyUrl, oursUrl] = recorded === null ? o.positional : [null, o.positional[0]];
  if ((!legacyUrl && !recorded) || (!oursUrl && !o.record)) {
    process.stderr.write(USAGE);
    return 2;
  }
  const cases = recorded === null ? all.filter(chosen) : [...recorded.values()].filter(chosen);
  const results = await askBoth(cases, { legacyUrl: legacyUrl ?? null, recorded, oursUrl: oursUrl ?? null, concurrency: o.concurrency });
  if (o.record) writeRecording(out, results, all, o.only, o.namespace ?? NS);
  if (!oursUrl) return 0;
  return report(results, o.verbose) === 0 ? 0 : 1;
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
