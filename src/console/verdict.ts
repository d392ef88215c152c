import { COVERAGE_MIN, type Coverage, coverageOf, percent, thin } from './coverage';
import type { ConsoleView } from './view';

/** A code waiting longer than this is a queue that does not drain (a sign-in code lives minutes). */
export const PENDING_TOO_OLD_MS = 60_000;

export interface Verdict {
  /** Nothing blocks the switch. */
  go: boolean;
  /** "N requests compared over D days, 0 real differences". */
  line: string;
  /** What blocks the switch, each in a line an operator can act on. */
  blockers: string[];
  /** Compared over answered, per copied operation (null with shadowing off). */
  coverage: Coverage | null;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A span of time as an operator says it: days once there is a day, else hours and minutes. */
export function span(ms: number): string {
  const day = 86_400_000;
  if (ms >= day) return `${(Math.floor((ms / day) * 10) / 10).toString()} days`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'less than a minute';
  return minutes < 60 ? plural(minutes, 'minute') : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * The one line the page leads with: is the switch safe? It is when requests were compared and none
 * differed for real (noise aside), the service is ready, and codes reach phones without failures
 * or a queue that does not drain. The SMS failures counted are those of the console's history (the
 * last day at most, since this process started).
 */
export function judge(v: ConsoleView): Verdict {
  const blockers: string[] = [];
  if (!v.ready.ready) blockers.push(`Not ready: ${v.ready.reason ?? 'unknown'}.`);
  let coverage: Coverage | null = null;
  let line = 'Shadowing is off: no request has been compared with the legacy host.';
  if (v.shadow === null) blockers.push("Shadowing is off (SHADOW_URL unset): nothing shows the answers are the legacy host's.");
  else {
    const t = v.shadow.totals;
    const over = t.since === null ? '' : ` over ${span(v.now - Date.parse(t.since))}`;
    line = `${plural(t.compared, 'request')} compared${over}, ${plural(t.real, 'real difference')}${t.noise > 0 ? ` (and ${t.noise} noise)` : ''}.`;
    if (v.shadow.totalsError != null) blockers.push(`The shadow totals cannot be read from the store: ${v.shadow.totalsError}.`);
    else if (t.compared === 0) blockers.push('No request compared yet: send traffic through the service (or wait for it).');
    if (t.real > 0) blockers.push(`${plural(t.real, 'real difference')} with the legacy host: see Shadowing below.`);
    coverage = coverageOf(v);
    blockers.push(...coverageBlockers(coverage));
  }
  if (v.sms.notSending !== undefined) blockers.push(`${v.sms.notSending}.`);
  if (v.sms.storeError !== null) blockers.push(`The outbox cannot be read: ${v.sms.storeError}.`);
  const lost = v.history.sum('asmx_sms_failed_total', v.now, 1440) + v.history.sum('asmx_sms_expired_total', v.now, 1440);
  if (lost > 0) blockers.push(`${plural(lost, 'code')} failed or expired in the last day: parents did not get them.`);
  if (v.sms.oldestPending !== null) {
    const waiting = v.now - Date.parse(v.sms.oldestPending);
    if (waiting > PENDING_TOO_OLD_MS) blockers.push(`A code has waited ${span(waiting)} to be sent: sending is behind.`);
  }
  return { go: blockers.length === 0, line, blockers, coverage };
}

/** Thin coverage, overall or of any operation with traffic, or none measured: no "safe to switch". */
function coverageBlockers(c: Coverage): string[] {
  const min = `${COVERAGE_MIN * 100}%`;
  if (c.overall.answered === 0)
    return ['No copied request answered since this process started: the coverage (compared / answered) is not measured yet.'];
  const out: string[] = [];
  if (thin(c.overall))
    out.push(
      `Coverage ${percent(c.overall)} (${c.overall.compared} of ${c.overall.answered} answered requests compared) is under ${min}: see Dropped and "without a legacy answer" below.`,
    );
  for (const op of c.operations)
    if (thin(op)) out.push(`${op.operation}: ${percent(op)} compared (${op.compared} of ${op.answered}), under ${min}.`);
  return out;
}
