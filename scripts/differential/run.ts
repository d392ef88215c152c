import { MONO_OWN } from '../legacy/accepted-generated';
import { ask } from '../legacy/ask';
import { OPS, SERVICES } from '../legacy/corpus-kit';
import { type Answer, compareLive, type Difference, placeholdBase } from '../../src/shadow/compare';
import { type Draws, fresh, replay, shrink } from './draws';
import { type Generated, generate, type Site } from './generate';
import { NEW_FINDINGS, OPEN_RULES } from './open-rules';
import { drawsWithout, type Rule, rulesFor } from './rules';

/**
 * The differential run: each generated request put to the legacy host and to ours, the answers
 * compared as the legacy comparison and shadow traffic compare them (src/shadow/compare.ts: status,
 * media type, framing, Cache-Control, the body by XML meaning, Mono's allowances), and every
 * difference put down to a written rule (Mono's own, or open while a branch fixes it) or reported
 * as a finding, the first of each kind shrunk to its simplest request.
 */

export interface Hosts {
  /** Base URLs, virtual directory included. */
  legacy: string;
  ours: string;
}

export interface Pair {
  legacy: Answer;
  ours: Answer;
}

export interface Exchange extends Pair {
  g: Generated;
  diffs: Difference[];
}

export interface Finding extends Exchange {
  index: number;
  /** What kind of difference: the binding and what differs, without this request's values. */
  signature: string;
  /** The rule whose feature this request was found behind (the request without the feature differs). */
  behind?: string;
  shrunk?: Exchange & { tried: number };
}

export interface Report {
  seed: number;
  /** Generated requests. */
  count: number;
  /** Requests sent to each host, with those asked without a feature and those tried while shrinking. */
  asked: number;
  agreed: number;
  byRule: Map<string, { rule: Rule; whose: 'mono' | 'open' | 'new'; count: number; example: Exchange & { index: number } }>;
  findings: Finding[];
  /** Differences that did not come again when the request was asked again: printed, never accepted silently, not failing. */
  unsteady: Finding[];
}

export interface RunOptions {
  hosts: Hosts;
  site: Site;
  seed: number;
  count: number;
  /** The first index (default 0): `--index I --count 1` makes one request again. */
  first?: number;
  concurrency: number;
  /** Shrink the first finding of each kind (at most this many kinds; 0: none). */
  shrinkKinds: number;
  onProgress?: (done: number) => void;
}

const RULES: Rule[] = [...MONO_OWN, ...OPEN_RULES, ...NEW_FINDINGS];
/** Whose a rule is: Mono's own, open on another branch, or a new finding waiting for one. */
export const whose = (r: Rule): 'mono' | 'open' | 'new' => (OPEN_RULES.includes(r) ? 'open' : NEW_FINDINGS.includes(r) ? 'new' : 'mono');

export async function askPair(hosts: Hosts, g: Generated): Promise<Pair> {
  const c = g.c;
  // a generated path holds the site's virtual directory (it may be changed too): asked of each origin
  const legacyOrigin = new URL(hosts.legacy).origin;
  const oursOrigin = new URL(hosts.ours).origin;
  const [legacy, ours] = await Promise.all([ask(legacyOrigin, c, true, 20000), ask(oursOrigin, c, false, 20000)]);
  // each host's own origin (and the path it was asked) as a placeholder, as the recordings have it
  legacy.body = placeholdBase(legacy.body, legacyOrigin, c.legacyPath ?? c.path);
  ours.body = placeholdBase(ours.body, oursOrigin, c.path);
  return { legacy, ours };
}

export const differencesOf = (g: Generated, p: Pair) => compareLive(g.c.method, g.c.path, p.legacy, p.ours);
const signatureOf = (g: Generated, diffs: Difference[]) => `${g.binding}: ${[...new Set(diffs.map((d) => d.kind))].sort().join('; ')}`;

type Verdict = { kind: 'agree' } | { kind: 'rule'; rule: Rule } | { kind: 'finding'; x: Exchange; behind?: string };

export function runner(opts: Pick<RunOptions, 'hosts' | 'site'>) {
  let asked = 0;
  const make = (d: Draws, name: string) => generate(d, opts.site, name);
  const exchange = async (g: Generated): Promise<Exchange> => {
    asked++;
    const p = await askPair(opts.hosts, g);
    return { g, ...p, diffs: differencesOf(g, p) };
  };

  /**
   * Whose the difference is: none; a rule's, checked by asking the request without the rule's
   * features, which must then agree (or differ only as another rule says); or a finding.
   */
  async function judge(x: Exchange, depth = 0): Promise<Verdict> {
    if (x.diffs.length === 0) return { kind: 'agree' };
    const rules = rulesFor(RULES, x.g, x.legacy, x.ours);
    if (rules.length === 0) return { kind: 'finding', x };
    const byAnswers = rules.find((r) => r.features.length === 0);
    if (byAnswers !== undefined || depth >= 3) return { kind: 'rule', rule: byAnswers ?? rules[0] };
    const without = async (these: Rule[]) => {
      const draws = drawsWithout(x.g, these);
      return draws === null ? null : exchange(make(replay(draws), `${x.g.c.name} without ${these.map((r) => r.name).join(', ')}`));
    };
    // the rule whose features, taken away, leave answers that agree
    let last: Exchange | null = null;
    for (const rule of rules) {
      last = await without([rule]);
      if (last?.diffs.length === 0) return { kind: 'rule', rule };
    }
    const rest = rules.length === 1 ? last : await without(rules);
    if (rest === null) return { kind: 'rule', rule: rules[0] };
    const next = await judge(rest, depth + 1);
    return next.kind === 'finding'
      ? { ...next, behind: next.behind ?? rules.map((r) => r.name).join(', ') }
      : { kind: 'rule', rule: rules[0] };
  }

  /** The simplest request that still shows a finding's kind of difference, no rule covering it. */
  async function shrunk(f: Finding, budget: number): Promise<Exchange & { tried: number }> {
    let best: Exchange = f;
    const { tried } = await shrink(
      f.g.made,
      async (draws) => {
        const x = await exchange(make(replay(draws), `${f.g.c.name} shrunk`));
        if (x.diffs.length === 0 || rulesFor(RULES, x.g, x.legacy, x.ours).length > 0 || signatureOf(x.g, x.diffs) !== f.signature)
          return null;
        best = x;
        return x.g.made;
      },
      budget,
    );
    return { ...best, tried };
  }

  return { make, exchange, judge, shrunk, asked: () => asked };
}

/**
 * Each service page asked of the legacy host once, one at a time, before the run: Mono compiles its
 * help page on first use, and a first use by several requests at once can fail with its error page.
 */
export async function warmUp(hosts: Hosts, site: Site): Promise<void> {
  const origin = new URL(hosts.legacy).origin;
  for (const service of SERVICES) {
    const op = OPS.find((o) => o.service === service)!.name;
    for (const query of ['', '?wsdl', '?disco', `?op=${op}`]) {
      await ask(
        origin,
        { name: 'warm-up', method: 'GET', path: `${site.virtualDir}/${service}.asmx${query}`, headers: {}, kind: 'full' },
        true,
        60000,
      );
    }
  }
}

export async function runDifferential(opts: RunOptions): Promise<Report> {
  const r = runner(opts);
  const first = opts.first ?? 0;
  const report: Report = { seed: opts.seed, count: opts.count, asked: 0, agreed: 0, byRule: new Map(), findings: [], unsteady: [] };
  await warmUp(opts.hosts, opts.site);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < opts.count) {
      const index = first + next++;
      const x = await r.exchange(r.make(fresh(opts.seed, index), `seed ${opts.seed} index ${index}`));
      const v = await r.judge(x);
      if (v.kind === 'agree') report.agreed++;
      else if (v.kind === 'rule') {
        const seen = report.byRule.get(v.rule.name);
        const smaller = seen === undefined || x.g.made.length < seen.example.g.made.length;
        report.byRule.set(v.rule.name, {
          rule: v.rule,
          whose: whose(v.rule),
          count: (seen?.count ?? 0) + 1,
          example: smaller ? { ...x, index } : seen.example,
        });
      } else {
        const f: Finding = { ...v.x, index, behind: v.behind, signature: signatureOf(v.x.g, v.x.diffs) };
        // asked again: a difference that does not come again is the legacy host's moment, not a rule
        const again = await r.exchange(v.x.g);
        (again.diffs.length === 0 ? report.unsteady : report.findings).push(f);
      }
      opts.onProgress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  report.findings.sort((a, b) => a.index - b.index);
  const kinds = new Map<string, Finding>();
  for (const f of report.findings) if (!kinds.has(f.signature)) kinds.set(f.signature, f);
  for (const f of [...kinds.values()].slice(0, opts.shrinkKinds)) f.shrunk = await r.shrunk(f, 120);
  report.asked = r.asked();
  return report;
}
