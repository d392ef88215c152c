import type { HostError } from '../../src/basics/errors';
import type { Answer } from '../../src/shadow/compare';
import type { Generated } from './generate';

/**
 * A written-down difference between the legacy host and our service for generated requests: Mono's
 * own (scripts/legacy/accepted-generated.ts, each with the .NET reference source that shows it) or,
 * while a branch fixes it, an open rule (open-rules.ts). Nothing else is accepted: a generated
 * request whose answers differ and that no rule covers fails the run.
 *
 * A rule is keyed by request features (the generator's tags: `path:nul`, `soap:xml-1.1`...) and/or
 * by the answers. A difference put down to a feature is checked: the same request without the
 * feature (its draw set to 0) must then agree, or differ only by another rule (run.ts), so that a
 * feature never hides a difference of its own.
 */
export interface Rule {
  name: string;
  /** The features it covers: a request with none of them is not its (empty: the answers decide). */
  features: string[];
  /** Whether the differing answers are the rule's (default: any difference of a request with the feature). */
  applies?: (g: Generated, legacy: Answer, ours: Answer) => boolean;
  /** What differs, and why it is accepted (or who is fixing it). */
  reason: string;
  /** The .NET reference source (Mono's own), or the issue and the branch (open rules). */
  evidence: string;
}

/** A tag's feature, without the draw that gave it. */
export const featureOf = (tag: string) => tag.replace(/@\d+$/, '');

/** The rules that cover these answers to this request, in the order given. */
export function rulesFor(rules: readonly Rule[], g: Generated, legacy: Answer, ours: Answer): Rule[] {
  const features = new Set(g.tags.map(featureOf));
  return rules.filter(
    (r) => (r.features.length === 0 || r.features.some((f) => features.has(f))) && (r.applies?.(g, legacy, ours) ?? r.features.length > 0),
  );
}

/** The draws that turned on the features these rules cover, set to 0: the request made without them (null: none to take away). */
export function drawsWithout(g: Generated, rules: readonly Rule[]): number[] | null {
  const covered = new Set(rules.flatMap((r) => r.features));
  const positions = new Set(g.tags.filter((t) => covered.has(featureOf(t))).map((t) => Number(/@(\d+)$/.exec(t)?.[1])));
  if (positions.size === 0) return null;
  return g.made.map((v, i) => (positions.has(i) ? 0 : v));
}

/** Helpers for `applies`. */
export const isSoap = (g: Generated) => g.binding === 'soap11' || g.binding === 'soap12';
export const isRuntimeErrorPage = (a: Answer) =>
  a.status >= 400 && /^text\/html\b/i.test(a.headers['content-type'] ?? '') && a.body.includes('Runtime Error');
/** Our answer is this page of IIS's or http.sys's, exactly (to HEAD without its body). */
export const isHostError = (g: Generated, a: Answer, e: HostError) =>
  a.status === e.status && a.headers['content-type'] === e.contentType && a.body === (g.c.method === 'HEAD' ? '' : e.body);
