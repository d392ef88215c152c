import { availableParallelism } from 'node:os';
import { ENDPOINTS } from './services/contract';

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
  /** pino's level names; `silent` turns logging off. */
  logLevel: LogLevel;
  /** The admin listener (/metrics, /healthz, /readyz); port 0 turns it off. */
  adminPort: number;
  adminHost: string;
  /** How long in-flight requests may take to finish after SIGTERM before the process gives up. */
  shutdownTimeoutMs: number;
  /** Processes serving the one port (node cluster); 1 runs without a cluster primary. */
  workers: number;
  /** The `<webServices><protocols>` of a legacy web.config: what this host answers. */
  protocols: ReadonlySet<Protocol>;
  limits: Limits;
  /** Shadow traffic against the legacy host (SHADOW_URL), or null when off. */
  shadow: ShadowConfig | null;
}

/**
 * Shadow traffic: `service-first` answers clients itself and sends a copy of each request to the
 * legacy host; `legacy-first` is a front that answers clients from the legacy host and sends the copy
 * to this service. Either way the two answers are compared and each difference reported.
 */
export interface ShadowConfig {
  /** The legacy site root, virtual directory included, without a trailing slash. */
  url: string;
  mode: ShadowMode;
  /** Copies in flight at once. */
  concurrency: number;
  /** The share of requests copied, 0 to 1. */
  sample: number;
  /** How long a copy may take before it counts as unanswered. */
  timeoutMs: number;
  /** Copies waiting for a free slot; beyond this a copy is dropped (and counted). */
  queue: number;
  /** The JSON-lines file each difference is appended to, or null for metrics only. */
  log: string | null;
  /** Operations with effects that are copied all the same (only by name from the contract). */
  include: ReadonlySet<string>;
}

export const SHADOW_MODES = ['service-first', 'legacy-first'] as const;
export type ShadowMode = (typeof SHADOW_MODES)[number];

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

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** ASMX's protocol names, as a web.config lists them. */
export const PROTOCOLS = ['HttpSoap', 'HttpSoap12', 'HttpGet', 'HttpPost', 'Documentation'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function port(name: string, value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new ConfigError(`${name} must be a whole number from 0 to 65535, got "${value}"`);
  }
  return Number(value);
}

function wholeNumber(name: string, value: string, min: number, max: number): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a === value.trim().toLowerCase());
  if (found === undefined) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return found;
}

/** `auto` is one process per CPU. */
function workers(value: string, cpus: number): number {
  if (value.trim().toLowerCase() === 'auto') return Math.max(1, cpus);
  return wholeNumber('WORKERS', value, 1, 256);
}

/** A comma-separated list of ASMX protocol names, matched without regard to case as web.config does. */
function protocols(value: string): ReadonlySet<Protocol> {
  const names = value.split(',').map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0) throw new ConfigError(`PROTOCOLS must list at least one of ${PROTOCOLS.join(', ')}`);
  const set = new Set<Protocol>();
  for (const name of names) {
    const p = PROTOCOLS.find((known) => known.toLowerCase() === name.toLowerCase());
    if (p === undefined) throw new ConfigError(`PROTOCOLS must list names from ${PROTOCOLS.join(', ')}, got "${name}"`);
    set.add(p);
  }
  return set;
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


function host(name: string, value: string): string {
  if (value.trim() === '' || /\s/.test(value)) throw new ConfigError(`${name} must be a host name or address, got "${value}"`);
  return value;
}

function nonEmpty(name: string, value: string): string {
  if (value.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return value;
}

/** Operations with effects (the contract marks them): never copied unless SHADOW_INCLUDE names them. */
const effectful = ENDPOINTS.flatMap((e) => e.operations.filter((o) => o.effects === true).map((o) => o.name));

export function loadConfig(env: Env = process.env, cpus: number = availableParallelism()): Config {
  const get = (name: string, fallback: string) => env[name] ?? fallback;
  const publicUrl = env.PUBLIC_URL;
  const databaseUrl = env.DATABASE_URL;
  return {
    port: port('PORT', get('PORT', '8080')),
    host: host('HOST', get('HOST', '0.0.0.0')),
    xmlNamespace: namespaceUri(get('XML_NAMESPACE', 'http://tempuri.org/')),
    basePath: basePath(get('BASE_PATH', '')),
    publicUrl: publicUrl === undefined || publicUrl === '' ? null : absoluteUrl('PUBLIC_URL', publicUrl).replace(/\/+$/, ''),
    trustProxy: flag('TRUST_PROXY', get('TRUST_PROXY', 'false')),
    sqlitePath: nonEmpty('SQLITE_PATH', get('SQLITE_PATH', './data/student-info.db')),
    databaseUrl: databaseUrl === undefined || databaseUrl === '' ? null : postgresUrl(databaseUrl),
    databasePoolSize: wholeNumber('DATABASE_POOL_SIZE', get('DATABASE_POOL_SIZE', '10'), 1, 1000),
    databaseStatementTimeoutMs: wholeNumber('DATABASE_STATEMENT_TIMEOUT_MS', get('DATABASE_STATEMENT_TIMEOUT_MS', '5000'), 1, 3_600_000),
    logLevel: oneOf('LOG_LEVEL', get('LOG_LEVEL', 'info'), LOG_LEVELS),
    adminPort: port('ADMIN_PORT', get('ADMIN_PORT', '9464')),
    adminHost: host('ADMIN_HOST', get('ADMIN_HOST', '127.0.0.1')),
    shutdownTimeoutMs: wholeNumber('SHUTDOWN_TIMEOUT_MS', get('SHUTDOWN_TIMEOUT_MS', '10000'), 1, 3_600_000),
    workers: workers(get('WORKERS', '1'), cpus),
    protocols: protocols(get('PROTOCOLS', PROTOCOLS.join(','))),
    limits: loadLimits(get),
    shadow: loadShadow(get, effectful),
  };
}

/** Off without SHADOW_URL; the other SHADOW_ settings are validated either way, so a typo is caught early. */
function loadShadow(get: (name: string, fallback: string) => string, effectful: readonly string[]): ShadowConfig | null {
  const url = get('SHADOW_URL', '');
  const sample = get('SHADOW_SAMPLE', '1');
  if (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(sample.trim())) throw new ConfigError(`SHADOW_SAMPLE must be a number from 0 to 1, got "${sample}"`);
  const include = new Set<string>();
  for (const name of get('SHADOW_INCLUDE', '').split(',').map((n) => n.trim()).filter((n) => n !== '')) {
    const op = effectful.find((e) => e.toLowerCase() === name.toLowerCase());
    if (op === undefined) throw new ConfigError(`SHADOW_INCLUDE may only name operations with effects (${effectful.join(', ')}), got "${name}"`);
    include.add(op);
  }
  const log = get('SHADOW_LOG', './data/shadow-differences.jsonl');
  const shadow: ShadowConfig = {
    url: url === '' ? '' : absoluteUrl('SHADOW_URL', url).replace(/\/+$/, ''),
    mode: oneOf('SHADOW_MODE', get('SHADOW_MODE', 'service-first'), SHADOW_MODES),
    concurrency: wholeNumber('SHADOW_CONCURRENCY', get('SHADOW_CONCURRENCY', '4'), 1, 1000),
    sample: Number(sample),
    timeoutMs: wholeNumber('SHADOW_TIMEOUT_MS', get('SHADOW_TIMEOUT_MS', '5000'), 1, 3_600_000),
    queue: wholeNumber('SHADOW_QUEUE', get('SHADOW_QUEUE', '1000'), 0, 1_000_000),
    log: log.trim() === '' ? null : log,
    include,
  };
  return url === '' ? null : shadow;
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
