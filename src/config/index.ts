import { availableParallelism } from 'node:os';
import { type Limits, loadLimits } from './limits';
import { absoluteUrl, ConfigError, type Env, flag, host, nonEmpty, oneOf, port, wholeNumber } from './parse';
import { loadShadow, type ShadowConfig } from './shadow';
import { loadSms, type SmsConfig } from './sms';

export { ConfigError } from './parse';
export type { Limits } from './limits';
export type { SmsConfig, SmsGatewayKind, SmsHttpConfig } from './sms';
export { SHADOW_MODES, type ShadowConfig, type ShadowMode } from './shadow';

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
  sms: SmsConfig;
  /** Shadow traffic against the legacy host (SHADOW_URL), or null when off. */
  shadow: ShadowConfig | null;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** ASMX's protocol names, as a web.config lists them. */
export const PROTOCOLS = ['HttpSoap', 'HttpSoap12', 'HttpGet', 'HttpPost', 'Documentation'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

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
    sms: loadSms(get),
    shadow: loadShadow(get),
  };
}
