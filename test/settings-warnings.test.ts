import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main as importMain } from '../scripts/import';
import { main as outboxMain } from '../scripts/outbox';
import { parseEnv } from 'node:util';
import { envFileWarnings, loadConfig, SETTINGS, settingWarnings } from '../src/config';
import { editDistance } from '../src/config/near-miss';
import { startLine } from '../src/process/start-line';
import { freePort, request, type Service, servicesPerTest } from './helpers/service';

/**
 * A variable that looks like a setting but is not one gets one warning line naming the setting it
 * probably meant (issue 32: `PROTOCOL=HttpSoap` left every protocol on, `SMS_GATEWY=http` left codes
 * queued, both in silence); the machine's other variables never do. The start line names the
 * settings read, never their values.
 */

const warned = (env: Record<string, string>) => settingWarnings(env);
const meant = (name: string, value = 'x') => warned({ [name]: value });

describe('near misses', () => {
  test.each([
    ['PROTOCOL', 'PROTOCOLS'], // the singular
    ['SMS_GATEWY', 'SMS_GATEWAY'], // a letter missing
    ['port', 'PORT'], // another case
    ['Sms_Gateway', 'SMS_GATEWAY'],
    ['WORKER', 'WORKERS'],
    ['SMS_ALLOWED_COUNTRY', 'SMS_ALLOWED_COUNTRIES'], // -Y for -IES
    ['SMS_HTTP_HEADER', 'SMS_HTTP_HEADERS'],
    ['PROT', 'PORT'], // two letters swapped: one edit
    ['SHADOW_SAMPEL', 'SHADOW_SAMPLE'],
    ['LOGLEVEL', 'LOG_LEVEL'],
    ['DATABSE_URL', 'DATABASE_URL'],
    ['REDIS_URI', 'REDIS_URL'],
    ['MAX_BODY_SIZE', 'MAX_BODY_BYTES'], // a prefix the settings use, then an unknown name
    ['DATABASE_HOST', 'DATABASE_URL'],
    ['ADMIN_HOSTNAME', 'ADMIN_HOST'],
    ['TWILIO_TOKEN', 'TWILIO_AUTH_TOKEN'],
    ['SHADOW_TARGET', 'SHADOW_URL'],
    ['REDIS_PORT', 'REDIS_URL'], // a port, not a Kubernetes link (whose value is tcp://...)
  ])('%s: did you mean %s?', (name, setting) => {
    expect(meant(name, '6379')).toEqual([`${name} is not a setting and is ignored; did you mean ${setting}?`]);
  });

  test('one line per variable, in names only: a value is never shown', () => {
    const lines = warned({ DATABSE_URL: 'postgres://school:s3cret@db/students', SMS_GATEWY: 'http', PORT: '8080' });
    expect(lines).toEqual([
      'DATABSE_URL is not a setting and is ignored; did you mean DATABASE_URL?',
      'SMS_GATEWY is not a setting and is ignored; did you mean SMS_GATEWAY?',
    ]);
    expect(lines.join('\n')).not.toContain('s3cret');
  });

  test('every setting itself is taken as it is', () => {
    expect(warned(Object.fromEntries(SETTINGS.map((name) => [name, '1'])))).toEqual([]);
  });

  test("the machine's other variables are never taken for settings", () => {
    const common = [
      // the shell, the login, the locale
      ...[
        'PATH',
        'HOME',
        'HOSTNAME',
        'HOSTTYPE',
        'PWD',
        'OLDPWD',
        'TERM',
        'TERM_PROGRAM',
        'COLORTERM',
        'LANG',
        'LANGUAGE',
        'SHELL',
        'USER',
        'LOGNAME',
        'SHLVL',
      ],
      ...[
        'TZ',
        'TMPDIR',
        'TEMP',
        'TMP',
        'EDITOR',
        'PAGER',
        'MAIL',
        'DISPLAY',
        'LS_COLORS',
        '_',
        'LC_ALL',
        'LC_CTYPE',
        'XDG_RUNTIME_DIR',
        'SSH_AUTH_SOCK',
      ],
      // node, npm and the tests
      ...[
        'NODE_ENV',
        'NODE_OPTIONS',
        'NODE_EXTRA_CA_CERTS',
        'NODE_PATH',
        'NODE_PORT',
        'INIT_CWD',
        'npm_lifecycle_event',
        'npm_config_port',
        'npm_package_name',
      ],
      ...['JEST_WORKER_ID', 'CI', 'DEBUG', 'FORCE_COLOR', 'NO_COLOR', 'UV_THREADPOOL_SIZE', 'COREPACK_ENABLE_STRICT', 'ASMX_SHADOW_COPIER'],
      // systemd, containers, proxies
      ...[
        'INVOCATION_ID',
        'JOURNAL_STREAM',
        'NOTIFY_SOCKET',
        'LISTEN_PID',
        'LISTEN_FDS',
        'MANAGERPID',
        'SYSTEMD_EXEC_PID',
        'RUNTIME_DIRECTORY',
        'STATE_DIRECTORY',
      ],
      ...['CREDENTIALS_DIRECTORY', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'KUBERNETES_PORT', 'CONTAINER_NAME', 'container'],
      ...[
        'HTTP_PROXY',
        'HTTPS_PROXY',
        'NO_PROXY',
        'http_proxy',
        'https_proxy',
        'no_proxy',
        'SSL_CERT_FILE',
        'SSL_CERT_DIR',
        'CURL_CA_BUNDLE',
      ],
      // other tools' hosts and ports (DB_PORT is not PORT, HOSTNAME not HOST) and PostgreSQL's own variables
      ...[
        'DB_HOST',
        'DB_PORT',
        'APP_PORT',
        'HTTP_PORT',
        'SERVER_PORT',
        'API_HOST',
        'BASE_URL',
        'PUBLIC_PATH',
        'DATA_DIR',
        'LOG_FILE',
        'LOG_FORMAT',
      ],
      ...[
        'PGHOST',
        'PGPORT',
        'PGUSER',
        'PGPASSWORD',
        'PGDATABASE',
        'PGSSLMODE',
        'REDISCLI_AUTH',
        'SQLITE_TMPDIR',
        'JAVA_HOME',
        'GOPATH',
        'WORKDIR',
      ],
    ];
    expect(warned(Object.fromEntries(common.map((name) => [name, '1'])))).toEqual([]);
  });

  test('the variables Kubernetes and Docker links inject for a service named like a prefix are left alone', () => {
    const links = {
      REDIS_PORT: 'tcp://10.0.0.7:6379',
      REDIS_SERVICE_HOST: '10.0.0.7',
      REDIS_SERVICE_PORT: '6379',
      REDIS_SERVICE_PORT_REDIS: '6379',
      REDIS_PORT_6379_TCP: 'tcp://10.0.0.7:6379',
      REDIS_PORT_6379_TCP_PROTO: 'tcp',
      REDIS_PORT_6379_TCP_PORT: '6379',
      REDIS_PORT_6379_TCP_ADDR: '10.0.0.7',
      SMS_GATEWAY_SERVICE_HOST: '10.0.0.8',
      SMS_GATEWAY_PORT: 'tcp://10.0.0.8:80',
    };
    expect(warned(links)).toEqual([]);
  });

  test('a swap of two neighbours is one edit', () => {
    expect(editDistance('PROT', 'PORT')).toBe(1);
    expect(editDistance('HOME', 'HOST')).toBe(2);
    expect(editDistance('', 'PORT')).toBe(4);
    expect(editDistance('SHADOW_SAMPEL', 'SHADOW_SAMPLE')).toBe(1);
  });
});

describe('the settings read, at start', () => {
  test('the start line names the settings the environment gave, never a value', () => {
    const config = loadConfig({
      PORT: '9000',
      DATABASE_URL: 'postgres://school:s3cret@db/students',
      PROTOCOLS: 'HttpSoap',
      PROTOCOL: 'HttpSoap',
      npm_lifecycle_event: 'start',
    });
    expect(config.settingsRead).toEqual(['PORT', 'DATABASE_URL', 'PROTOCOLS']);
    const line = startLine(config, 9000, { students: 1, devices: 1 }, 1);
    expect(line).toMatch(/; settings read: PORT, DATABASE_URL, PROTOCOLS$/);
    expect(line).not.toContain('s3cret');
    expect(startLine(loadConfig({}), 8080, { students: 1, devices: 1 }, 1)).toMatch(/; every setting at its default$/);
  });
});

const service = servicesPerTest();

describe('the service as built', () => {
  const typos = { PROTOCOL: 'HttpSoap', SMS_GATEWY: 'http' };
  const expected = [
    'warning: PROTOCOL is not a setting and is ignored; did you mean PROTOCOLS?',
    'warning: SMS_GATEWY is not a setting and is ignored; did you mean SMS_GATEWAY?',
  ];
  const startOf = (s: Service) => s.lines.find((l) => l.msg.startsWith('listening on '))!.msg;

  test('the warnings come first, once each, and the start line names the settings read', async () => {
    const s = await service({ env: typos });
    expect(s.text).toEqual(expected);
    expect(s.raw.slice(0, 2)).toEqual(expected);
    expect(startOf(s)).toMatch(/; settings read: PORT, HOST, SQLITE_PATH, LOG_LEVEL, ADMIN_PORT$/);
  });

  test('WORKERS=2: said once, by the primary, not again by each worker', async () => {
    const s = await service({ env: { ...typos, WORKERS: '2' } });
    expect(startOf(s)).toMatch(/ in 2 worker processes; .*; settings read: PORT, HOST, SQLITE_PATH, LOG_LEVEL, ADMIN_PORT, WORKERS$/);
    expect(s.text).toEqual(expected);
  });

  test('a warning comes before the refusal of another value', async () => {
    const s = await service({ env: { SMS_GATEWY: 'http', PORT: 'eighty' }, waitListening: false });
    expect((await s.exited).code).toBe(1);
    await new Promise<void>((resolve) => (s.proc.stderr!.closed ? resolve() : s.proc.stderr!.once('close', () => resolve())));
    expect(s.raw).toEqual([expected[1], 'error: PORT must be a whole number from 0 to 65535, got "eighty"']);
  });
});

describe('the operator commands', () => {
  test('import and outbox say the same warnings before their work (a misspelt DATABASE_URL would use SQLite)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-warnings-'));
    try {
      const env = { SQLITE_PATH: path.join(dir, 'data', 'x.db'), DATABSE_URL: 'postgres://school:s3cret@db/students' };
      const line = 'warning: DATABSE_URL is not a setting and is ignored; did you mean DATABASE_URL?';
      for (const run of [
        (err: string[]) => importMain(['--demo'], { out: () => undefined, err: (l) => err.push(l), env, cwd: dir }),
        (err: string[]) => outboxMain(['--list'], { out: () => undefined, err: (l) => err.push(l), env }),
      ]) {
        const err: string[] = [];
        expect(await run(err)).toBe(0);
        expect(err).toEqual([line]);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Issue 40, point 2: a `.env` line that sets nothing although it is neither blank nor a comment is
 * warned about with its line number (Node's parser skips `PORT 19215` and `SMS_GATEWAY: log` without
 * a word), and so is a line read otherwise than it looks (a quote left open swallows the settings
 * after it). The values are Node's parser's own (util.parseEnv), as dotenv reads them.
 */
describe('.env lines', () => {
  const lines = (...l: string[]) => l.join('\n');

  test('every form the parser reads is taken without a word: export, quotes, comments, a value over several lines, CRLF', () => {
    const text = lines(
      '# the service',
      '',
      '   # indented comment',
      'export PORT=9000',
      'HOST = 127.0.0.1 # loopback',
      "XML_NAMESPACE='urn:school:v1'",
      'BASE_PATH="/StudentService"',
      'PUBLIC_URL=`https://school.example/StudentService`',
      'SMS_HTTP_HEADERS="X-Key: a=b',
      'X-Other: c"',
      'LOG_LEVEL=',
    );
    for (const t of [text, text.replace(/\n/g, '\r\n')]) {
      expect(envFileWarnings(t, '.env')).toEqual([]);
      expect(parseEnv(t)).toMatchObject({
        PORT: '9000',
        HOST: '127.0.0.1',
        XML_NAMESPACE: 'urn:school:v1',
        BASE_PATH: '/StudentService',
        SMS_HTTP_HEADERS: 'X-Key: a=b\nX-Other: c',
      });
    }
  });

  test('a line that sets nothing is named by its number, and by its first word when that is a setting', () => {
    const text = lines(
      'PORT 19215',
      'LOG_LEVEL warn',
      'SMS_GATEWAY: log',
      'export PROTOCOL HttpSoap',
      '[production]',
      'some words here',
      '=8080',
      'MY PORT=8080',
      'PORT 1 # not 8080=no',
    );
    // What Node's parser makes of it: nothing at all under those names.
    expect(Object.keys(parseEnv(text)).filter((k) => (SETTINGS as readonly string[]).includes(k))).toEqual([]);
    expect(envFileWarnings(text, '.env')).toEqual([
      '.env line 1 is ignored: no "=" after PORT (a setting is written PORT=value)',
      '.env line 2 is ignored: no "=" after LOG_LEVEL (a setting is written LOG_LEVEL=value)',
      '.env line 3 is ignored: no "=" after SMS_GATEWAY (a setting is written SMS_GATEWAY=value)',
      '.env line 4 is ignored: no "=" after PROTOCOL (did you mean PROTOCOLS=value?)',
      '.env line 5 is ignored: it is neither NAME=value, a comment (#) nor blank',
      '.env line 6 is ignored: it is neither NAME=value, a comment (#) nor blank',
      '.env line 7 is ignored: it has no name before "="',
      '.env line 8 is ignored: the name before "=" is not a variable name (letters, digits and _, not starting with a digit)',
      '.env line 9 is ignored: no "=" after PORT (a setting is written PORT=value)',
    ]);
  });

  test('a quote left open, and text after a closing quote, are said; no value is ever shown', () => {
    const text = lines(
      'TWILIO_AUTH_TOKEN="s3cret',
      'SMS_GATEWAY=twilio',
      'PORT="8080"',
      "SHADOW_URL='http://legacy' s3cret",
      "XML_NAMESPACE='urn:x",
      'PORT=9000',
      'TWILIO_FROM s3cret',
    );
    const warnings = envFileWarnings(text, '/srv/app/.env');
    expect(warnings).toEqual([
      '/srv/app/.env line 1: TWILIO_AUTH_TOKEN\'s value opens a " closed only on line 3, so lines 2, 3 are part of the value, not settings (a closing " missing?)',
      "/srv/app/.env line 4: the text after SHADOW_URL's closing ' is ignored",
      "/srv/app/.env line 5: XML_NAMESPACE's value opens a ' that is never closed, so the ' is read as part of the value",
      '/srv/app/.env line 7 is ignored: no "=" after TWILIO_FROM (a setting is written TWILIO_FROM=value)',
    ]);
    // As Node reads it: the token swallowed the gateway and the first PORT.
    expect(parseEnv(text)).toMatchObject({ TWILIO_AUTH_TOKEN: 's3cret\nSMS_GATEWAY=twilio\nPORT=', XML_NAMESPACE: "'urn:x", PORT: '9000' });
    expect(warnings.join('\n')).not.toContain('s3cret');
  });

  test('the service as built: the broken lines are warned about first, with their numbers, and the good lines apply (a BOM and CRLF too)', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-dotenv-'));
    try {
      const port = await freePort();
      const dotenv = lines(
        `export PORT=${port}`,
        '# written by hand',
        'PORT 19215',
        'LOG_LEVEL warn',
        'SMS_GATEWAY: log',
        "XML_NAMESPACE='urn:from-dotenv'",
        'PROTOCL=HttpSoap',
      );
      // Saved by Windows Notepad: a byte order mark first, CRLF line ends.
      fs.writeFileSync(path.join(cwd, '.env'), `\uFEFF${dotenv.replace(/\n/g, '\r\n')}\r\n`);
      const s = await service({ cwd, env: { PORT: undefined } });
      expect(s.port).toBe(port);
      expect(s.text).toEqual([
        'warning: .env line 3 is ignored: no "=" after PORT (a setting is written PORT=value)',
        'warning: .env line 4 is ignored: no "=" after LOG_LEVEL (a setting is written LOG_LEVEL=value)',
        'warning: .env line 5 is ignored: no "=" after SMS_GATEWAY (a setting is written SMS_GATEWAY=value)',
        'warning: PROTOCL is not a setting and is ignored; did you mean PROTOCOLS?',
      ]);
      expect((await request(port, '/AboutUs.asmx?wsdl')).body).toContain('targetNamespace="urn:from-dotenv"');
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
