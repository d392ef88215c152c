import { type Answer, compareAnswers, placeholdBase } from '../../src/shadow/compare';
import { ask } from './ask';
import type { Case } from './corpus-kit';

/**
 * Runs cases against the legacy host (or its recorded answers, scripts/legacy/recording.ts) and ours,
 * and reports every difference.
 */

import type { Recorded } from './recording';

export type { Recorded } from './recording';

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
      rec
        ? Promise.resolve<Answer>({ status: rec.legacy.status, headers: { ...rec.legacy.headers }, body: rec.legacy.body })
        : ask(legacyUrl!, c, true),
      oursUrl ? ask(oursUrl, c, false) : Promise.resolve(null),
    ]);
    // each server's own base URL (and the path it was asked) as a placeholder, as recordings have it
    if (!rec) legacy.body = placeholdBase(legacy.body, legacyUrl!, c.legacyPath ?? c.path);
    if (ours) ours.body = placeholdBase(ours.body, oursUrl!, c.path);
    return { c, legacy, ours };
  });
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
