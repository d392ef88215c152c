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

export const smsMetrics = {
  accepted: counter('asmx_sms_requests_accepted_total', 'AuthCode requests queued for delivery'),
  refused: counter('asmx_sms_requests_refused_total', 'AuthCode requests not sent, by reason', ['reason']),
  limited: counter('asmx_sms_limits_hit_total', 'AuthCode requests refused by a rate limit, by limit', ['kind']),
  sent: counter('asmx_sms_sent_total', 'Messages the gateway accepted'),
  retries: counter('asmx_sms_retries_total', 'Failed sends scheduled for another attempt'),
  failed: counter('asmx_sms_failed_total', 'Messages given up after their last attempt or a final refusal'),
  outbox: gauge('asmx_sms_outbox_messages', 'Messages in the outbox, by status', ['status']),
  fallback: gauge('asmx_sms_limiter_fallback', '1 while Redis is unreachable and limits are per process'),
};
