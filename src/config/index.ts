import { isIPv6 } from 'node:net';
import { availableParallelism } from 'node:os';
import { MAX_LINE_BYTES } from '../basics/log';
import { DEFAULT_LOG_BUFFER_BYTES } from '../basics/log-destination';
import { CONNECTION_SETTINGS, type ConnectionLimits, LIMIT_SETTINGS, type Limits, loadConnectionLimits, loadLimits } from './limits';
import { envFileWarnings as envFileLines } from './env-file';
import { nearMisses } from './near-miss';
import {
  absoluteUrl,
  ConfigError,
  type Env,
  flag,
  type Getter,
  gotScheme,
  host,
  hostNames,
  nonEmpty,
  oneOf,
  port,
  wholeNumber,
} from './parse';
import { loadShadow, SHADOW_SETTINGS, type ShadowConfig } from './shadow';
import { loadSms, SMS_SETTINGS, type SmsConfig } from './sms';

export { ConfigError } from './parse';
export type { ConnectionLimits, Limits } from './limits';
export { DEFAULT_CONNECTION_LIMIT_EXEMPT } from './limits';
export type { SmsConfig, SmsGatewayKind, SmsHttpConfig } from './sms';
export { SHADOW_MODES, type ShadowConfig, type ShadowMode } from './shadow';

/** The service's own settings, in the README's order; each other loader lists its own. */
const SERVICE_SETTINGS = [
  'PORT',
  'HOST',
  'XML_NAMESPACE',
  'BASE_PATH',
  'PUBLIC_URL',
  'TRUST_PROXY',
  'SQLITE_PATH',
  'DATABASE_URL',
  'DATABASE_POOL_SIZE',
  'DATABASE_STATEMENT_TIMEOUT_MS',
  'LOG_LEVEL',
  'MAX_LOG_BUFFER_BYTES',
  'ADMIN_PORT',
  'ADMIN_HOST',
  'ADMIN_ALLOWED_HOSTS',
  'SHUTDOWN_TIMEOUT_MS',
  'DRAIN_DELAY_MS',
  'WORKERS',
  'PROTOCOLS',
] as const;

/**
 * Every setting, in the README's order. loadConfig can read no other name (its getter takes only
 * these, so the type check fails on one read but not listed) and reads each of them
 * (test/config.test.ts); a variable not in this list is not a setting (near-miss.ts).
 */
export const SETTINGS = [...SERVICE_SETTINGS, ...SMS_SETTINGS, ...SHADOW_SETTINGS, ...LIMIT_SETTINGS, ...CONNECTION_SETTINGS] as const;
export type Setting = (typeof SETTINGS)[number];
const isSetting = (name: string): name is Setting => (SETTINGS as readonly string[]).includes(name);

/**
 * The warning lines for the variables of `env` that look like settings but are not (`PROTOCOL`,
 * `SMS_GATEWY`): one each, naming the setting probably meant. Names only: no value is shown.
 */
export function settingWarnings(env: Env): string[] {
  return nearMisses(env, SETTINGS);
}

/**
 * The warning lines for a `.env` file's content (`file` names it in them): each line that sets
 * nothing although it is neither blank nor a comment (`PORT 19215`), or sets other than it seems
 * (a quote left open), with its line number (env-file.ts).
 */
export function envFileWarnings(text: string, file: string): string[] {
  return envFileLines(text, file, SETTINGS);
}

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
  /** Log lines waiting for stderr, in bytes, beyond which a line is dropped and counted (basics/log-destination.ts). */
  logBufferBytes: number;
  /** The admin listener (/metrics, /healthz, /readyz); port 0 turns it off. */
  adminPort: number;
  adminHost: string;
  /**
   * Names besides the loopback ones (and ADMIN_HOST's) that a request's Host may give the admin
   * listener: what a reverse proxy or a tunnel makes the operator's browser send. Any other name is
   * refused (DNS rebinding); an IP address is always taken (process/admin-hosts.ts).
   */
  adminAllowedHosts: readonly string[];
  /** How long in-flight requests may take to finish after SIGTERM before the process gives up. */
  shutdownTimeoutMs: number;
  /** After a stop signal, how long the port keeps serving while readiness says not ready (Kubernetes' drain). */
  drainDelayMs: number;
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
  /** The settings the environment gave a value, in SETTINGS' order: names only (a value may be a secret). */
  settingsRead: readonly Setting[];
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
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
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

/** The value is never echoed (it may hold a password): only its scheme, which cannot. */
function postgresUrl(value: string): string {
  const scheme = URL.canParse(value) ? new URL(value).protocol : null;
  if (scheme !== 'postgres:' && scheme !== 'postgresql:') {
    throw new ConfigError(
      `DATABASE_URL must be a URL such as postgres://user:password@host:5432/database (scheme postgres or postgresql), ${gotScheme(value)}`,
    );
  }
  return value;
}

export function loadConfig(env: Env = process.env, cpus: number = availableParallelism()): Config {
  const get: Getter<Setting> = (name, fallback) => env[name] ?? fallback;
  const publicUrl = get('PUBLIC_URL', '');
  const databaseUrl = get('DATABASE_URL', '');
  const config: Config = {
    port: port('PORT', get('PORT', '8080')),
    host: host('HOST', get('HOST', '0.0.0.0')),
    xmlNamespace: namespaceUri(get('XML_NAMESPACE', 'http://tempuri.org/')),
    basePath: basePath(get('BASE_PATH', '')),
    publicUrl: publicUrl === '' ? null : absoluteUrl('PUBLIC_URL', publicUrl).replace(/\/+$/, ''),
    trustProxy: flag('TRUST_PROXY', get('TRUST_PROXY', 'false')),
    sqlitePath: nonEmpty('SQLITE_PATH', get('SQLITE_PATH', './data/student-info.db')),
    databaseUrl: databaseUrl === '' ? null : postgresUrl(databaseUrl),
    databasePoolSize: wholeNumber('DATABASE_POOL_SIZE', get('DATABASE_POOL_SIZE', '10'), 1, 1000),
    databaseStatementTimeoutMs: wholeNumber('DATABASE_STATEMENT_TIMEOUT_MS', get('DATABASE_STATEMENT_TIMEOUT_MS', '5000'), 1, 3_600_000),
    logLevel: oneOf('LOG_LEVEL', get('LOG_LEVEL', 'info'), LOG_LEVELS),
    // At least one line of the longest (MAX_LINE_BYTES), so that a line is never dropped for its own size.
    logBufferBytes: wholeNumber(
      'MAX_LOG_BUFFER_BYTES',
      get('MAX_LOG_BUFFER_BYTES', String(DEFAULT_LOG_BUFFER_BYTES)),
      MAX_LINE_BYTES,
      999_999_999,
    ),
    adminPort: port('ADMIN_PORT', get('ADMIN_PORT', '9464')),
    adminHost: host('ADMIN_HOST', get('ADMIN_HOST', '127.0.0.1')),
    adminAllowedHosts: hostNames('ADMIN_ALLOWED_HOSTS', get('ADMIN_ALLOWED_HOSTS', '')),
    shutdownTimeoutMs: wholeNumber('SHUTDOWN_TIMEOUT_MS', get('SHUTDOWN_TIMEOUT_MS', '10000'), 1, 3_600_000),
    drainDelayMs: wholeNumber('DRAIN_DELAY_MS', get('DRAIN_DELAY_MS', '0'), 0, 3_600_000),
    workers: workers(get('WORKERS', '1'), cpus),
    protocols: protocols(get('PROTOCOLS', DEFAULT_PROTOCOLS)),
    limits: loadLimits(get),
    connections: loadConnectionLimits(get),
    sms: loadSms(get),
    shadow: loadShadow(get),
    // Object.keys, not a read of every setting: only what the environment holds is looked at.
    settingsRead: Object.keys(env)
      .filter(isSetting)
      .filter((name) => env[name] !== undefined)
      .sort((a, b) => SETTINGS.indexOf(a) - SETTINGS.indexOf(b)),
  };
  separatePorts(config);
  return config;
}

/** An address every address of its family listens behind: 0.0.0.0, and :: (which takes IPv4 too, as Linux binds it). */
function covers(wildcard: string, host: string): boolean {
  if (wildcard === '0.0.0.0') return !isIPv6(host);
  return isIPv6(wildcard) && /^[0:]+$/.test(wildcard);
}

/**
 * The admin listener and the service on one port and address could never both listen: the second
 * would fail after the first had started. Refused here, in one line, before anything starts.
 * (Addresses that differ, such as 10.0.0.5 and 127.0.0.1, may share a port.)
 */
function separatePorts(c: Config): void {
  if (c.adminPort === 0 || c.adminPort !== c.port) return;
  if (c.host !== c.adminHost && !covers(c.host, c.adminHost) && !covers(c.adminHost, c.host)) return;
  throw new ConfigError(
    `ADMIN_PORT must differ from PORT (both ${c.port}, on ${c.adminHost} and ${c.host}): the admin listener needs a port of its own (ADMIN_PORT=0 turns it off)`,
  );
}
