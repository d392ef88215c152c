import type { SmsHttpConfig } from '../../config';

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  /** A sender number in E.164, an alphanumeric sender ID, or a Messaging Service SID (MG...). */
  from: string;
  /** https://api.twilio.com; another base only for a test double. */
  apiUrl: string;
  timeoutMs: number;
}

/**
 * Twilio's Messages API as a preset of the HTTP gateway: a form POST, UTF-8, with HTTP basic auth.
 * Twilio picks GSM-7 or UCS-2 itself from the text, so Arabic needs nothing more. Twilio documents
 * no idempotency key for creating a message (its error 20500 page: a retried SMS POST may deliver
 * twice), so none is sent: a resend after a lost answer may reach the phone twice (docs/sms.md).
 */
export function twilioPreset(s: TwilioSettings): SmsHttpConfig {
  const sender = s.from.startsWith('MG') ? `MessagingServiceSid=${encodeURIComponent(s.from)}` : `From=${encodeURIComponent(s.from)}`;
  return {
    url: `${s.apiUrl}/2010-04-01/Accounts/${s.accountSid}/Messages.json`,
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${s.accountSid}:${s.authToken}`).toString('base64')}` },
    body: `To={phone}&${sender}&Body={message}`,
    format: 'form',
    timeoutMs: s.timeoutMs,
    idempotencyHeader: '',
  };
}
