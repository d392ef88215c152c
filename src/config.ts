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
