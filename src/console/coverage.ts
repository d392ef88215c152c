import { ENDPOINTS } from '../contract/operations';
import type { ConsoleView } from './view';

/**
 * The share of answered requests that must have been compared, overall and for each copied operation
 * with traffic, before the verdict may say "safe to switch": below it, what was not compared (copies
 * dropped, a legacy host that did not answer, SHADOW_SAMPLE below 1) could hide a difference.
 * 99%: a day of a school's traffic is thousands of requests; a few dropped in a burst leave it met,
 * a legacy host down for an hour does not.
 */
export const COVERAGE_MIN = 0.99;

/** Compared over answered, for one operation or all of them. */
export interface Share {
  operation: string;
  answered: number;
  compared: number;
}

export interface Coverage {
  overall: Share;
  /** Each copied operation with requests answered, by name. */
  operations: Share[];
}

/** The outcomes of asmx_shadow_exchanges_total that are a comparison. */
const COMPARED = new Set(['match', 'difference', 'noise']);
/** The console's history window the coverage is read over: the last day (since the process started, at most). */
const MINUTES = 1440;

/**
 * What was compared against what was answered, per operation that is copied (no effects, or named in
 * SHADOW_INCLUDE), over the console's history: both counted by this process's metrics (summed over
 * workers) since it started, the last day at most. The service pages (no operation) are left out.
 */
export function coverageOf(v: ConsoleView): Coverage {
  const include = v.config.shadow?.include ?? new Set<string>();
  const copied = new Set(
    ENDPOINTS.flatMap((ep) => ep.operations.filter((o) => o.effects !== true || include.has(o.name)).map((o) => o.name)),
  );
  const answered = v.history.totals('asmx_requests_total', v.now, MINUTES, 'operation');
  const compared = v.history.totals('asmx_shadow_exchanges_total', v.now, MINUTES, 'operation', (l) => COMPARED.has(l.outcome));
  const operations = [...answered.entries()]
    .filter(([op, n]) => copied.has(op) && n > 0)
    .map(([operation, n]) => ({ operation, answered: n, compared: Math.min(n, compared.get(operation) ?? 0) }))
    .sort((a, b) => a.operation.localeCompare(b.operation));
  const sum = (k: 'answered' | 'compared') => operations.reduce((s, o) => s + o[k], 0);
  return { overall: { operation: '', answered: sum('answered'), compared: sum('compared') }, operations };
}

/** A share as the page says it: one decimal, never rounded up to 100% while one is missing. */
export function percent({ answered, compared }: Share): string {
  if (answered === 0) return '–';
  const p = Math.floor((compared / answered) * 1000) / 10;
  return `${p.toFixed(1)}%`;
}

export const thin = (s: Share): boolean => s.answered > 0 && s.compared < COVERAGE_MIN * s.answered;
