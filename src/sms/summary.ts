import type { SmsConfig } from '../config';

const countries = (c: SmsConfig): string => (c.allowedCountries.length === 0 ? 'any country' : c.allowedCountries.join(', '));
const ttl = (c: SmsConfig): string => (c.codeTtlSeconds % 60 === 0 ? `${c.codeTtlSeconds / 60} min` : `${c.codeTtlSeconds} s`);

/** The SMS part of the start line: where codes go, to which countries, how long they live. */
export function smsSummary(c: SmsConfig): string {
  const where =
    c.gateway === 'none'
      ? 'codes are queued, not sent (no gateway: set SMS_GATEWAY)'
      : c.gateway === 'log'
        ? 'codes are written to the log, not sent (SMS_GATEWAY=log, for development)'
        : `codes sent by ${c.gateway}`;
  return `SMS: ${where}; to ${countries(c)}; codes expire after ${ttl(c)}`;
}

/** What /readyz adds for an operator while the service is ready but no code reaches a phone. */
export function smsReadiness(c: SmsConfig): string | undefined {
  if (c.gateway === 'none') return 'SMS: codes are queued, not sent: no gateway is configured (SMS_GATEWAY=none)';
  if (c.gateway === 'log') return 'SMS: codes are written to the log, not sent (SMS_GATEWAY=log)';
  return undefined;
}
