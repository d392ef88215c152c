import { isSupportedCountry } from 'libphonenumber-js/max';
import { twilioPreset } from './sms/gateways/twilio';

/**
 * Configuration from the environment, validated once at start. A bad value is a ConfigError whose
 * message is one line naming the variable; main turns it into exit code 1.
 */
export interface Config {
  port: number;
  host: string;
  /** The service namespace: WSDL targetNamespace, SOAPAction prefix, response elements. */
  xmlNamespace: string;
  /** An IIS virtual directory such as `/StudentService`, or '' for the site root. */
  basePath: string;
  /** Fixed public address (scheme://host[:port][/path]) used in WSDL addresses, or null. */
  publicUrl: string | null;
  /** Take scheme and host from X-Forwarded-Proto / X-Forwarded-Host. */
  trustProxy: boolean;
  sqlitePath: string;
  /** A postgres:// URL: PostgreSQL instead of SQLite, or null for the embedded store. */
  databaseUrl: string | null;
  databasePoolSize: number;
  /** Bounds every PostgreSQL statement (and the wait for a connection), so no request waits forever. */
  databaseStatementTimeoutMs: number;
  limits: Limits;
  sms: SmsConfig;
}

export type SmsGatewayKind = 'log' | 'http' | 'twilio';

/** How AuthCode requests become text messages: see the README's SMS section. */
export interface SmsConfig {
  gateway: SmsGatewayKind;
  /** ISO region for numbers written without a country code, or null: such numbers are refused. */
  defaultRegion: string | null;
  /** ISO regions a number may belong to; empty for any. */
  allowedCountries: readonly string[];
  template: string;
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
  globalPerMinute: number;
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
}

/** What one request may cost; see the README's security section for the answer each one gives. */
export interface Limits {
  /** A request body, before and after decompression (ASP.NET's maxRequestLength). */
  maxBodyBytes: number;
  /** The query string (IIS request filtering's maxQueryString). */
  maxQueryBytes: number;
  /** The URL without its query string (IIS request filtering's maxUrl). */
  maxUrlBytes: number;
  /** The request line and headers together (http.sys's MaxRequestBytes). */
  maxHeaderBytes: number;
  /** Time to receive a whole request, headers and body. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open; longer than the front's own idle time-out. */
  keepAliveTimeoutMs: number;
  maxXmlDepth: number;
  maxXmlElements: number;
  /** Distinct names in a query string or form (ASP.NET's MaxHttpCollectionKeys). */
  maxFormKeys: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function port(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new ConfigError(`PORT must be a whole number from 0 to 65535, got "${value}"`);
  }
  return Number(value);
}

function absoluteUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http or https URL, got "${value}"`);
  }
  return value;
}

/** ASMX accepts any absolute URI as a namespace (http://tempuri.org/, urn:school:v1, ...). */
function namespaceUri(value: string): string {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(value)) {
    throw new ConfigError(`XML_NAMESPACE must be an absolute URI such as http://tempuri.org/, got "${value}"`);
  }
  return value;
}

function basePath(value: string): string {
  const trimmed = value.replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$/.test(trimmed)) {
    throw new ConfigError(`BASE_PATH must be a path such as /StudentService, got "${value}"`);
  }
  return trimmed;
}

function flag(name: string, value: string): boolean {
  const v = value.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

function postgresUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // fall through: the value is not echoed, it may hold a password
  }
  if (url === undefined || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    throw new ConfigError('DATABASE_URL must be a URL such as postgres://user:password@host:5432/database');
  }
  return value;
}

function wholeNumber(name: string, value: string, min: number, max: number): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
}

function host(value: string): string {
  if (value.trim() === '' || /\s/.test(value)) throw new ConfigError(`HOST must be a host name or address, got "${value}"`);
  return value;
}

function nonEmpty(name: string, value: string): string {
  if (value.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const get = (name: string, fallback: string) => env[name] ?? fallback;
  const publicUrl = env.PUBLIC_URL;
  const databaseUrl = env.DATABASE_URL;
  return {
    port: port(get('PORT', '8080')),
    host: host(get('HOST', '0.0.0.0')),
    xmlNamespace: namespaceUri(get('XML_NAMESPACE', 'http://tempuri.org/')),
    basePath: basePath(get('BASE_PATH', '')),
    publicUrl: publicUrl === undefined || publicUrl === '' ? null : absoluteUrl('PUBLIC_URL', publicUrl).replace(/\/+$/, ''),
    trustProxy: flag('TRUST_PROXY', get('TRUST_PROXY', 'false')),
    sqlitePath: nonEmpty('SQLITE_PATH', get('SQLITE_PATH', './data/student-info.db')),
    databaseUrl: databaseUrl === undefined || databaseUrl === '' ? null : postgresUrl(databaseUrl),
    databasePoolSize: wholeNumber('DATABASE_POOL_SIZE', get('DATABASE_POOL_SIZE', '10'), 1, 1000),
    databaseStatementTimeoutMs: wholeNumber('DATABASE_STATEMENT_TIMEOUT_MS', get('DATABASE_STATEMENT_TIMEOUT_MS', '5000'), 1, 3_600_000),
    limits: loadLimits(get),
    sms: loadSms(get),
  };
}

function loadLimits(get: (name: string, fallback: string) => string): Limits {
  const limit = (name: string, fallback: number) => wholeNumber(name, get(name, String(fallback)), 1, 999_999_999);
  return {
    maxBodyBytes: limit('MAX_BODY_BYTES', 4 * 1024 * 1024),
    maxQueryBytes: limit('MAX_QUERY_BYTES', 2048),
    maxUrlBytes: limit('MAX_URL_BYTES', 4096),
    maxHeaderBytes: limit('MAX_HEADER_BYTES', 16 * 1024),
    requestTimeoutMs: limit('REQUEST_TIMEOUT_MS', 30_000),
    keepAliveTimeoutMs: limit('KEEPALIVE_TIMEOUT_MS', 65_000),
    maxXmlDepth: limit('MAX_XML_DEPTH', 64),
    maxXmlElements: limit('MAX_XML_ELEMENTS', 10_000),
    maxFormKeys: limit('MAX_FORM_KEYS', 1000),
  };
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}

function region(name: string, value: string): string {
  const code = value.trim().toUpperCase();
  if (!isSupportedCountry(code)) throw new ConfigError(`${name} must be ISO 3166 country codes such as IQ, got "${value}"`);
  return code;
}

function redisUrl(value: string): string {
  if (!/^rediss?:\/\/\S+$/.test(value) || !URL.canParse(value)) {
    // The value is not echoed: it may hold a password.
    throw new ConfigError('REDIS_URL must be a URL such as redis://127.0.0.1:6379');
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

const DEFAULT_BODY = { json: '{"to":"{phone}","message":"{message}"}', form: 'to={phone}&message={message}' } as const;

function loadSms(get: (name: string, fallback: string) => string): SmsConfig {
  const count = (name: string, fallback: number, min = 1) => wholeNumber(name, get(name, String(fallback)), min, 999_999_999);
  const gateway = oneOf('SMS_GATEWAY', get('SMS_GATEWAY', 'log'), ['log', 'http', 'twilio'] as const);
  const defaultRegion = get('SMS_DEFAULT_REGION', '');
  const allowed = get('SMS_ALLOWED_COUNTRIES', '');
  const template = nonEmpty('SMS_TEMPLATE', get('SMS_TEMPLATE', 'Your verification code is {code}'));
  if (!template.includes('{code}')) throw new ConfigError('SMS_TEMPLATE must contain {code}');
  const redis = get('REDIS_URL', '');
  const sms: SmsConfig = {
    gateway,
    defaultRegion: defaultRegion === '' ? null : region('SMS_DEFAULT_REGION', defaultRegion),
    allowedCountries: allowed.trim() === '' ? [] : allowed.split(',').map((c) => region('SMS_ALLOWED_COUNTRIES', c)),
    template,
    maxAttempts: count('SMS_MAX_ATTEMPTS', 8),
    retryBaseMs: count('SMS_RETRY_BASE_MS', 2000),
    leaseMs: count('SMS_LEASE_MS', 60_000),
    pollMs: count('SMS_POLL_MS', 1000),
    retentionDays: count('SMS_RETENTION_DAYS', 30),
    failedHoldMinutes: count('SMS_FAILED_HOLD_MINUTES', 60, 0),
    perPhonePerHour: count('SMS_LIMIT_PER_PHONE', 5),
    perAddressPerHour: count('SMS_LIMIT_PER_ADDRESS', 20),
    globalPerMinute: count('SMS_LIMIT_GLOBAL_PER_MINUTE', 60),
    redisUrl: redis === '' ? null : redisUrl(redis),
    redisKeyPrefix: get('REDIS_KEY_PREFIX', 'asmx:sms:'),
    http: loadSmsHttp(get, gateway),
  };
  if (sms.leaseMs <= sms.http.timeoutMs) {
    throw new ConfigError(`SMS_LEASE_MS must be longer than SMS_HTTP_TIMEOUT_MS (${sms.http.timeoutMs}), got "${sms.leaseMs}"`);
  }
  return sms;
}

/** The generic HTTP gateway, or the Twilio preset expressed in its terms. */
function loadSmsHttp(get: (name: string, fallback: string) => string, gateway: SmsGatewayKind): SmsHttpConfig {
  const timeoutMs = wholeNumber('SMS_HTTP_TIMEOUT_MS', get('SMS_HTTP_TIMEOUT_MS', '10000'), 1, 600_000);
  if (gateway === 'twilio') {
    const required = (name: string) => {
      const value = get(name, '');
      if (value.trim() === '') throw new ConfigError(`${name} must be set when SMS_GATEWAY=twilio`);
      return value;
    };
    const accountSid = required('TWILIO_ACCOUNT_SID');
    if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid)) throw new ConfigError(`TWILIO_ACCOUNT_SID must be AC followed by 32 hex digits, got "${accountSid}"`);
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
      JSON.parse(body.replace(/\{(phone|message|code|unicode|ucs2)\}/g, 'x'));
    } catch {
      throw new ConfigError(`SMS_HTTP_BODY must be JSON (placeholders inside strings) when SMS_HTTP_FORMAT=json, got "${body}"`);
    }
  }
  return {
    url: url === '' ? '' : absoluteUrl('SMS_HTTP_URL', url),
    method: oneOf('SMS_HTTP_METHOD', get('SMS_HTTP_METHOD', 'POST').toUpperCase(), ['POST', 'PUT'] as const),
    headers: headers(get('SMS_HTTP_HEADERS', '{}')),
    body,
    format,
    timeoutMs,
  };
}
