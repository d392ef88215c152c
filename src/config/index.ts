import { availableParallelism } from 'node:os';
import { type ConnectionLimits, type Limits, loadConnectionLimits, loadLimits } from './limits';
import { absoluteUrl, ConfigError, type Env, flag, host, nonEmpty, oneOf, port, wholeNumber } from './parse';
import { loadShadow, type ShadowConfig } from './shadow';
import { loadSms, type SmsConfig } from './sms';

export { ConfigError } from './parse';
export type { ConnectionLimits, Limits } from './limits';
export { DEFAULT_CONNECTION_LIMIT_EXEMPT } from './limits';
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
  /** What one client address may hold of the listener. */
  connections: ConnectionLimits;
  sms: SmsConfig;
  /** Shadow traffic against the legacy host (SHADOW_URL), or null when off. */
  shadow: ShadowConfig | null;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The protocols an ASMX host can serve (System.Web.Services' WebServiceProtocols flags). HttpPostLocalhost
 * is HTTP POST for callers on the host's own machine only (transport/context.ts says who is local).
 */
export const PROTOCOLS = ['HttpSoap', 'HttpSoap12', 'HttpGet', 'HttpPost', 'HttpPostLocalhost', 'Documentation'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** What a site whose web.config lists every protocol of the legacy service serves: PROTOCOLS' default. */
export const DEFAULT_PROTOCOLS = 'HttpSoap,HttpSoap12,HttpGet,HttpPost,Documentation';

/**
 * Every name `<protocols><add name=...>` accepts and what it turns on: each WebServiceProtocols
 * member, so also the composite AnyHttpSoap (both SOAP versions) and Unknown (0: nothing).
 * (ProtocolElement.Name is that enum; System.Web.Services/.../Configuration/Protocols.cs.)
 */
const PROTOCOL_NAMES: readonly (readonly [string, readonly Protocol[]])[] = [
  ...PROTOCOLS.map((p) => [p, [p]] as const),
  ['AnyHttpSoap', ['HttpSoap', 'HttpSoap12']],
  ['Unknown', []],
];

/** `auto` is one process per CPU. */
function workers(value: string, cpus: number): number {
  if (value.trim().toLowerCase() === 'auto') return Math.max(1, cpus);
  return wholeNumber('WORKERS', value, 1, 256);
}

/**
 * A comma-separated list of protocol names, matched without regard to case. (.NET's configuration
 * reader matches them with regard to case, and a site whose web.config misspells one does not start;
 * here a name in another case is taken, since refusing it would only stop a service whose meaning is
 * plain.) `Unknown` alone turns every protocol off, as `<protocols><clear /></protocols>` does.
 */
function protocols(value: string): ReadonlySet<Protocol> {
  const names = value.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const known = PROTOCOL_NAMES.map(([name]) => name).join(', ');
  if (names.length === 0) throw new ConfigError(`PROTOCOLS must list at least one of ${known}`);
  const set = new Set<Protocol>();
  for (const name of names) {
    const found = PROTOCOL_NAMES.find(([n]) => n.toLowerCase() === name.toLowerCase());
    if (found === undefined) throw new ConfigError(`PROTOCOLS must list names from ${known}, got "${name}"`);
    for (const p of found[1]) set.add(p);
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
    protocols: protocols(get('PROTOCOLS', DEFAULT_PROTOCOLS)),
    limits: loadLimits(get),
    connections: loadConnectionLimits(get),
    sms: loadSms(get),
    shadow: loadShadow(get),
  };
}
