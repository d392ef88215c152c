import { escapeMarkup as e } from '../basics/escape';
import { maskPhone, maskText as mask } from '../basics/mask';
import { count, metricsPair, nameOf } from './charts';
import { total } from './samples';
import { PENDING_TOO_OLD_MS, span } from './verdict';
import type { ConsoleView } from './view';

const COUNTERS = [
  ['Accepted (queued)', 'asmx_sms_requests_accepted_total'],
  ['Sent (the provider took it)', 'asmx_sms_sent_total'],
  ['Retried', 'asmx_sms_retries_total'],
  ['Failed for good', 'asmx_sms_failed_total'],
  ['Expired before sending', 'asmx_sms_expired_total'],
] as const;

/** Gateway health in a word and why: what an operator checks first when parents say no code came. */
function health(v: ConsoleView): { ok: boolean; text: string } {
  const { sms, history: h, now } = v;
  if (sms.notSending !== undefined) return { ok: false, text: sms.notSending };
  if (sms.storeError !== null) return { ok: false, text: `the outbox cannot be read: ${sms.storeError}` };
  const waiting = sms.oldestPending === null ? 0 : now - Date.parse(sms.oldestPending);
  if (waiting > PENDING_TOO_OLD_MS) return { ok: false, text: `behind: the oldest code has waited ${span(waiting)}` };
  const sent = h.sum('asmx_sms_sent_total', now, 15);
  const trouble = h.sum('asmx_sms_retries_total', now, 15) + h.sum('asmx_sms_failed_total', now, 15);
  if (trouble > 0 && sent === 0)
    return { ok: false, text: `failing: ${count(trouble)} sends refused or lost in the last 15 minutes, none sent` };
  // Not a fault: the store keeps the limits; Redis only spared it the requests it refuses.
  const redis = total(v.samples, 'asmx_sms_limiter_fallback') > 0 ? '; Redis is unreachable (the limits still hold in the store)' : '';
  return {
    ok: true,
    text: `sending by ${v.config.sms.gateway}${trouble > 0 ? ` (${count(trouble)} retries or failures in the last 15 minutes)` : ''}${redis}`,
  };
}

/**
 * The SMS part: what was accepted, sent, retried and refused (from the metrics), what waits in the
 * outbox and since when, and the last failures. Phones are masked as the service's log masks them
 * (basics/log.ts maskPhone); codes are never read (the outbox's list has none) and any digits in a
 * provider's error are masked again as the shadow log masks them.
 */
export function smsSection(v: ConsoleView): string {
  const { history: h, now, sms } = v;
  const g = health(v);
  const row = (label: string, name: string, filter?: (l: Record<string, string>) => boolean) =>
    `<tr><td>${e(label)}</td><td>${count(h.sum(name, now, 60, filter))}</td><td>${count(h.sum(name, now, 1440, filter))}</td><td>${count(total(v.samples, name, {}))}</td></tr>`;
  const reasons = new Set(v.samples.filter((s) => s.name === 'asmx_sms_requests_refused_total').map((s) => s.labels.reason ?? ''));
  const refused = [...reasons]
    .sort()
    .map(
      (r) =>
        `<tr><td>Refused: ${e(nameOf(r))}</td><td>${count(h.sum('asmx_sms_requests_refused_total', now, 60, (l) => l.reason === r))}</td><td>${count(
          h.sum('asmx_sms_requests_refused_total', now, 1440, (l) => l.reason === r),
        )}</td><td>${count(total(v.samples, 'asmx_sms_requests_refused_total', { reason: r }))}</td></tr>`,
    )
    .join('');
  const c = sms.counts;
  const pendingAge = sms.oldestPending === null ? '' : `, the oldest queued ${span(now - Date.parse(sms.oldestPending))} ago`;
  const outbox =
    c === null
      ? `<p class="bad">The outbox cannot be read: ${e(sms.storeError ?? '')}</p>`
      : `<p id="sms-outbox">Outbox now: <b>${count(c.pending)} pending</b>${e(pendingAge)}; ${count(c.delivered)} delivered, ${count(c.failed)} failed, ${count(c.expired)} expired (rows kept for SMS_RETENTION_DAYS).</p>`;
  const failures = sms.failures
    .map(
      (f) =>
        `<tr><td>${f.id}</td><td class="text">${e(maskPhone(f.phone))}</td><td>${f.attempts}</td><td class="text">${e(f.failedAt ?? '')}</td><td class="text">${e(mask(f.lastError ?? ''))}</td></tr>`,
    )
    .join('');
  return `<h2 id="sms">SMS (AuthCode)</h2>
<p id="sms-health">Gateway: <span class="${g.ok ? 'ok' : 'bad'}">${e(g.text)}</span></p>
${outbox}
<table id="sms-table"><tr><th>Requests and messages</th><th>Last hour</th><th>Last day</th><th>Since start</th></tr>
${COUNTERS.map(([label, name]) => row(label, name)).join('')}${refused}</table>
<div class="charts">${metricsPair(h, now, 'Codes', COUNTERS)}</div>
<h3>Last failures</h3>
${failures === '' ? '<p class="meta">none</p>' : `<table id="sms-failures"><tr><th>Id</th><th>Phone</th><th>Attempts</th><th>Failed at</th><th>Last error</th></tr>${failures}</table>`}`;
}
