import { escapeMarkup as e } from '../basics/escape';
import type { Answer } from '../shadow/compare';
import type { DifferenceLine } from '../shadow/report';
import { chartPair, count, nameOf } from './charts';
import { total } from './samples';
import type { ConsoleView } from './view';

/** The outcomes of asmx_shadow_exchanges_total in the table's order, as the table heads them. */
const OUTCOMES = [
  ['match', 'Matched'],
  ['difference', 'Real differences'],
  ['noise', 'Noise'],
  ['legacy_error', 'Legacy no answer'],
  ['service_error', 'Service no answer'],
  ['dropped', 'Dropped'],
] as const;
const COMPARED = new Set(['match', 'difference', 'noise']);
/** Why copies were dropped (the `reason` of `dropped`, shadow/metrics.ts), as the page says it. */
const DROP_REASONS = [
  ['sampled', 'sampled while the copier was behind'],
  ['queue', 'SHADOW_QUEUE full'],
  ['bytes', 'over SHADOW_QUEUE_BYTES'],
  ['answer_bytes', 'answer over the cap, not compared'],
  ['copier_exit', 'copier ended'],
  ['stop', 'service stopped first'],
] as const;
/** A body shown side by side is cut here: the log keeps 64 KB, a screen shows far less. */
const SHOWN = 16 * 1024;

/**
 * The shadowing part: per operation what was compared and how it came out (the last day, from the
 * console's history), compared and differing requests over time, and the latest differences from the
 * differences log with the legacy and the new answer side by side (as the log masked them).
 */
export function shadowSection(v: ConsoleView): string {
  const shadow = v.config.shadow;
  if (shadow === null || v.shadow === null) {
    return `<h2 id="shadowing">Shadowing</h2><p>Off: set <code>SHADOW_URL</code> to the legacy site to compare every answer with its (docs/shadow.md).</p>`;
  }
  const { history: h, now } = v;
  const t = v.shadow.totals;
  const day = h.totals('asmx_shadow_exchanges_total', now, 1440, (l) => `${nameOf(l.operation)}\n${l.outcome}`);
  const ops = [...new Set([...day.keys()].map((k) => k.split('\n')[0]))].sort();
  const rows = ops
    .map((op) => {
      const cells = OUTCOMES.map(([o]) => {
        const n = day.get(`${op}\n${o}`) ?? 0;
        return `<td${n > 0 && o === 'difference' ? ' class="bad"' : ''}>${count(n)}</td>`;
      });
      return `<tr><td>${e(op)}</td>${cells.join('')}</tr>`;
    })
    .join('');
  const secondary =
    shadow.secondaryUrl === null
      ? 'No second legacy site (SHADOW_URL_SECONDARY): every difference counts as real.'
      : `Noise rule on: a difference the second legacy site ${site(shadow.secondaryUrl)} also shows against the first counts as noise.`;
  const since = t.since === null ? 'none compared yet' : `since ${t.since}`;
  return `<h2 id="shadowing">Shadowing</h2>
<p>${e(shadow.mode)}: each request also goes to ${e(site(shadow.url))}. ${e(secondary)}</p>
<p id="shadow-totals">${count(t.compared)} compared, ${count(t.compared - t.real - t.noise)} matched, <span class="${t.real > 0 ? 'bad' : 'ok'}">${count(
    t.real,
  )} real differences</span>, ${count(t.noise)} noise (${e(since)}; kept in the store, across restarts).
Since this process started: ${count(total(v.samples, 'asmx_shadow_exchanges_total', { outcome: 'legacy_error' }))} without a legacy answer, ${dropped(v)}.</p>
<table id="shadow-table"><tr><th>Operation (last day)</th>${OUTCOMES.map(([, head]) => `<th>${head}</th>`).join('')}</tr>
${rows === '' ? `<tr><td colspan="${OUTCOMES.length + 1}">nothing compared yet</td></tr>` : rows}</table>
<div class="charts">${chartPair(h, now, 'asmx_shadow_exchanges_total', 'Compared by operation', 'operation', (l) => COMPARED.has(l.outcome))}${chartPair(
    h,
    now,
    'asmx_shadow_exchanges_total',
    'Real differences by operation',
    'operation',
    (l) => l.outcome === 'difference',
  )}</div>
<h3>Latest differences</h3>
${shadow.log === null ? '' : logged(v)}
${v.shadow.latest.length === 0 ? `<p class="meta">none in the log${shadow.log === null ? ' (SHADOW_LOG is off: differences are counted only)' : ''}</p>` : v.shadow.latest.map(difference).join('')}`;
}

/** Copies dropped since this process started, with the reasons there were any for (bytes held: SHADOW_QUEUE_BYTES). */
function dropped(v: ConsoleView): string {
  const n = total(v.samples, 'asmx_shadow_exchanges_total', { outcome: 'dropped' });
  const why = DROP_REASONS.map(
    ([reason, said]) => [total(v.samples, 'asmx_shadow_exchanges_total', { outcome: 'dropped', reason }), said] as const,
  )
    .filter(([k]) => k > 0)
    .map(([k, said]) => `${count(k)} ${e(said)}`);
  const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
  const held = total(v.samples, 'asmx_shadow_held_bytes');
  const limit = v.config.shadow?.queueBytes ?? 0;
  return `<span id="shadow-dropped">${count(n)} dropped${why.length === 0 ? '' : ` (${why.join(', ')})`}</span>; copies held now: ${mib(held)} (at most ${mib(limit)} a process)`;
}

/** Why a difference's line was not written (the `outcome` of asmx_shadow_log_lines_total, shadow/metrics.ts), as the page says it. */
const NOT_WRITTEN = [
  ['examples', 'past SHADOW_LOG_EXAMPLES of their kind this hour'],
  ['disk_floor', 'under the disk floor, SHADOW_LOG_KEEP_FREE'],
  ['budget', 'longer than a quarter of SHADOW_LOG_MAX_BYTES'],
  ['busy', 'the disk behind'],
  ['error', 'the file not writable'],
] as const;

/** The differences log's lines since this process started, written or not and why, and what it takes of its budget. */
function logged(v: ConsoleView): string {
  const n = (outcome: string) => total(v.samples, 'asmx_shadow_log_lines_total', { outcome });
  const why = NOT_WRITTEN.map(([outcome, said]) => [n(outcome), said] as const).filter(([k]) => k > 0);
  const not = why.reduce((a, [k]) => a + k, 0);
  // Each worker says the size it last heard of the one log: the largest, not their sum.
  const bytes = Math.max(0, ...v.samples.filter((s) => s.name === 'asmx_shadow_log_bytes').map((s) => s.value));
  const mib = (b: number) => `${(b / 1048576).toFixed(1)} MiB`;
  const notWritten =
    not === 0
      ? ''
      : `, ${count(not)} not (${why.map(([k, said]) => `${count(k)} ${e(said)}`).join(', ')}; counted, and written as tallies in the log)`;
  return `<p id="shadow-log" class="meta">Differences log since this process started: ${count(n('written'))} lines written${notWritten}. It takes ${mib(bytes)} of ${mib(v.config.shadow?.logMaxBytes ?? 0)} (SHADOW_LOG_MAX_BYTES).</p>`;
}

/** A legacy site's address without any user name or password in it. */
function site(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
}

function difference(d: DifferenceLine): string {
  const kinds = d.differences.map((x) => `<li>${e(x.kind)}${x.detail === '' ? '' : `: ${e(x.detail)}`}</li>`).join('');
  const [legacy, ours] = sideBySide(d.legacy, d.ours);
  return `<div class="difference${d.noise === true ? ' noise' : ''}">
<p><b>${e(nameOf(d.operation))}</b> over ${e(nameOf(d.binding))} · ${e(d.time ?? '')}${d.noise === true ? ' · <b>noise</b> (the legacy sites differ the same way)' : ''} · <code>${e(d.request.method)} ${e(d.request.url)}</code></p>
<ul>${kinds}</ul>
<div class="side"><div><h4>Legacy: ${e(head(d.legacy))}</h4><pre class="legacy">${legacy}</pre></div><div><h4>This service: ${e(head(d.ours))}</h4><pre class="ours">${ours}</pre></div></div>
</div>`;
}

const head = (a: Answer) => `${a.status} ${a.headers['content-type'] ?? ''}`;

/** XML one element a line, so that the two sides can be read line against line. */
const lines = (body: string) => (body.length > SHOWN ? `${body.slice(0, SHOWN)}…` : body).replace(/>\s*</g, '>\n<').split('\n');

/** Both bodies, escaped, each line the other side lacks marked. */
function sideBySide(legacy: Answer, ours: Answer): [string, string] {
  const [l, o] = [lines(legacy.body), lines(ours.body)];
  const mark = (mine: string[], theirs: string[]) => {
    const other = new Set(theirs);
    return mine.map((line) => (other.has(line) ? e(line) : `<mark>${e(line)}</mark>`)).join('\n');
  };
  return [mark(l, o), mark(o, l)];
}
