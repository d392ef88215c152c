import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, SETTINGS } from '../src/config';
import { MAIN, PROJECT_ROOT } from './helpers/paths';

test('defaults', () => {
  expect(loadConfig({})).toEqual({
    port: 8080,
    host: '0.0.0.0',
    xmlNamespace: 'http://tempuri.org/',
    basePath: '',
    publicUrl: null,
    trustProxy: false,
    sqlitePath: './data/student-info.db',
    databaseUrl: null,
    databasePoolSize: 10,
    databaseStatementTimeoutMs: 5000,
    limits: {
      maxBodyBytes: 4 * 1024 * 1024,
      maxQueryBytes: 2048,
      maxUrlBytes: 4096,
      maxHeaderBytes: 16384,
      requestTimeoutMs: 30000,
      headersTimeoutMs: 20000,
      keepAliveTimeoutMs: 65000,
      sendTimeoutMs: 60000,
      maxUnsentBytes: 65536,
      maxXmlDepth: 64,
      maxXmlElements: 10000,
      maxFormKeys: 1000,
    },
    connections: {
      perAddress: 100,
      exempt: [
        { address: '127.0.0.1', family: 4, prefix: 32 },
        { address: '::1', family: 6, prefix: 128 },
      ],
    },
    logLevel: 'info',
    logBufferBytes: 16 * 1024 * 1024,
    adminPort: 9464,
    adminHost: '127.0.0.1',
    adminAllowedHosts: [],
    shutdownTimeoutMs: 10000,
    drainDelayMs: 0,
    workers: 1,
    protocols: new Set(['HttpSoap', 'HttpSoap12', 'HttpGet', 'HttpPost', 'Documentation']),
    sms: {
      gateway: 'none',
      defaultRegion: null,
      allowedCountries: [],
      template: 'Your verification code is {code}',
      codeTtlSeconds: 600,
      maxAttempts: 8,
      retryBaseMs: 2000,
      leaseMs: 60000,
      pollMs: 1000,
      retentionDays: 30,
      failedHoldMinutes: 60,
      perPhonePerHour: 5,
      perAddressPerHour: 20,
      limitExempt: [],
      globalPerMinute: 60,
      globalPerHour: 1000,
      globalPerDay: 5000,
      redisUrl: null,
      redisKeyPrefix: 'asmx:sms:',
      http: {
        url: '',
        method: 'POST',
        headers: {},
        body: '{"to":"{phone}","message":"{message}"}',
        format: 'json',
        timeoutMs: 10000,
        idempotencyHeader: 'Idempotency-Key',
      },
    },
    shadow: null,
    settingsRead: [],
  });
});

test('SETTINGS is every name loadConfig reads, and it reads every one of them', () => {
  const read = new Set<string>();
  const recording = (env: Record<string, string>) =>
    new Proxy(env, {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return target[name as string];
      },
    });
  // Between them these reach every branch: the defaults, the Twilio preset (which replaces the HTTP
  // gateway's settings), shadowing on.
  loadConfig(recording({}));
  loadConfig(
    recording({
      SMS_GATEWAY: 'twilio',
      TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 't',
      TWILIO_FROM: '+15005550006',
      SMS_DEFAULT_REGION: 'IQ',
    }),
  );
  loadConfig(recording({ SHADOW_URL: 'http://legacy/' }));
  expect([...read].sort()).toEqual([...SETTINGS].sort());
  expect(new Set(SETTINGS).size).toBe(SETTINGS.length);
});

test("the README's settings table names every setting, and only settings", () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
  const named = table
    .split('\n')
    .filter((row) => row.startsWith('| `'))
    .flatMap((row) => [...row.split('|')[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!));
  expect([...named].sort()).toEqual([...SETTINGS].sort());
});

test('ADMIN_PORT equal to PORT is refused where the two listeners would meet, taken where they cannot', () => {
  const clash =
    /^ADMIN_PORT must differ from PORT \(both 8080, on 127\.0\.0\.1 and 0\.0\.0\.0\): the admin listener needs a port of its own \(ADMIN_PORT=0 turns it off\)$/;
  expect(() => loadConfig({ PORT: '8080', ADMIN_PORT: '8080' })).toThrow(clash);
  for (const [host, adminHost] of [
    ['0.0.0.0', '0.0.0.0'],
    ['::', '127.0.0.1'],
    ['127.0.0.1', '0.0.0.0'],
    ['localhost', 'localhost'],
    ['::', '::1'],
  ]) {
    expect(() => loadConfig({ PORT: '9000', ADMIN_PORT: '9000', HOST: host!, ADMIN_HOST: adminHost! })).toThrow(
      /^ADMIN_PORT must differ from PORT/,
    );
  }
  // Two addresses of the machine, or IPv4's wildcard and an IPv6 address, may share a port; 0 is no admin listener, or any free port.
  for (const [host, adminHost] of [
    ['10.0.0.5', '127.0.0.1'],
    ['0.0.0.0', '::1'],
  ]) {
    expect(loadConfig({ PORT: '9000', ADMIN_PORT: '9000', HOST: host!, ADMIN_HOST: adminHost! }).adminPort).toBe(9000);
  }
  expect(loadConfig({ PORT: '0', ADMIN_PORT: '0' }).adminPort).toBe(0);
});

test('ADMIN_ALLOWED_HOSTS: host names as a Host header gives them (any case, a final dot), none by default', () => {
  expect(loadConfig({}).adminAllowedHosts).toEqual([]);
  expect(
    loadConfig({ ADMIN_ALLOWED_HOSTS: ' Console.School.Example. , metrics_node.internal,,console.school.example,10.0.0.5,[::1]' })
      .adminAllowedHosts,
  ).toEqual(['console.school.example', 'metrics_node.internal', '10.0.0.5', '::1']);
});

test('SMS settings are read and normalised; Twilio is the HTTP gateway with its preset', () => {
  const c = loadConfig({
    SMS_DEFAULT_REGION: 'iq',
    SMS_ALLOWED_COUNTRIES: 'IQ, jo',
    SMS_HTTP_HEADERS: '{"X-Key":"k"}',
    REDIS_URL: 'redis://127.0.0.1:6379/2',
  });
  expect(c.sms).toMatchObject({ defaultRegion: 'IQ', allowedCountries: ['IQ', 'JO'], redisUrl: 'redis://127.0.0.1:6379/2' });
  expect(c.sms.http.headers).toEqual({ 'X-Key': 'k' });
  const sid = `AC${'a1'.repeat(16)}`;
  const twilio = loadConfig({
    SMS_GATEWAY: 'twilio',
    TWILIO_ACCOUNT_SID: sid,
    TWILIO_AUTH_TOKEN: 'tok',
    TWILIO_FROM: '+15005550006',
    SMS_DEFAULT_REGION: 'IQ',
  }).sms.http;
  expect(twilio).toEqual({
    url: `https://api.twilio.com/2010-04-01/Accounts/${sid}/Messages.json`,
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${sid}:tok`).toString('base64')}` },
    body: 'To={phone}&From=%2B15005550006&Body={message}',
    format: 'form',
    timeoutMs: 10000,
    idempotencyHeader: '',
  });
});

test('the countries texted: SMS_ALLOWED_COUNTRIES, else the default region; a sending gateway must name them', () => {
  const http = { SMS_GATEWAY: 'http', SMS_HTTP_URL: 'https://sms.example/send' };
  expect(loadConfig({ ...http, SMS_DEFAULT_REGION: 'IQ' }).sms.allowedCountries).toEqual(['IQ']);
  expect(loadConfig({ ...http, SMS_DEFAULT_REGION: 'IQ', SMS_ALLOWED_COUNTRIES: 'IQ,JO' }).sms.allowedCountries).toEqual(['IQ', 'JO']);
  expect(loadConfig({ ...http, SMS_ALLOWED_COUNTRIES: '*' }).sms.allowedCountries).toEqual([]);
  expect(() => loadConfig(http)).toThrow(/^SMS_GATEWAY=http needs SMS_DEFAULT_REGION or SMS_ALLOWED_COUNTRIES/);
  // Nothing is sent without a gateway: codes are queued whatever their country.
  expect(loadConfig({}).sms).toMatchObject({ gateway: 'none', allowedCountries: [] });
  expect(loadConfig({ SMS_GATEWAY: 'log' }).sms.allowedCountries).toEqual([]);
});

test('shadow settings', () => {
  expect(loadConfig({ SHADOW_URL: 'http://legacy-host/StudentService/' }).shadow).toEqual({
    url: 'http://legacy-host/StudentService',
    secondaryUrl: null,
    mode: 'service-first',
    concurrency: 4,
    pipeline: 1,
    sample: 1,
    timeoutMs: 5000,
    queue: 1000,
    queueBytes: 64 * 1024 * 1024,
    log: './data/shadow-differences.jsonl',
    logMaxBytes: 64 * 1024 * 1024,
    logKeepFree: null,
    logExamples: 10,
    include: new Set(),
    copierPriority: 'lowest',
  });
  const c = loadConfig({
    SHADOW_URL: 'https://iis',
    SHADOW_MODE: 'Legacy-First',
    SHADOW_SAMPLE: '0.25',
    SHADOW_INCLUDE: 'authcode',
    SHADOW_LOG: '',
    SHADOW_QUEUE: '0',
  });
  expect(c.shadow).toMatchObject({ mode: 'legacy-first', sample: 0.25, include: new Set(['AuthCode']), log: null, queue: 0 });
  // The other settings are checked even while shadowing is off, so a typo shows before it is needed.
  expect(() => loadConfig({ SHADOW_SAMPLE: '2' })).toThrow(/^SHADOW_SAMPLE /);
  expect(loadConfig({ SHADOW_URL: 'http://a/', SHADOW_URL_SECONDARY: 'http://b/x/' }).shadow?.secondaryUrl).toBe('http://b/x');
  expect(loadConfig({ SHADOW_URL: 'http://a/', SHADOW_QUEUE_BYTES: '8388608' }).shadow?.queueBytes).toBe(8 * 1024 * 1024);
  expect(loadConfig({ SHADOW_URL: 'http://a/', SHADOW_PIPELINE: '16' }).shadow?.pipeline).toBe(16);
  expect(loadConfig({ SHADOW_URL: 'http://a/', SHADOW_COPIER_PRIORITY: 'normal' }).shadow?.copierPriority).toBe('normal');
  expect(() => loadConfig({ SHADOW_COPIER_PRIORITY: 'high' })).toThrow(/^SHADOW_COPIER_PRIORITY /);
  expect(
    loadConfig({ SHADOW_URL: 'http://a/', SHADOW_LOG_MAX_BYTES: '1048576', SHADOW_LOG_KEEP_FREE: '4194304', SHADOW_LOG_EXAMPLES: '1' })
      .shadow,
  ).toMatchObject({
    logMaxBytes: 1024 * 1024,
    logKeepFree: 4 * 1024 * 1024,
    logExamples: 1,
  });
});

test('limits are read from the environment', () => {
  const c = loadConfig({ MAX_BODY_BYTES: '1024', MAX_QUERY_BYTES: '100', REQUEST_TIMEOUT_MS: '500', MAX_XML_DEPTH: '8' });
  // HEADERS_TIMEOUT_MS unset follows a REQUEST_TIMEOUT_MS shorter than its default down.
  expect(c.limits).toMatchObject({ maxBodyBytes: 1024, maxQueryBytes: 100, requestTimeoutMs: 500, headersTimeoutMs: 500, maxXmlDepth: 8 });
  expect(loadConfig({ HEADERS_TIMEOUT_MS: '5000' }).limits).toMatchObject({ headersTimeoutMs: 5000, requestTimeoutMs: 30000 });
  expect(loadConfig({ HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '60000' }).limits.headersTimeoutMs).toBe(60000);
});

test('the connection cap: MAX_CONNECTIONS_PER_ADDRESS (0: off) and CONNECTION_LIMIT_EXEMPT (empty: none)', () => {
  expect(loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '0', CONNECTION_LIMIT_EXEMPT: '' }).connections).toEqual({ perAddress: 0, exempt: [] });
  expect(loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '20', CONNECTION_LIMIT_EXEMPT: ' 10.0.0.5, 2001:db8::/64' }).connections).toEqual({
    perAddress: 20,
    exempt: [
      { address: '10.0.0.5', family: 4, prefix: 32 },
      { address: '2001:db8::', family: 6, prefix: 64 },
    ],
  });
});

test('operations settings', () => {
  expect(loadConfig({ WORKERS: 'auto' }, 6).workers).toBe(6);
  expect(
    loadConfig({ WORKERS: '3', LOG_LEVEL: 'DEBUG', ADMIN_PORT: '0', SHUTDOWN_TIMEOUT_MS: '2500', DRAIN_DELAY_MS: '5000' }),
  ).toMatchObject({
    workers: 3,
    logLevel: 'debug',
    adminPort: 0,
    shutdownTimeoutMs: 2500,
    drainDelayMs: 5000,
  });
  // web.config names are matched without regard to case
  expect([...loadConfig({ PROTOCOLS: 'httpsoap, HttpPost' }).protocols]).toEqual(['HttpSoap', 'HttpPost']);
});

test('values are read and normalised', () => {
  const c = loadConfig({
    PORT: '9000',
    BASE_PATH: '/StudentService/',
    PUBLIC_URL: 'https://school.example/StudentService/',
    TRUST_PROXY: 'true',
    XML_NAMESPACE: 'urn:school:v1',
  });
  expect(c).toMatchObject({
    port: 9000,
    basePath: '/StudentService',
    publicUrl: 'https://school.example/StudentService',
    trustProxy: true,
    xmlNamespace: 'urn:school:v1',
  });
});

test.each([
  [{ PORT: 'eighty' }, /^PORT /],
  [{ PORT: '70000' }, /^PORT /],
  [{ XML_NAMESPACE: 'not a uri' }, /^XML_NAMESPACE /],
  [{ BASE_PATH: 'StudentService' }, /^BASE_PATH /],
  [{ PUBLIC_URL: 'ftp://x' }, /^PUBLIC_URL /],
  [{ PUBLIC_URL: 'nope' }, /^PUBLIC_URL /],
  [{ TRUST_PROXY: 'maybe' }, /^TRUST_PROXY /],
  [
    { DATABASE_URL: 'mysql://u:secret@h/db' },
    /^DATABASE_URL must be a URL such as postgres:\/\/user:password@host:5432\/database \(scheme postgres or postgresql\), got the scheme "mysql"$/,
  ],
  [{ DATABASE_URL: 'postgress://u:secret@h/db' }, /^DATABASE_URL must be a URL .*, got the scheme "postgress"$/],
  [{ DATABASE_URL: 'u:secret@h/db' }, /^DATABASE_URL must be a URL .*, got the scheme "u"$/],
  [{ DATABASE_URL: '//u:secret@h/db' }, /^DATABASE_URL must be a URL .*, got a value that is not a URL$/],
  [{ DATABASE_POOL_SIZE: '0' }, /^DATABASE_POOL_SIZE /],
  [{ DATABASE_STATEMENT_TIMEOUT_MS: 'soon' }, /^DATABASE_STATEMENT_TIMEOUT_MS /],
  [{ SQLITE_PATH: ' ' }, /^SQLITE_PATH /],
  [{ MAX_BODY_BYTES: '4mb' }, /^MAX_BODY_BYTES must be a whole number/],
  [{ MAX_QUERY_BYTES: '0' }, /^MAX_QUERY_BYTES /],
  [{ REQUEST_TIMEOUT_MS: '-1' }, /^REQUEST_TIMEOUT_MS /],
  [{ HEADERS_TIMEOUT_MS: '0' }, /^HEADERS_TIMEOUT_MS must be a whole number/],
  [{ HEADERS_TIMEOUT_MS: '40000' }, /^HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS \(30000\), got "40000"$/],
  [
    { HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' },
    /^HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS \(10000\)/,
  ],
  [{ MAX_CONNECTIONS_PER_ADDRESS: '-1' }, /^MAX_CONNECTIONS_PER_ADDRESS must be a whole number from 0/],
  [{ MAX_CONNECTIONS_PER_ADDRESS: 'lots' }, /^MAX_CONNECTIONS_PER_ADDRESS /],
  [{ CONNECTION_LIMIT_EXEMPT: 'the-proxy' }, /^CONNECTION_LIMIT_EXEMPT must be IP addresses or CIDR ranges/],
  [{ CONNECTION_LIMIT_EXEMPT: '0.0.0.0/0' }, /^CONNECTION_LIMIT_EXEMPT .*a \/0 range exempts every caller \(raise the limit instead\)$/],
  [{ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
  [{ ADMIN_PORT: '-1' }, /^ADMIN_PORT /],
  [{ ADMIN_HOST: '' }, /^ADMIN_HOST /],
  [
    { ADMIN_ALLOWED_HOSTS: 'https://console.school.example' },
    /^ADMIN_ALLOWED_HOSTS must be host names such as console\.school\.example,localhost \(no scheme, port or path\), got "https:\/\/console\.school\.example"$/,
  ],
  [{ ADMIN_ALLOWED_HOSTS: 'localhost,console.school.example:8443' }, /^ADMIN_ALLOWED_HOSTS .*got "console\.school\.example:8443"$/],
  [{ ADMIN_ALLOWED_HOSTS: '*.school.example' }, /^ADMIN_ALLOWED_HOSTS .*got "\*\.school\.example"$/],
  [{ ADMIN_ALLOWED_HOSTS: 'console.school.example/console' }, /^ADMIN_ALLOWED_HOSTS /],
  [{ PORT: '9464' }, /^ADMIN_PORT must differ from PORT \(both 9464/],
  [{ SHUTDOWN_TIMEOUT_MS: '0' }, /^SHUTDOWN_TIMEOUT_MS /],
  [{ DRAIN_DELAY_MS: '-1' }, /^DRAIN_DELAY_MS /],
  [{ WORKERS: '0' }, /^WORKERS /],
  [{ WORKERS: 'many' }, /^WORKERS /],
  [{ PROTOCOLS: 'HttpSoap,Soap13' }, /^PROTOCOLS .*"Soap13"/],
  [{ PROTOCOLS: ' , ' }, /^PROTOCOLS must list at least one/],
  [{ SMS_GATEWAY: 'carrier-pigeon' }, /^SMS_GATEWAY must be one of none, log, http, twilio/],
  [{ SMS_CODE_TTL_SECONDS: '0' }, /^SMS_CODE_TTL_SECONDS /],
  [{ SMS_LIMIT_GLOBAL_PER_HOUR: '0' }, /^SMS_LIMIT_GLOBAL_PER_HOUR /],
  [{ SMS_LIMIT_GLOBAL_PER_DAY: 'lots' }, /^SMS_LIMIT_GLOBAL_PER_DAY /],
  [{ SMS_HTTP_IDEMPOTENCY_HEADER: 'Idempotency Key' }, /^SMS_HTTP_IDEMPOTENCY_HEADER /],
  [{ SMS_DEFAULT_REGION: 'XX' }, /^SMS_DEFAULT_REGION /],
  [{ SMS_ALLOWED_COUNTRIES: 'IQ,Narnia' }, /^SMS_ALLOWED_COUNTRIES /],
  [{ SMS_TEMPLATE: 'Hello' }, /^SMS_TEMPLATE must contain \{code\}$/],
  [{ SMS_MAX_ATTEMPTS: '0' }, /^SMS_MAX_ATTEMPTS /],
  [{ SMS_RETRY_BASE_MS: 'fast' }, /^SMS_RETRY_BASE_MS /],
  [{ SMS_RETENTION_DAYS: '0' }, /^SMS_RETENTION_DAYS /],
  [{ SMS_LIMIT_PER_PHONE: 'x' }, /^SMS_LIMIT_PER_PHONE /],
  [{ SMS_LIMIT_PER_ADDRESS: '-5' }, /^SMS_LIMIT_PER_ADDRESS /],
  [{ SMS_LIMIT_GLOBAL_PER_MINUTE: '' }, /^SMS_LIMIT_GLOBAL_PER_MINUTE /],
  [{ SMS_LIMIT_EXEMPT: '10.0.0.0/33' }, /^SMS_LIMIT_EXEMPT /],
  [{ SMS_LEASE_MS: '5000' }, /^SMS_LEASE_MS must be longer than SMS_HTTP_TIMEOUT_MS \(10000\)/],
  [{ SMS_GATEWAY: 'http' }, /^SMS_HTTP_URL must be set when SMS_GATEWAY=http$/],
  [{ SMS_GATEWAY: 'http', SMS_HTTP_URL: 'ftp://sms?key=s3cr3t' }, /^SMS_HTTP_URL must be an http or https URL$/],
  [{ SMS_HTTP_METHOD: 'DELETE' }, /^SMS_HTTP_METHOD /],
  [{ SMS_HTTP_FORMAT: 'xml' }, /^SMS_HTTP_FORMAT /],
  [{ SMS_HTTP_BODY: '{"to":{phone}}' }, /^SMS_HTTP_BODY must be JSON/],
  [
    { SMS_HTTP_HEADERS: '{"X-Key": 42, "secret": "s3cr3t"}' },
    /^SMS_HTTP_HEADERS must be a JSON object of strings, such as \{"Authorization":"Bearer \.\.\."\}$/,
  ],
  [
    { SMS_GATEWAY: 'twilio', TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`, TWILIO_FROM: '+15005550006' },
    /^TWILIO_AUTH_TOKEN must be set when SMS_GATEWAY=twilio$/,
  ],
  [{ SMS_GATEWAY: 'twilio', TWILIO_ACCOUNT_SID: 'nope', TWILIO_AUTH_TOKEN: 't', TWILIO_FROM: '+1' }, /^TWILIO_ACCOUNT_SID /],
  [
    { REDIS_URL: 'http://u:secret@127.0.0.1:6379' },
    /^REDIS_URL must be a URL such as redis:\/\/127\.0\.0\.1:6379 \(scheme redis or rediss\), got the scheme "http"$/,
  ],
  [{ REDIS_URL: 'redis://u:sec ret@127.0.0.1' }, /^REDIS_URL must be a URL .*, got an address that is not a URL$/],
  [{ SHADOW_URL: 'legacy-host' }, /^SHADOW_URL must be an absolute URL/],
  [{ SHADOW_URL: 'ftp://legacy' }, /^SHADOW_URL /],
  [{ SHADOW_MODE: 'both' }, /^SHADOW_MODE must be one of service-first, legacy-first/],
  [{ SHADOW_CONCURRENCY: '0' }, /^SHADOW_CONCURRENCY /],
  [{ SHADOW_PIPELINE: '0' }, /^SHADOW_PIPELINE /],
  [{ SHADOW_PIPELINE: '65' }, /^SHADOW_PIPELINE /],
  [
    { SHADOW_URL: 'http://a/', SHADOW_PIPELINE: '16', SHADOW_INCLUDE: 'AuthCode' },
    /^SHADOW_PIPELINE above 1 cannot be used with SHADOW_INCLUDE/,
  ],
  [{ SHADOW_SAMPLE: '-0.5' }, /^SHADOW_SAMPLE /],
  [{ SHADOW_SAMPLE: 'half' }, /^SHADOW_SAMPLE /],
  [{ SHADOW_TIMEOUT_MS: '0' }, /^SHADOW_TIMEOUT_MS /],
  [{ SHADOW_QUEUE: 'lots' }, /^SHADOW_QUEUE /],
  [{ SHADOW_QUEUE_BYTES: '64MiB' }, /^SHADOW_QUEUE_BYTES must be a whole number from 1048576 to 999999999/],
  [{ SHADOW_QUEUE_BYTES: '1000' }, /^SHADOW_QUEUE_BYTES /],
  [{ SHADOW_LOG_MAX_BYTES: '64MiB' }, /^SHADOW_LOG_MAX_BYTES must be a whole number from 1048576 to 999999999/],
  [{ SHADOW_LOG_MAX_BYTES: '1048575' }, /^SHADOW_LOG_MAX_BYTES /],
  [{ SHADOW_LOG_KEEP_FREE: '1048576' }, /^SHADOW_LOG_KEEP_FREE must be a whole number from 4194304 to 999999999/],
  [{ SHADOW_LOG_KEEP_FREE: '5%' }, /^SHADOW_LOG_KEEP_FREE /],
  [{ SHADOW_LOG_EXAMPLES: '0' }, /^SHADOW_LOG_EXAMPLES must be a whole number from 1 to 1000000/],
  [{ SHADOW_INCLUDE: 'GetTokenDevice' }, /^SHADOW_INCLUDE may only name operations with effects \(AuthCode\)/],
  [{ SHADOW_URL_SECONDARY: 'http://b/' }, /^SHADOW_URL_SECONDARY needs SHADOW_URL/],
  [{ SHADOW_URL: 'http://a/', SHADOW_URL_SECONDARY: 'ftp://b/' }, /^SHADOW_URL_SECONDARY must be an http or https URL/],
  [{ SHADOW_URL: 'http://a/', SHADOW_URL_SECONDARY: 'http://a' }, /^SHADOW_URL_SECONDARY must be another legacy site/],
])('%j is refused with a one-line message naming the variable', (env, message) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(message);
});

test('the server, as built, exits 1 with one clear line on a bad value', () => {
  // The tests' build (test/helpers/global-setup.ts), made by the project's build script.
  const r = spawnSync(process.execPath, [MAIN], { cwd: PROJECT_ROOT, env: { ...process.env, PORT: 'x' }, encoding: 'utf8' });
  expect(r.status).toBe(1);
  expect(r.stderr.trim().split('\n')).toEqual(['error: PORT must be a whole number from 0 to 65535, got "x"']);
});

test('SEND_TIMEOUT_MS follows REQUEST_TIMEOUT_MS when unset; MAX_UNSENT_BYTES is a whole number of bytes', () => {
  expect(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).limits.sendTimeoutMs).toBe(10000);
  expect(loadConfig({ SEND_TIMEOUT_MS: '15000' }).limits.sendTimeoutMs).toBe(15000);
  expect(loadConfig({ MAX_UNSENT_BYTES: '1024' }).limits.maxUnsentBytes).toBe(1024);
  expect(() => loadConfig({ MAX_UNSENT_BYTES: '0' })).toThrow(ConfigError);
  expect(() => loadConfig({ SEND_TIMEOUT_MS: 'soon' })).toThrow(ConfigError);
});
