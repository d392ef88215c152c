import { isSupportedCountry } from 'libphonenumber-js/max';
import type { AddressRange } from '../basics/address';
import { absoluteUrl, addressRanges, ConfigError, type Getter, gotScheme, nonEmpty, oneOf, wholeNumber } from './parse';

/** `none` (the default) queues codes and sends nothing; `log` writes them to the log, for development. */
export type SmsGatewayKind = 'none' | 'log' | 'http' | 'twilio';

/** The settings the SMS side reads (Redis's and Twilio's among them), in the README's order. */
export const SMS_SETTINGS = [
  'SMS_GATEWAY',
  'SMS_DEFAULT_REGION',
  'SMS_ALLOWED_COUNTRIES',
  'SMS_CODE_TTL_SECONDS',
  'SMS_TEMPLATE',
  'SMS_MAX_ATTEMPTS',
  'SMS_RETRY_BASE_MS',
  'SMS_LIMIT_PER_PHONE',
  'SMS_LIMIT_PER_ADDRESS',
  'SMS_LIMIT_EXEMPT',
  'SMS_LIMIT_GLOBAL_PER_MINUTE',
  'SMS_LIMIT_GLOBAL_PER_HOUR',
  'SMS_LIMIT_GLOBAL_PER_DAY',
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'SMS_RETENTION_DAYS',
  'SMS_FAILED_HOLD_MINUTES',
  'SMS_LEASE_MS',
  'SMS_POLL_MS',
  'SMS_HTTP_URL',
  'SMS_HTTP_METHOD',
  'SMS_HTTP_HEADERS',
  'SMS_HTTP_BODY',
  'SMS_HTTP_FORMAT',
  'SMS_HTTP_TIMEOUT_MS',
  'SMS_HTTP_IDEMPOTENCY_HEADER',
  'TWILIO_ACCOUNT_SID',
  'TWILIO_AUTH_TOKEN',
  'TWILIO_FROM',
  'TWILIO_API_URL',
] as const;
type SmsSetting = (typeof SMS_SETTINGS)[number];

/** How AuthCode requests become text messages: see docs/sms.md. */
export interface SmsConfig {
  gateway: SmsGatewayKind;
  /** ISO region for numbers written without a country code, or null: such numbers are refused. */
  defaultRegion: string | null;
  /**
   * ISO regions a number may belong to: SMS_ALLOWED_COUNTRIES, else SMS_DEFAULT_REGION's; empty for
   * any (SMS_ALLOWED_COUNTRIES=*, or neither set while nothing is sent).
   */
  allowedCountries: readonly string[];
  template: string;
  /** A code older than this is never sent: it is marked expired and erased. */
  codeTtlSeconds: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** How long a claimed message belongs to one dispatcher; longer than any send may take. */
  leaseMs: number;
  pollMs: number;
  retentionDays: number;
  /** How long a failed message keeps its code for an operator's retry; 0 erases it at once. */
  failedHoldMinutes: number;
  perPhonePerHour: number;
  perAddressPerHour: number;
  /** Callers the per-address limit does not count (an application server calling from its back end). */
  limitExempt: readonly AddressRange[];
  globalPerMinute: number;
  globalPerHour: number;
  globalPerDay: number;
  /** Shared counters across processes, or null for per-process ones. */
  redisUrl: string | null;
  redisKeyPrefix: string;
  http: SmsHttpConfig;
}

export interface SmsHttpConfig {
  url: string;
  method: string;
  headers: Readonly<Record<string, string>>;
  /** A template of the request body with {phone}, {message}, {code}, {unicode}, {ucs2}. */
  body: string;
  format: 'json' | 'form';
  timeoutMs: number;
  /** The header that carries each message's idempotency key (the same on every attempt), or '' for none. */
  idempotencyHeader: string;
}

function region(name: string, value: string): string {
  const code = value.trim().toUpperCase();
  if (!isSupportedCountry(code)) throw new ConfigError(`${name} must be ISO 3166 country codes such as IQ, got "${value}"`);
  return code;
}

function redisUrl(value: string): string {
  if (!/^rediss?:\/\/\S+$/.test(value) || !URL.canParse(value)) {
    // The value is not echoed: it may hold a password.
    const got = /^rediss?:\/\//.test(value) ? 'got an address that is not a URL' : gotScheme(value);
    throw new ConfigError(`REDIS_URL must be a URL such as redis://127.0.0.1:6379 (scheme redis or rediss), ${got}`);
  }
  return value;
}

function headers(value: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    // Not echoed: headers usually carry an API key.
    throw new ConfigError('SMS_HTTP_HEADERS must be a JSON object of strings, such as {"Authorization":"Bearer ..."}');
  }
  return parsed as Record<string, string>;
}

/** Which numbers may be texted: SMS_ALLOWED_COUNTRIES, else the default region's; a sending gateway needs one. */
function countries(get: Getter<SmsSetting>, gateway: SmsGatewayKind, defaultRegion: string | null): string[] {
  const allowed = get('SMS_ALLOWED_COUNTRIES', '').trim();
  if (allowed === '*') return [];
  if (allowed !== '') return allowed.split(',').map((c) => region('SMS_ALLOWED_COUNTRIES', c));
  if (defaultRegion !== null) return [defaultRegion];
  if (gateway === 'http' || gateway === 'twilio') {
    // Texting any country by default is what SMS pumping lives on: the operator names them.
    throw new ConfigError(
      `SMS_GATEWAY=${gateway} needs SMS_DEFAULT_REGION or SMS_ALLOWED_COUNTRIES (ISO codes such as IQ, or * for any country)`,
    );
  }
  return [];
}

const DEFAULT_BODY = { json: '{"to":"{phone}","message":"{message}"}', form: 'to={phone}&message={message}' } as const;

export function loadSms(get: Getter<SmsSetting>): SmsConfig {
  const count = (name: SmsSetting, fallback: number, min = 1) => wholeNumber(name, get(name, String(fallback)), min, 999_999_999);
  const gateway = oneOf('SMS_GATEWAY', get('SMS_GATEWAY', 'none'), ['none', 'log', 'http', 'twilio'] as const);
  const defaultRegion = get('SMS_DEFAULT_REGION', '') === '' ? null : region('SMS_DEFAULT_REGION', get('SMS_DEFAULT_REGION', ''));
  const template = nonEmpty('SMS_TEMPLATE', get('SMS_TEMPLATE', 'Your verification code is {code}'));
  if (!template.includes('{code}')) throw new ConfigError('SMS_TEMPLATE must contain {code}');
  const redis = get('REDIS_URL', '');
  // The gateway's own settings first: their messages say what is missing before the countries do.
  const http = loadSmsHttp(get, gateway);
  const sms: SmsConfig = {
    gateway,
    defaultRegion,
    allowedCountries: countries(get, gateway, defaultRegion),
    template,
    codeTtlSeconds: wholeNumber('SMS_CODE_TTL_SECONDS', get('SMS_CODE_TTL_SECONDS', '600'), 1, 86_400),
    maxAttempts: count('SMS_MAX_ATTEMPTS', 8),
    retryBaseMs: count('SMS_RETRY_BASE_MS', 2000),
    leaseMs: count('SMS_LEASE_MS', 60_000),
    pollMs: count('SMS_POLL_MS', 1000),
    retentionDays: count('SMS_RETENTION_DAYS', 30),
    failedHoldMinutes: count('SMS_FAILED_HOLD_MINUTES', 60, 0),
    perPhonePerHour: count('SMS_LIMIT_PER_PHONE', 5),
    perAddressPerHour: count('SMS_LIMIT_PER_ADDRESS', 20),
    limitExempt: addressRanges('SMS_LIMIT_EXEMPT', get('SMS_LIMIT_EXEMPT', '')),
    globalPerMinute: count('SMS_LIMIT_GLOBAL_PER_MINUTE', 60),
    globalPerHour: count('SMS_LIMIT_GLOBAL_PER_HOUR', 1000),
    globalPerDay: count('SMS_LIMIT_GLOBAL_PER_DAY', 5000),
    redisUrl: redis === '' ? null : redisUrl(redis),
    redisKeyPrefix: get('REDIS_KEY_PREFIX', 'asmx:sms:'),
    http,
  };
  if (sms.leaseMs <= sms.http.timeoutMs) {
    throw new ConfigError(`SMS_LEASE_MS must be longer than SMS_HTTP_TIMEOUT_MS (${sms.http.timeoutMs}), got "${sms.leaseMs}"`);
  }
  return sms;
}

/** The generic HTTP gateway, or the Twilio preset expressed in its terms. */
function loadSmsHttp(get: Getter<SmsSetting>, gateway: SmsGatewayKind): SmsHttpConfig {
  const timeoutMs = wholeNumber('SMS_HTTP_TIMEOUT_MS', get('SMS_HTTP_TIMEOUT_MS', '10000'), 1, 600_000);
  if (gateway === 'twilio') {
    const required = (name: SmsSetting) => {
      const value = get(name, '');
      if (value.trim() === '') throw new ConfigError(`${name} must be set when SMS_GATEWAY=twilio`);
      return value;
    };
    const accountSid = required('TWILIO_ACCOUNT_SID');
    if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid))
      throw new ConfigError(`TWILIO_ACCOUNT_SID must be AC followed by 32 hex digits, got "${accountSid}"`);
    return twilioPreset({
      accountSid,
      authToken: required('TWILIO_AUTH_TOKEN'),
      from: required('TWILIO_FROM'),
      apiUrl: absoluteUrl('TWILIO_API_URL', get('TWILIO_API_URL', 'https://api.twilio.com')).replace(/\/+$/, ''),
      timeoutMs,
    });
  }
  const format = oneOf('SMS_HTTP_FORMAT', get('SMS_HTTP_FORMAT', 'json'), ['json', 'form'] as const);
  const url = get('SMS_HTTP_URL', '');
  if (gateway === 'http' && url === '') throw new ConfigError('SMS_HTTP_URL must be set when SMS_GATEWAY=http');
  const body = get('SMS_HTTP_BODY', DEFAULT_BODY[format]);
  if (format === 'json') {
    try {
      JSON.parse(body.replace(/\{(phone|message|code|unicode|ucs2|key)\}/g, 'x'));
    } catch {
      throw new ConfigError(`SMS_HTTP_BODY must be JSON (placeholders inside strings) when SMS_HTTP_FORMAT=json, got "${body}"`);
    }
  }
  const idempotencyHeader = get('SMS_HTTP_IDEMPOTENCY_HEADER', 'Idempotency-Key').trim();
  if (idempotencyHeader !== '' && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(idempotencyHeader)) {
    throw new ConfigError(`SMS_HTTP_IDEMPOTENCY_HEADER must be an HTTP header name or empty, got "${idempotencyHeader}"`);
  }
  return {
    url: url === '' ? '' : absoluteUrl('SMS_HTTP_URL', url, true),
    method: oneOf('SMS_HTTP_METHOD', get('SMS_HTTP_METHOD', 'POST').toUpperCase(), ['POST', 'PUT'] as const),
    headers: headers(get('SMS_HTTP_HEADERS', '{}')),
    body,
    format,
    timeoutMs,
    idempotencyHeader,
  };
}

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
