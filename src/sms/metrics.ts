import client from 'prom-client';

/**
 * The SMS counters, on prom-client's default registry: the admin listener serves that registry
 * (aggregated over cluster workers), so nothing here knows about HTTP.
 */
function counter(name: string, help: string, labelNames: string[] = []) {
  const existing = client.register.getSingleMetric(name);
  return (existing as client.Counter | undefined) ?? new client.Counter({ name, help, labelNames });
}

function gauge(name: string, help: string, labelNames: string[] = []) {
  const existing = client.register.getSingleMetric(name);
  return (existing as client.Gauge | undefined) ?? new client.Gauge({ name, help, labelNames, aggregator: 'max' });
}

/** When the oldest pending code was queued (ms since the epoch), as the housekeeping last read it; null when none is. */
let oldestPendingAt: number | null = null;

/** The outbox's oldest pending code, as read by the housekeeping (an ISO time, or null for none). */
export function setOldestPending(createdAt: string | null): void {
  const at = createdAt === null ? NaN : Date.parse(createdAt);
  oldestPendingAt = Number.isNaN(at) ? null : at;
}

/**
 * Its age at each scrape, from the housekeeping's last reading (each minute): it grows between two
 * readings as the wait does, and a code sent meanwhile leaves it too high for a minute at most.
 */
function oldestPendingGauge(): client.Gauge {
  const name = 'asmx_sms_oldest_pending_seconds';
  return (
    (client.register.getSingleMetric(name) as client.Gauge | undefined) ??
    new client.Gauge({
      name,
      help: 'Age of the oldest code waiting to be sent (0 when none), from the outbox housekeeping of each minute',
      aggregator: 'max',
      collect() {
        this.set(oldestPendingAt === null ? 0 : Math.max(0, (Date.now() - oldestPendingAt) / 1000));
      },
    })
  );
}

export const smsMetrics = {
  accepted: counter('asmx_sms_requests_accepted_total', 'AuthCode requests queued for delivery'),
  refused: counter('asmx_sms_requests_refused_total', 'AuthCode requests not sent, by reason', ['reason']),
  limited: counter('asmx_sms_limits_hit_total', 'AuthCode requests refused by a rate limit, by limit', ['kind']),
  sent: counter('asmx_sms_sent_total', 'Messages the gateway accepted'),
  retries: counter('asmx_sms_retries_total', 'Failed sends scheduled for another attempt'),
  failed: counter('asmx_sms_failed_total', 'Messages given up after their last attempt or a final refusal'),
  resent: counter('asmx_sms_resent_total', "Messages sent again because the provider's answer to an earlier send was lost"),
  expired: counter('asmx_sms_expired_total', 'Codes not sent because they expired first (SMS_CODE_TTL_SECONDS)'),
  purged: counter('asmx_sms_purged_total', 'Delivered, failed and expired outbox rows deleted after SMS_RETENTION_DAYS'),
  saveFailed: counter(
    'asmx_sms_save_failed_total',
    'AuthCode requests the store could not queue (answered with a fault, so the app retries)',
  ),
  sending: gauge(
    'asmx_sms_sending',
    '1 when codes are sent by a gateway; 0 when they are queued, not sent (SMS_GATEWAY=none), or only logged (log)',
    ['gateway'],
  ),
  outbox: gauge('asmx_sms_outbox_messages', 'Messages in the outbox, by status', ['status']),
  oldestPending: oldestPendingGauge(),
  fallback: gauge(
    'asmx_sms_limiter_fallback',
    '1 while Redis is unreachable: full limit windows are remembered per process (the limits still hold in the store)',
  ),
};
