import fs from 'node:fs';
import path from 'node:path';
import { type Answer, BASE_PLACEHOLDER, compareAnswers, placeholdBase } from '../../src/shadow/compare';
import { ask } from './ask';
import type { Case } from './corpus-kit';

/**
 * Runs cases against the legacy host (or its recorded answers) and ours, records the legacy answers
 * as test/fixtures/corpus.json holds them, and reports every difference.
 */

/** A case with the legacy host's answer, as a recording holds it. */
export interface Recorded extends Case {
  legacy: { status: number; headers: { 'content-type'?: string; 'cache-control'?: string; 'content-length'?: string }; body: string };
}

export interface Result {
  c: Case;
  legacy: Answer;
  ours: Answer | null;
}

export interface Hosts {
  /** The live legacy host; null when its answers come from `recorded`. */
  legacyUrl: string | null;
  recorded: Map<string, Recorded> | null;
  /** Ours; null when only recording. */
  oursUrl: string | null;
  concurrency: number;
}

async function mapLimit<T, R>(items: T[], limit: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Each case put to both hosts (a recorded legacy answer stands for the live one), `concurrency` at a time. */
export function askBoth(cases: Case[], hosts: Hosts): Promise<Result[]> {
  const { legacyUrl, recorded, oursUrl } = hosts;
  return mapLimit(cases, hosts.concurrency, async (c) => {
    const rec = recorded?.get(c.name);
    const [legacy, ours] = await Promise.all([
      rec ? Promise.resolve<Answer>({ status: rec.legacy.status, headers: { ...rec.legacy.headers }, body: rec.legacy.body }) : ask(legacyUrl!, c, true),
      oursUrl ? ask(oursUrl, c, false) : Promise.resolve(null),
    ]);
    // service pages: each server's own base URL (and the path it was asked) as a placeholder
    if (c.kind === 'page' && !rec) legacy.body = placeholdBase(legacy.body, legacyUrl!, c.legacyPath ?? c.path);
    if (c.kind === 'page' && ours) ours.body = placeholdBase(ours.body, oursUrl!, c.path);
    return { c, legacy, ours };
  });
}

/**
 * Writes the legacy answers to `out` in corpus order. With `only`, the cases asked replace their
 * earlier recording and the rest of the file is kept as it is.
 */
export function writeRecording(out: string, results: Result[], all: Case[], only: string[], namespace: string): void {
  const kept = only.length > 0 && fs.existsSync(out) ? (JSON.parse(fs.readFileSync(out, 'utf8')) as { cases: Recorded[] }).cases : [];
  const fresh = new Map(
    results.map(({ c, legacy }) => [
      c.name,
      {
        ...c,
        legacy: {
          status: legacy.status,
          headers: {
            'content-type': legacy.headers['content-type'],
            'cache-control': legacy.headers['cache-control'],
            'content-length': legacy.headers['content-length'],
          },
          body: legacy.body,
        },
      } as Recorded,
    ]),
  );
  const previous = new Map(kept.map((r) => [r.name, r]));
  const recordedCases = all.flatMap((c) => fresh.get(c.name) ?? previous.get(c.name) ?? []);
  const doc = {
    description:
      'Requests put to the legacy ASMX host (Mono System.Web.Services) and its answers, recorded by scripts/compare-legacy.ts --record. ' +
      'Replay: send method/path/headers/body (bodyBase64: raw bytes) to ours, then compareAnswers(kind, legacy, ours) from that script; ' +
      `in "page" cases the legacy base URL and requested path are written ${BASE_PLACEHOLDER}{PATH}, so pass ours through placeholdBase() first. ` +
      'legacyPath (when given) is what the case-sensitive legacy host was asked instead of path. ' +
      'content-length is recorded for its presence only (the legacy host writes LF where .NET writes CRLF).',
    namespace,
    count: recordedCases.length,
    cases: recordedCases,
  };
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(doc, null, 1)}\n`);
  process.stdout.write(`recorded ${results.length} cases to ${out}\n`);
  for (const r of results.filter((x) => x.legacy.error)) process.stdout.write(`  legacy did not answer ${r.c.name}: ${r.legacy.error}\n`);
}

/** Prints each case whose answers differ, and the count; returns how many differ. */
export function report(results: Result[], verbose: boolean): number {
  let differ = 0;
  for (const { c, legacy, ours } of results) {
    const diffs = compareAnswers(c.kind, legacy, ours!);
    if (diffs.length === 0) continue;
    differ++;
    const soapAction = c.headers.SOAPAction !== undefined ? ` SOAPAction: ${c.headers.SOAPAction}` : '';
    const type = c.headers['Content-Type'] !== undefined ? ` (${c.headers['Content-Type']})` : '';
    process.stdout.write(`\n✗ ${c.name}   [${c.method} ${c.path}${soapAction}${type}]\n`);
    for (const line of diffs) process.stdout.write(`    ${line}\n`);
    if (verbose) process.stdout.write(`    --- legacy body:\n${legacy.body}\n    --- ours body:\n${ours!.body}\n`);
  }
  process.stdout.write(`\n${results.length} cases, ${differ} differ\n`);
  return differ;
}
