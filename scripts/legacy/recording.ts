import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/basics/paths';
import { type Answer, BASE_PLACEHOLDER, compareAnswers, placeholdBase } from '../../src/shadow/compare';
import { kindFor } from './accepted';
import { ask } from './ask';
import type { Case } from './corpus-kit';
import type { Configuration } from './matrix';

/** Where the matrix's recordings are kept, one file per configuration. */
export const RECORDINGS = path.join(projectRoot, 'test', 'fixtures', 'legacy');

/** A case with the legacy host's answer, as a recording holds it. */
export interface Recorded extends Case {
  legacy: { status: number; headers: { 'content-type'?: string; 'cache-control'?: string; 'content-length'?: string }; body: string };
}

export interface Recording {
  description: string;
  configuration: Configuration;
  count: number;
  cases: Recorded[];
}

export const recordingPath = (name: string, dir = RECORDINGS) => path.join(dir, `${name}.json`);

export function readRecording(name: string, dir = RECORDINGS): Recording {
  return JSON.parse(fs.readFileSync(recordingPath(name, dir), 'utf8')) as Recording;
}

/**
 * An answer as recordings hold it and replays compare it: the server's own base URL (and the path it
 * was asked) in the body made a placeholder, so that neither the port nor the host is recorded.
 */
export function comparable(answer: Answer, base: string, requestPath: string): Answer {
  return { ...answer, body: placeholdBase(answer.body, base, requestPath) };
}

/** Each case put to the legacy host at `base`, `concurrency` at a time, in corpus order. */
export async function recordCases(base: string, cases: Case[], concurrency = 4): Promise<Recorded[]> {
  const out: Recorded[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const c = cases[i];
      const a = await ask(base, c, true);
      if (a.error) throw new Error(`the legacy host did not answer ${c.name}: ${a.error}`);
      const { body } = comparable(a, base, c.legacyPath ?? c.path);
      const h = a.headers;
      out[i] = {
        ...c,
        legacy: {
          status: a.status,
          headers: { 'content-type': h['content-type'], 'cache-control': h['cache-control'], 'content-length': h['content-length'] },
          body,
        },
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, cases.length) }, worker));
  return out;
}

export function writeRecording(config: Configuration, cases: Recorded[], dir = RECORDINGS): string {
  const doc: Recording = {
    description:
      `Requests put to the legacy ASMX host (Mono System.Web.Services) configured as "configuration" says, and its answers; recorded by npm run record-legacy. ` +
      `Replayed by test/legacy-matrix.test.ts against our service with the same XML_NAMESPACE, PROTOCOLS and BASE_PATH. ` +
      `The host's base URL (virtual directory included) and the requested path are written ${BASE_PLACEHOLDER}{PATH} in bodies; legacyPath, when given, ` +
      'is what the case-sensitive legacy host was asked instead of path; content-length is recorded for its presence only (the legacy host writes LF where .NET writes CRLF).',
    configuration: config,
    count: cases.length,
    cases,
  };
  const file = recordingPath(config.name, dir);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(doc, null, 1)}\n`);
  return file;
}

/**
 * The cases whose fresh answer the replay's comparison tells from the committed one, each with why;
 * and the cases one recording has and the other lacks. Empty when the committed recording still says
 * what the host answers.
 */
export function recordingChanges(committed: Recorded[], fresh: Recorded[]): string[] {
  const before = new Map(committed.map((c) => [c.name, c]));
  const out: string[] = [];
  for (const c of fresh) {
    const old = before.get(c.name);
    before.delete(c.name);
    if (old === undefined) {
      out.push(`+ ${c.name}: not in the committed recording`);
      continue;
    }
    if (old.kind === c.kind && JSON.stringify(old.legacy) === JSON.stringify(c.legacy)) continue;
    // The fresh answer in the committed one's place as "ours": its lone LFs as the CRLFs the comparison reads a legacy LF as.
    const diffs = compareAnswers(kindFor(old, old.legacy), old.legacy, { ...c.legacy, body: c.legacy.body.replace(/\r?\n/g, '\r\n') });
    if (old.kind !== c.kind) diffs.push(`kind: committed ${old.kind}, now ${c.kind}`);
    if (diffs.length > 0) out.push(`✗ ${c.name}\n${diffs.map((d) => `    ${d}`).join('\n')}`);
  }
  for (const name of before.keys()) out.push(`- ${name}: in the committed recording, no longer in the corpus`);
  return out;
}
