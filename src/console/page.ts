import { buildText } from '../basics/build-info';
import { escapeMarkup as e } from '../basics/escape';
import { chartPair, count, figure, ms, nameOf, WINDOWS } from './charts';
import { total } from './samples';
import { shadowSection } from './page-shadow';
import { smsSection } from './page-sms';
import type { Line } from './svg';
import { COVERAGE_MIN, type Coverage, percent } from './coverage';
import { judge } from './verdict';
import type { ConsoleView } from './view';

/** How often the browser reloads the page (a meta refresh: the page runs no script). */
export const REFRESH_SECONDS = 5;

export function renderPage(v: ConsoleView): string {
  const verdict = judge(v);
  const blockers = verdict.blockers.map((b) => `<li>${e(b)}</li>`).join('');
  const shadowing = v.config.shadow === null ? 'shadowing off' : `shadowing ${v.config.shadow.mode}`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<title>Cut-over console</title><link rel="stylesheet" href="/console.css"></head><body>
<h1>Cut-over console</h1>
<p class="meta">Student Information Service <span id="build">${e(buildText())}</span> · ${e(shadowing)} · ${v.config.workers === 1 ? 'one process' : `${v.config.workers} workers (summed)`} · ${e(new Date(v.now).toISOString())} · refreshes every ${REFRESH_SECONDS} s</p>
<div class="verdict ${verdict.go ? 'go' : 'wait'}" id="verdict"><b>${verdict.go ? 'Safe to switch' : 'Not yet'}:</b> ${e(verdict.line)}${coverageLine(verdict.coverage)}${blockers === '' ? '' : `<ul>${blockers}</ul>`}</div>
${trafficSection(v)}
${smsSection(v)}
${shadowSection(v)}
</body></html>
`;
}

/** The coverage beside the verdict: compared over answered, overall and per copied operation. */
function coverageLine(c: Coverage | null): string {
  if (c === null) return '';
  const ops = c.operations.map((o) => `${e(o.operation)} ${percent(o)} (${count(o.compared)} / ${count(o.answered)})`).join(', ');
  return `<p id="verdict-coverage">Coverage: ${percent(c.overall)} of the answered requests compared (${count(c.overall.compared)} / ${count(
    c.overall.answered,
  )}, last day; at least ${COVERAGE_MIN * 100}% overall and per operation)${ops === '' ? '' : `: ${ops}`}.</p>`;
}

const DAY = 1440;
const isError = (l: Record<string, string>) => Number(l.status) >= 500;

function trafficSection(v: ConsoleView): string {
  const { history: h, now } = v;
  const key = (l: Record<string, string>) => `${nameOf(l.operation)}\n${nameOf(l.binding)}`;
  const hour = h.totals('asmx_requests_total', now, 60, key);
  const day = h.totals('asmx_requests_total', now, DAY, key);
  const hourErr = h.totals('asmx_requests_total', now, 60, key, isError);
  const dayErr = h.totals('asmx_requests_total', now, DAY, key, isError);
  const rows = [...day.keys()]
    .sort()
    .map((k) => {
      const [op, binding] = k.split('\n');
      const err = (m: Map<string, number>) => {
        const n = m.get(k) ?? 0;
        return `<td${n > 0 ? ' class="bad"' : ''}>${count(n)}</td>`;
      };
      return `<tr><td>${e(op)}</td><td class="text">${e(binding)}</td><td>${count(hour.get(k) ?? 0)}</td>${err(hourErr)}<td>${count(day.get(k) ?? 0)}</td>${err(dayErr)}</tr>`;
    })
    .join('');
  const since = total(v.samples, 'asmx_requests_total');
  const latency = WINDOWS.map((w) => {
    const lines: Line[] = [0.5, 0.99].map((q) => ({
      name: q === 0.5 ? 'median' : '99th percentile',
      values: h.quantiles(q, now, w.count, w.step).map((s) => (s === null ? null : Number.isFinite(s) ? s * 1000 : 10_000)),
    }));
    return figure(lines, `Latency (at most, by histogram bucket), ${w.per}`, w.name, undefined, ms);
  }).join('');
  return `<h2 id="traffic">Traffic</h2>
<p>${count(since)} requests answered since this process started.</p>
<table id="traffic-table"><tr><th>Operation</th><th>Binding</th><th>Last hour</th><th>Errors</th><th>Last day</th><th>Errors</th></tr>
${rows === '' ? '<tr><td colspan="6">no request yet</td></tr>' : rows}</table>
<p class="meta">Errors: answers with a status of 500 or more (SOAP faults, error texts, server errors).</p>
<div class="charts">${chartPair(h, now, 'asmx_requests_total', 'Requests by operation', 'operation')}${chartPair(h, now, 'asmx_requests_total', 'Requests by binding', 'binding')}</div>
<div class="charts">${chartPair(h, now, 'asmx_requests_total', 'Errors by operation', 'operation', isError)}${latency}</div>`;
}
